import type mysql from "mysql2";
import type { Datasource } from "../../sql/datasource.ts";
import type { DataPool } from "../../sql/data_pool.ts";
import { RECORD_COLUMNS, RUNNER_VERSION_COLUMN, ScriptError } from "./sql_database.ts";
import type { RecordRow, SqlSession } from "./sql_database.ts";
import { ServerDatabase, type ServerLock } from "./server_database.ts";

interface MysqlError extends Error {
  code?: string;
}

/**
 * MySQL and MariaDB through `mysql2`: one connection with multi-statement queries (the server
 * splits a file); the lock is `GET_LOCK`, released when the connection ends. DDL commits
 * implicitly there, so a failing file may leave its earlier statements applied.
 */
export class MysqlDatabase extends ServerDatabase<mysql.PoolConnection> {
  readonly kind = "mysql" as const;
  readonly transactionalDdl = false;

  /** `lockOption`: how the caller names the lock timeout, for the message of a lock not taken. */
  constructor(datasource: Datasource, lockOption: string) {
    super(datasource, lockOption, {});
  }

  protected quoted(table: string): string {
    return `\`${table}\``;
  }

  protected async tableExists(table: string): Promise<boolean> {
    const [{ n }] = await this.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
      [table],
    );
    return Number(n) > 0;
  }

  protected createTable(table: string): string {
    return `CREATE TABLE IF NOT EXISTS \`${table}\` (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      migration_path VARCHAR(768) NOT NULL,
      content_hash CHAR(64) NOT NULL,
      executed_at DATETIME(3) NOT NULL,
      executed_by VARCHAR(255) NOT NULL,
      execution_ms INT NOT NULL,
      ${RUNNER_VERSION_COLUMN} VARCHAR(64) NULL,
      UNIQUE KEY uq_migration_path (migration_path)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }

  protected async hasVersionColumn(table: string): Promise<boolean> {
    const [{ n }] = await this.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
      [table, RUNNER_VERSION_COLUMN],
    );
    return Number(n) > 0;
  }

  protected addVersionColumn(table: string): string {
    return `ALTER TABLE \`${table}\` ADD COLUMN ${RUNNER_VERSION_COLUMN} VARCHAR(64) NULL`;
  }

  // Polled rather than one GET_LOCK(name, timeout): a server-side wait cannot be interrupted.
  protected async serverLock(table: string): Promise<ServerLock> {
    // Lock names are server-wide: the database's name keeps two databases apart.
    const [{ name }] = await this.query<{ name: string }>(
      "SELECT LEFT(CONCAT('thaw:', DATABASE(), '.', ?), 64) AS name",
      [table],
    );
    return {
      attempt: async () =>
        Number(
          (await this.query<{ got: number }>("SELECT GET_LOCK(?, 0) AS got", [name]))[0].got,
        ) === 1,
      holder: async () => {
        const [{ id }] = await this.query<{ id: number | null }>(
          "SELECT IS_USED_LOCK(?) AS id",
          [name],
        );
        return id === null
          ? { name: "another session" }
          : { name: `connection ${id}`, end: `KILL ${id}` };
      },
      release: async () => {
        await this.query("SELECT RELEASE_LOCK(?)", [name]);
      },
    };
  }

  protected runScript(connection: mysql.PoolConnection, text: string, step: number): Promise<void> {
    this.queries++;
    return new Promise<void>((resolve, reject) => {
      // Every completed statement reports its fields (undefined for a statement without rows)
      // once: their count says which statement failed.
      let completed = 0;
      connection.query(text)
        .on("fields", () => completed++)
        .on("error", (error: MysqlError) =>
          reject(
            new ScriptError(this.describe(error), { code: error.code, completed, step }, {
              cause: error,
            }),
          ))
        .on("end", () => resolve());
    });
  }

  // No transaction, as for a script: MySQL and MariaDB commit DDL implicitly, and the failure
  // says that what ran before it stays.
  protected override async runCode(
    connection: mysql.PoolConnection,
    code: (session: SqlSession) => Promise<void>,
    step: number,
  ): Promise<void> {
    // The runner holds no transaction here, so code may hold its own: one it left open ends with
    // its step, committed when the code returned, rolled back when it threw. Left open, it would
    // take the file's record in, and both would roll back when the connection closed.
    try {
      await super.runCode(connection, code, step);
    } catch (error) {
      await this.query("ROLLBACK").catch(() => {});
      throw error;
    }
    await this.query("COMMIT");
  }

  protected async writeRecord(table: string, row: RecordRow, ran: boolean): Promise<void> {
    const [, hash, executedAt, executedBy, ms, version] = row;
    // The new values given twice, not as VALUES(column): MySQL 8.0.20 deprecates that, and the
    // row alias it suggests instead is not MariaDB syntax.
    await this.query(
      `INSERT INTO \`${table}\` (${RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)
        ON DUPLICATE KEY UPDATE content_hash = ?, executed_at = ?, executed_by = ?,
          ${ran ? "execution_ms = ?, " : ""}runner_version = ?`,
      [...row, hash, executedAt, executedBy, ...(ran ? [ms] : []), version],
    );
  }

  async deleteRecord(table: string, path: string): Promise<boolean> {
    // A statement without rows answers mysql2's result header in place of the rows.
    const result = await this.query(
      `DELETE FROM \`${table}\` WHERE migration_path = ?`,
      [path],
    ) as unknown as { affectedRows: number };
    return result.affectedRows > 0;
  }

  protected take(pool: DataPool): Promise<mysql.PoolConnection> {
    return new Promise((resolve, reject) =>
      (pool.native as mysql.Pool).getConnection((error, connection) => {
        if (error) return reject(error);
        // A dropped connection surfaces on the next query instead.
        connection.on("error", () => {});
        resolve(connection);
      })
    );
  }

  // Given back, to end with its pool.
  protected end(connection: mysql.PoolConnection): Promise<void> {
    connection.release();
    return Promise.resolve();
  }

  protected send<R>(
    connection: mysql.PoolConnection,
    text: string,
    values?: unknown[],
  ): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) =>
      connection.query(text, values, (error, rows) => error ? reject(error) : resolve(rows as R[]))
    );
  }

  protected message(error: unknown): string {
    const { message, code } = error as MysqlError;
    return `${message || String(error)}${code ? ` (${code})` : ""}`;
  }
}
