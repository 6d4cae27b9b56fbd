import { levelOf, type SqlDialect } from "./sql_dialect.ts";

/** MySQL and MariaDB: `?` placeholders, `` `name` `` quoting, autocommit off in a transaction. */
export const MYSQL: SqlDialect = {
  name: "MySQL or MariaDB",
  systemOf: (location) => location.startsWith("mariadb:") ? "mariadb" : "mysql",
  defaultPort: 3306,
  file: false,
  // A DDL statement commits the transaction it is in: the runner holds none for a file.
  transactionalDdl: false,
  now: "CURRENT_TIMESTAMP(3)",
  ago: (ms) => `CURRENT_TIMESTAMP(3) - INTERVAL (${ms} * 1000) MICROSECOND`,
  // Prepared statements count parameters in 16 bits.
  maxParameters: 65535,
  bindsObjects: true,
  bindsArrayBuffer: true,
  bigintIs64Bits: false,
  stopsStatements: true,
  oneWriter: false,
  placeholder: () => "?",
  quote: (name) => `\`${name.replaceAll("`", "``")}\``,
  lacks: () => undefined,
  /**
   * The session leaves autocommit for the transaction's life (as Spring's setAutoCommit(false)):
   * once InnoDB rolled it back (a deadlock), a statement that still reached the server (one
   * queued beside the failed one) opens a transaction the final ROLLBACK ends, rather than
   * committing alone. A START TRANSACTION in autocommit would leave the session committing each
   * statement. The level is set for the next transaction alone (SET TRANSACTION, without
   * SESSION), so the session is back at its own level once this one ends, with nothing to reset.
   */
  begin(readOnly, isolation) {
    const level = levelOf(isolation);
    const begin = readOnly
      ? ["SET autocommit = 0", "START TRANSACTION READ ONLY"]
      : ["SET autocommit = 0"];
    return level === undefined ? begin : [`SET TRANSACTION ISOLATION LEVEL ${level}`, ...begin];
  },
  reset: () => ["SET autocommit = 1"],
  // ER_CHECKREAD: MariaDB's snapshot isolation refused a write to a row changed since the
  // transaction's snapshot, and rolled the transaction back ("try restarting transaction").
  isConflict: (code) => code === "ER_LOCK_DEADLOCK" || code === "ER_CHECKREAD",
  async endedAt(error, ask) {
    // InnoDB rolls back a statement stopped at its query timeout alone.
    if (error.reason !== "statement" && error.reason !== "conflict") return undefined;
    // A deadlock, or a write snapshot isolation refused: the transaction is rolled back.
    if (MYSQL.isConflict(error.code)) return true;
    // A lock wait timeout rolls back the statement alone, unless the server was started with
    // innodb_rollback_on_timeout: asked, since what it did is what holds.
    if (error.code === "ER_LOCK_WAIT_TIMEOUT") {
      const asked = await ask("SELECT @@innodb_rollback_on_timeout AS whole").then(
        (rows) => Number(rows[0]?.whole) !== 0,
        () => true,
      );
      return asked ? true : undefined;
    }
    return undefined;
  },
};
