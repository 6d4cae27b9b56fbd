import pg from "pg";
import { composeMasks, maskUrl, maskUrls, secretsMask } from "../../config/secrets_mask.ts";
import type { FileRecord } from "../driver.ts";
import type { Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import { openPool } from "../../sql/open_pool.ts";
import {
  addRunnerVersion,
  CodeError,
  DatabaseError,
  fileRecords,
  type LockHolder,
  pollServerLock,
  putRow,
  QueryError,
  RECORD_COLUMNS,
  recordRow,
  RUNNER_POOL,
  RUNNER_VERSION_COLUMN,
  runOnSession,
  ScriptError,
  type SqlBody,
  type SqlDatabase,
  type SqlRecord,
  type SqlSession,
} from "./sql_database.ts";

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
export class PostgresDatabase implements SqlDatabase {
  readonly kind = "postgres" as const;
  readonly transactionalDdl = true;
  queries = 0;
  readonly #datasource: Datasource;
  readonly #lockOption: string;
  readonly #applicationName: string;
  #pool: DataPool | undefined;
  #client: pg.PoolClient | undefined;
  #lockKey: string | undefined;

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
    this.#datasource = datasource;
    this.#lockOption = lockOption;
    this.#applicationName = `thaw ${command} ${identity.host} ${identity.pid}`.slice(0, 63);
  }

  async readRecords(table: string): Promise<Map<string, FileRecord>> {
    if (!await this.#tableExists(table)) return new Map();
    return fileRecords(await this.#query<Record<string, unknown>>(`SELECT * FROM "${table}"`));
  }

  async #tableExists(table: string): Promise<boolean> {
    // Quoted as CREATE TABLE quotes it: unquoted, to_regclass folds Audit_Migrations to lower case
    // and never finds the table, which the next run then fails to create again.
    const [{ t }] = await this.#query<{ t: string | null }>(
      "SELECT to_regclass(quote_ident($1)) AS t",
      [table],
    );
    return t !== null;
  }

  async lock(
    table: string,
    timeoutMs: number,
    onWait: (holder: string) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const key = await lockKey(table);
    await pollServerLock(
      async () =>
        (await this.#query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock($1::bigint) AS locked",
          [key],
        ))[0].locked,
      () => this.#holder(key),
      {
        datasource: this.#datasource.name,
        timeoutMs,
        option: this.#lockOption,
        onWait,
        ...(signal === undefined ? {} : { signal }),
      },
    );
    this.#lockKey = key;
    // Looked for first: CREATE TABLE IF NOT EXISTS needs CREATE on the schema even where the table
    // is there, which a deploy user that only writes rows lacks (PostgreSQL 15 grants it to none).
    if (!await this.#tableExists(table)) {
      await this.#query(`CREATE TABLE IF NOT EXISTS "${table}" (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      migration_path VARCHAR(1024) NOT NULL UNIQUE,
      content_hash CHAR(64) NOT NULL,
      executed_at TIMESTAMPTZ NOT NULL,
      executed_by VARCHAR(255) NOT NULL,
      execution_ms INTEGER NOT NULL,
      ${RUNNER_VERSION_COLUMN} VARCHAR(64)
    )`);
    }
    // A table an earlier version made lacks the column. Looked for first: ALTER TABLE takes an
    // exclusive lock on the table, and needs its owner, even where IF NOT EXISTS then does nothing.
    const [{ found }] = await this.#query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(quote_ident($1))
         AND attname = $2 AND NOT attisdropped) AS found`,
      [table, RUNNER_VERSION_COLUMN],
    );
    if (!found) {
      await addRunnerVersion(
        table,
        `ALTER TABLE "${table}" ADD COLUMN IF NOT EXISTS ${RUNNER_VERSION_COLUMN} VARCHAR(64)`,
        (sql) => this.#query(sql),
      );
    }
  }

  async unlock(): Promise<void> {
    if (this.#lockKey === undefined) return;
    await this.#query("SELECT pg_advisory_unlock($1::bigint)", [this.#lockKey]);
    this.#lockKey = undefined;
  }

  async runFile(
    table: string,
    steps: readonly SqlBody[],
    record: SqlRecord | undefined,
    _once?: boolean,
    undoRecords: readonly string[] = [],
  ): Promise<number> {
    const client = await this.#connect();
    await this.#query("BEGIN");
    try {
      for (const [step, body] of steps.entries()) {
        if ("script" in body) await this.#runScript(client, body.script, step);
        else await this.#runCode(client, body.code, step);
      }
      if (record === undefined) {
        await this.#query("COMMIT");
        return 0;
      }
      const row = recordRow(record);
      // A file applied again (repeatable) replaces its record.
      await this.#query(
        `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (migration_path) DO UPDATE SET content_hash = EXCLUDED.content_hash,
            executed_at = EXCLUDED.executed_at, executed_by = EXCLUDED.executed_by,
            execution_ms = EXCLUDED.execution_ms, runner_version = EXCLUDED.runner_version`,
        row,
      );
      // A version applied again: its undo records go with the same commit.
      for (const undone of undoRecords) {
        await this.#query(`DELETE FROM "${table}" WHERE migration_path = $1`, [undone]);
      }
      await this.#query("COMMIT");
      return row[4];
    } catch (error) {
      await this.#query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  #runScript(client: pg.PoolClient, text: string, step: number): Promise<void> {
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
  async #runCode(
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
    await this.#query(
      `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (migration_path) DO UPDATE SET content_hash = EXCLUDED.content_hash,
          executed_at = EXCLUDED.executed_at, executed_by = EXCLUDED.executed_by,
          runner_version = EXCLUDED.runner_version`,
      putRow(record),
    );
  }

  async deleteRecord(table: string, path: string): Promise<boolean> {
    // RETURNING: #query gives rows, not the number of rows changed.
    const rows = await this.#query(
      `DELETE FROM "${table}" WHERE migration_path = $1 RETURNING 1`,
      [path],
    );
    return rows.length > 0;
  }

  async close(): Promise<void> {
    const [client, pool] = [this.#client, this.#pool];
    [this.#client, this.#pool] = [undefined, undefined];
    await client?.end().catch(() => {});
    client?.release(true);
    await pool?.close();
  }

  async #holder(key: string): Promise<LockHolder> {
    const rows = await this.#query<{ application_name: string; pid: number; addr: string | null }>(
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

  // The pool's client itself: its statements bound by none of the pool's timeouts.
  async #connect(): Promise<pg.PoolClient> {
    if (this.#client) return this.#client;
    const d = this.#datasource;
    this.#pool ??= await openPool(d, RUNNER_POOL, { applicationName: this.#applicationName });
    let client: pg.PoolClient;
    try {
      client = await (this.#pool.native as pg.Pool).connect();
    } catch (error) {
      // The driver's text may quote the connection settings: masked, the password too.
      throw new DatabaseError(
        `cannot connect to ${maskUrl(d.location)}: ${describe(error as PgError, [d.password])}`,
        { cause: error },
      );
    }
    // An error on an idle connection (the server went away) surfaces on the next query instead.
    client.on("error", () => {});
    await watchClient(client);
    this.#client = client;
    return client;
  }

  async #query<R>(text: string, values?: unknown[]): Promise<R[]> {
    const client = await this.#connect();
    this.queries++;
    try {
      return (await client.query(text, values)).rows as R[];
    } catch (error) {
      throw new DatabaseError(describe(error as PgError), { cause: error });
    }
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
