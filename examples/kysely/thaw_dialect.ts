// Kysely, the typed query builder, over a datasource of `data()`: its queries run through the
// datasource's SqlClient, so they share its pool and, inside `@Transactional` or
// `sql.transaction()`, its transaction; `.stream()` reads through `sql.unsafeStream`. docs/data.md shows this file; tests/examples/kysely_test.ts
// runs it on SQLite, PostgreSQL and MariaDB.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type { SqlClient } from "../../data.ts";

const DIALECTS = {
  postgres: [PostgresAdapter, PostgresQueryCompiler, PostgresIntrospector],
  mysql: [MysqlAdapter, MysqlQueryCompiler, MysqlIntrospector],
  sqlite: [SqliteAdapter, SqliteQueryCompiler, SqliteIntrospector],
} as const;

/** A Kysely dialect whose queries run on `sql`: `new Kysely<DB>({ dialect: thawDialect(sql) })`. */
export function thawDialect(sql: SqlClient): Dialect {
  const [Adapter, Compiler, Introspector] = DIALECTS[sql.kind];
  return {
    createAdapter: () => new Adapter(),
    createDriver: () => new ThawDriver(sql),
    createQueryCompiler: () => new Compiler(),
    createIntrospector: (db) => new Introspector(db),
  };
}

// Kysely's own transactions would hold a connection Thaw does not know: Thaw's are the ones.
const OWN_TRANSACTIONS = "Kysely's transactions are Thaw's here: use @Transactional or " +
  "sql.transaction(), and Kysely's queries inside run in them";

class ThawDriver implements Driver {
  readonly #connection: DatabaseConnection;

  constructor(sql: SqlClient) {
    this.#connection = {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        const { rows, rowsAffected, lastInsertId } = await sql.unsafe<R>(
          query.sql,
          query.parameters,
        );
        return {
          rows,
          numAffectedRows: BigInt(rowsAffected),
          ...(lastInsertId === undefined ? {} : { insertId: BigInt(lastInsertId) }),
        };
      },
      // Kysely's `.stream(chunkSize)`: the rows of sql.unsafeStream, a chunk at a time. The
      // database reads them a batch at a time whatever the chunk size.
      async *streamQuery<R>(
        query: CompiledQuery,
        chunkSize = 100,
      ): AsyncIterableIterator<QueryResult<R>> {
        let rows: R[] = [];
        for await (const row of sql.unsafeStream<R>(query.sql, query.parameters)) {
          rows.push(row);
          if (rows.length >= chunkSize) {
            yield { rows };
            rows = [];
          }
        }
        if (rows.length > 0) yield { rows };
      },
    };
  }

  async init(): Promise<void> {}
  // Each query takes its own connection from the pool, or the transaction's: nothing is held.
  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(this.#connection);
  }
  beginTransaction(): Promise<void> {
    return Promise.reject(new Error(OWN_TRANSACTIONS));
  }
  commitTransaction(): Promise<void> {
    return Promise.reject(new Error(OWN_TRANSACTIONS));
  }
  rollbackTransaction(): Promise<void> {
    return Promise.reject(new Error(OWN_TRANSACTIONS));
  }
  async releaseConnection(): Promise<void> {}
  // The pool is the app's, closed with it.
  async destroy(): Promise<void> {}
}
