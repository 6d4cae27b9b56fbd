import pg from "pg";
import type { Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import { CodeError, RECORD_COLUMNS, RUNNER_VERSION_COLUMN, ScriptError } from "./sql_database.ts";
import type { LockHolder, RecordRow, SqlSession } from "./sql_database.ts";
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
export class PostgresDatabase extends ServerDatabase<pg.PoolClient> {
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

  protected runScript(client: pg.PoolClient, text: string, step: number): Promise<void> {
    const query = new CountingQuery(text);
    this.queries++;
    return new Promise<void>((resolve, reject) => {
      query.on("end", () => resolve());
      query.on("error", (error: PgError) =>
        reject(
          new ScriptError(this.describe(error), {
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
  protected override async runCode(
    client: pg.PoolClient,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void> {
    await super.runCode(client, code, step);
    // A failed query the code caught leaves the transaction aborted, and only the record's
    // INSERT would find it, failing with no file named: found here, it is the file's failure.
    try {
      this.queries += 2;
      await client.query("SAVEPOINT thaw_code");
      await client.query("RELEASE SAVEPOINT thaw_code");
    } catch (error) {
      throw new CodeError(
        new Error(
          `a query failed and the code went on (${this.describe(error)}): PostgreSQL ` +
            "aborts the transaction at a failed statement; undo a failure the code means to " +
            "survive with SAVEPOINT and ROLLBACK TO, or let it fail the file",
        ),
        step,
      );
    }
  }

  protected async writeRecord(table: string, row: RecordRow, ran: boolean): Promise<void> {
    const measured = ran ? "execution_ms = EXCLUDED.execution_ms, " : "";
    await this.query(
      `INSERT INTO "${table}" (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (migration_path) DO UPDATE SET content_hash = EXCLUDED.content_hash,
          executed_at = EXCLUDED.executed_at, executed_by = EXCLUDED.executed_by,
          ${measured}runner_version = EXCLUDED.runner_version`,
      row,
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

  protected message(error: unknown): string {
    const { code, message, detail, hint } = error as PgError;
    return [
      `${message || code || String(error)}${
        code && /^[0-9A-Z]{5}$/.test(code) ? ` (SQLSTATE ${code})` : ""
      }`,
      detail && `detail: ${detail}`,
      hint && `hint: ${hint}`,
    ].filter(Boolean).join("; ");
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

// One advisory-lock key per records table: the first 8 bytes of a SHA-256, as a signed bigint.
async function lockKey(table: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`thaw-migrations:${table}`),
  );
  return new DataView(digest).getBigInt64(0).toString();
}
