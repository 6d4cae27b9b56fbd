import pg from "pg";
import { composeMasks, maskUrls, secretsMask } from "../../config/secrets_mask.ts";
import type { Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import {
  CodeError,
  type LockHolder,
  putRow,
  QueryError,
  RECORD_COLUMNS,
  recordRow,
  RUNNER_VERSION_COLUMN,
  runOnSession,
  ScriptError,
  type SqlBody,
  type SqlDatabase,
  type SqlRecord,
  type SqlSession,
} from "./sql_database.ts";
import { ServerDatabase, type ServerLock } from "./server_database.ts";

// `handleCommandComplete` is the per-statement hook of pg's Query (its protocol handlers are what
// submittables such as pg-cursor implement); the published types leave it out.
const QueryWithHooks = pg.Query as unknown as new (text: string) => pg.Query & {
  handleCommandComplete(message: unknown, connection: unknown): void;
};

// Counts the statements that completed, so a failure without a position still has a line.
class CountingQuery extends QueryWithHooks {
  completed = 0;

  override handleCommandComplete(message: unknown, connection: unknown): void {
    this.completed++;
    super.handleCommandComplete(message, connection);
  }
}

interface PgError extends Error {
  code?: string;
  position?: string;
  detail?: string;
  hint?: string;
}

/**
 * PostgreSQL through `pg`: one connection; a file is one simple-protocol query (the server runs
 * its statements in order) inside the runner's transaction; the lock is a session advisory lock,
 * so a runner that dies releases it with its connection.
 */
export class PostgresDatabase extends ServerDatabase<pg.PoolClient> implements SqlDatabase {
  readonly kind = "postgres" as const;
  readonly transactionalDdl = true;

  /**
   * `lockOption`: how the caller names the lock timeout, for the message of a lock not taken;
   * `command`: the command run, in the session's name a waiting runner is shown.
   */
  constructor(
    datasource: Datasource,
    identity: { host: string; pid: number },
    lockOption: string,
    command = "migrate",
  ) {
    super(datasource, lockOption, {
      applicationName: `thaw ${command} ${identity.host} ${identity.pid}`.slice(0, 63),
    });
  }

  protected quoted(table: string): string {
    return `"${table}"`;
  }

  protected async tableExists(table: string): Promise<boolean> {
    // Quoted as CREATE TABLE quotes it: unquoted, to_regclass folds Audit_Migrations to lower case
    // and never finds the table, which the next run then fails to create again.
    const [{ t }] = await this.query<{ t: string | null }>(
      "SELECT to_regclass(quote_ident($1)) AS t",
      [table],
    );
    return t !== null;
  }

  protected createTable(table: string): string {
    return `CREATE TABLE IF NOT EXISTS "${table}" (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      migration_path VARCHAR(1024) NOT NULL UNIQUE,
      content_hash CHAR(64) NOT NULL,
      executed_at TIMESTAMPTZ NOT NULL,
      executed_by VARCHAR(255) NOT NULL,
      execution_ms INTEGER NOT NULL,
      ${RUNNER_VERSION_COLUMN} VARCHAR(64)
    )`;
  }

  protected async hasVersionColumn(table: string): Promise<boolean> {
    const [{ found }] = await this.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(quote_ident($1))
         AND attname = $2 AND NOT attisdropped) AS found`,
      [table, RUNNER_VERSION_COLUMN],
    );
    return found;
  }

  protected addVersionColumn(table: string): string {
    return `ALTER TABLE "${table}" ADD COLUMN IF NOT EXISTS ${RUNNER_VERSION_COLUMN} VARCHAR(64)`;
  }

  protected async serverLock(table: string): Promise<ServerLock> {
    const key = await lockKey(table);
    return {
      attempt: async () =>
        (await this.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock($1::bigint) AS locked",
          [key],
        ))[0].locked,
      holder: () => this.#holder(key),
      release: async () => {
        await this.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
      },
    };
  }

  async runFile(
    table: string,
    steps: readonly SqlBody[],
    record: SqlRecord | undefined,
    _once?: boolean,
    undoRecords: readonly string[] = [],
  ): Promise<number> {
    const client = await this.connect();
    await this.query("BEGIN");
    try {
      await this.runSteps(client, steps);
      if (record === undefined) {
        await this.query("COMMIT");
        return 0;
      }
      const row = recordRow(record);
      // A file applied again (repeatable) replaces its record.
      await this.query(
        `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (migration_path) DO UPDATE SET content_hash = EXCLUDED.content_hash,
            executed_at = EXCLUDED.executed_at, executed_by = EXCLUDED.executed_by,
            execution_ms = EXCLUDED.execution_ms, runner_version = EXCLUDED.runner_version`,
        row,
      );
      // A version applied again: its undo records go with the same commit.
      for (const undone of undoRecords) {
        await this.query(`DELETE FROM "${table}" WHERE migration_path = $1`, [undone]);
      }
      await this.query("COMMIT");
      return row[4];
    } catch (error) {
      await this.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  protected runScript(client: pg.PoolClient, text: string, step: number): Promise<void> {
    const query = new CountingQuery(text);
    this.queries++;
    return new Promise<void>((resolve, reject) => {
      query.on("end", () => resolve());
      query.on("error", (error: PgError) =>
        reject(
          new ScriptError(describe(error), {
            code: error.code,
            position: error.position ? Number(error.position) : undefined,
            completed: query.completed,
            step,
          }, { cause: error }),
        ));
      client.query(query);
    });
  }

  // On the client that ran BEGIN: the code's rows commit or roll back with its record.
  protected async runCode(
    client: pg.PoolClient,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void> {
    const session: SqlSession = {
      query: async (text, params) => {
        this.queries++;
        try {
          return (await client.query(text, params as unknown[] | undefined)).rows;
        } catch (error) {
          const pgError = error as PgError;
          throw new QueryError(describe(pgError), pgError.code, { cause: error });
        }
      },
    };
    await runOnSession(code, session, step);
    // A failed query the code caught leaves the transaction aborted, and only the record's
    // INSERT would find it, failing with no file named: found here, it is the file's failure.
    try {
      this.queries += 2;
      await client.query("SAVEPOINT thaw_code");
      await client.query("RELEASE SAVEPOINT thaw_code");
    } catch (error) {
      throw new CodeError(
        new Error(
          `a query failed and the code went on (${describe(error as PgError)}): PostgreSQL ` +
            "aborts the transaction at a failed statement; undo a failure the code means to " +
            "survive with SAVEPOINT and ROLLBACK TO, or let it fail the file",
        ),
        step,
      );
    }
  }

  async putRecord(table: string, record: SqlRecord): Promise<void> {
    await this.query(
      `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (migration_path) DO UPDATE SET content_hash = EXCLUDED.content_hash,
          executed_at = EXCLUDED.executed_at, executed_by = EXCLUDED.executed_by,
          runner_version = EXCLUDED.runner_version`,
      putRow(record),
    );
  }

  async deleteRecord(table: string, path: string): Promise<boolean> {
    // RETURNING: query gives rows, not the number of rows changed.
    const rows = await this.query(
      `DELETE FROM "${table}" WHERE migration_path = $1 RETURNING 1`,
      [path],
    );
    return rows.length > 0;
  }

  async #holder(key: string): Promise<LockHolder> {
    const rows = await this.query<{ application_name: string; pid: number; addr: string | null }>(
      `SELECT a.application_name, a.pid, host(a.client_addr) AS addr
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = (($1::bigint >> 32) & 4294967295)::oid
          AND l.objid = ($1::bigint & 4294967295)::oid AND l.objsubid = 1`,
      [key],
    );
    const h = rows[0];
    if (h === undefined) return { name: "another session" };
    return {
      name: `"${h.application_name || "a session"}" (server pid ${h.pid}${
        h.addr ? `, from ${h.addr}` : ""
      })`,
      end: `SELECT pg_terminate_backend(${h.pid})`,
    };
  }

  protected async take(pool: DataPool): Promise<pg.PoolClient> {
    const client = await (pool.native as pg.Pool).connect();
    // An error on an idle connection (the server went away) surfaces on the next query instead.
    client.on("error", () => {});
    await watchClient(client);
    return client;
  }

  protected async end(client: pg.PoolClient): Promise<void> {
    await client.end().catch(() => {});
    client.release(true);
  }

  protected async send<R>(client: pg.PoolClient, text: string, values?: unknown[]): Promise<R[]> {
    return (await client.query(text, values)).rows as R[];
  }

  protected describe(error: unknown, secrets?: readonly (string | undefined)[]): string {
    return describe(error as PgError, secrets);
  }
}

/**
 * How often the server looks, during a statement, whether the runner is still connected. A runner
 * killed during a statement (SIGKILL, a lost node) otherwise leaves its session running that
 * statement to its end, holding the run's lock and its transaction's locks meanwhile.
 */
const CLIENT_CHECK_MS = 1000;

/**
 * Sets `client_connection_check_interval` for the session, where the server has it (PostgreSQL
 * 14 and later): read from `pg_settings` in the same statement, so an older server sets nothing.
 * Not counted as a query of the run: it is part of connecting. A server that refuses the value
 * (built for a platform that cannot tell a closed socket) leaves the session as it was.
 */
async function watchClient(client: pg.PoolClient): Promise<void> {
  await client.query(
    `SELECT set_config(name, '${CLIENT_CHECK_MS}', false) FROM pg_settings
      WHERE name = 'client_connection_check_interval'`,
  ).catch(() => {});
}

/** The driver's error for a message, with any URL credentials and the given secrets masked. */
function describe(error: PgError, secrets: readonly (string | undefined)[] = []): string {
  const code = error.code && /^[0-9A-Z]{5}$/.test(error.code) ? ` (SQLSTATE ${error.code})` : "";
  const text = [
    `${error.message || error.code || String(error)}${code}`,
    error.detail && `detail: ${error.detail}`,
    error.hint && `hint: ${error.hint}`,
  ].filter(Boolean).join("; ");
  return composeMasks(maskUrls, secretsMask(secrets))(text);
}

// One advisory-lock key per records table: the first 8 bytes of a SHA-256, as a signed bigint.
async function lockKey(table: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`thaw-migrations:${table}`),
  );
  return new DataView(digest).getBigInt64(0).toString();
}
