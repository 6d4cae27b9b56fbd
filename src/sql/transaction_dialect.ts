// What each database says to begin and end a transaction, which isolation levels it has, and
// which of its errors are conflicts with a concurrent transaction: the transactions' per-database
// part, in one place. Pure: nothing here runs a statement.
import type { DatabaseKind } from "./datasource.ts";
import type { Isolation } from "./isolation.ts";

const NAMES: Readonly<Record<DatabaseKind, string>> = {
  sqlite: "SQLite",
  postgres: "PostgreSQL",
  mysql: "MySQL or MariaDB",
};

// The levels as SQL spells them.
const LEVEL: Readonly<Record<Exclude<Isolation, "DEFAULT">, string>> = {
  READ_UNCOMMITTED: "READ UNCOMMITTED",
  READ_COMMITTED: "READ COMMITTED",
  REPEATABLE_READ: "REPEATABLE READ",
  SERIALIZABLE: "SERIALIZABLE",
};

// A level asked of SQLite that is what it has: its transactions are serializable. (PostgreSQL
// takes READ UNCOMMITTED and runs it as READ COMMITTED, as the standard allows: not refused.)
const SQLITE_HAS: ReadonlySet<Isolation> = new Set(["DEFAULT", "SERIALIZABLE"]);

/**
 * Refuses, with a `TypeError` naming `where` and the datasource, an isolation level the database
 * of `kind` does not have (as Spring refuses what a database lacks): on SQLite, any but
 * `SERIALIZABLE` and `DEFAULT`.
 */
export function checkIsolation(
  kind: DatabaseKind,
  datasource: string,
  isolation: Isolation | undefined,
  where: string,
): void {
  if (isolation === undefined || kind !== "sqlite" || SQLITE_HAS.has(isolation)) return;
  throw new TypeError(
    `${where}: isolation ${isolation} is not one datasource "${datasource}" (${
      NAMES[kind]
    }) has: its transactions are SERIALIZABLE; ask for SERIALIZABLE or DEFAULT`,
  );
}

/**
 * The statements that begin a transaction. SQLite's takes the write lock at once (IMMEDIATE): two
 * deferred ones that both go on to write would deadlock, one failing at once with BUSY. MySQL's
 * session leaves autocommit for the transaction's life (as Spring's setAutoCommit(false)): once
 * InnoDB rolled it back (a deadlock), a statement that still reached the server (one queued beside
 * the failed one) opens a transaction the final ROLLBACK ends, rather than committing alone. A
 * START TRANSACTION in autocommit would leave the session committing each statement. Its
 * isolation level is set for the next transaction alone (SET TRANSACTION, without SESSION), so
 * the session is back at its own level once this one ends, with nothing to reset. At `DEFAULT`,
 * no statement more than without an isolation.
 */
export function beginStatements(
  kind: DatabaseKind,
  readOnly: boolean,
  isolation: Isolation | undefined,
): string[] {
  const level = isolation === undefined || isolation === "DEFAULT" ? undefined : LEVEL[isolation];
  switch (kind) {
    case "postgres": {
      const begin = level === undefined ? "BEGIN" : `BEGIN ISOLATION LEVEL ${level}`;
      return [readOnly ? `${begin} READ ONLY` : begin];
    }
    case "mysql": {
      const begin = readOnly
        ? ["SET autocommit = 0", "START TRANSACTION READ ONLY"]
        : ["SET autocommit = 0"];
      return level === undefined ? begin : [`SET TRANSACTION ISOLATION LEVEL ${level}`, ...begin];
    }
    case "sqlite":
      return readOnly ? ["PRAGMA query_only = ON", "BEGIN"] : ["BEGIN IMMEDIATE"];
  }
}

/** What puts a session back as the pool hands it out, once the transaction ended. */
export function resetStatements(kind: DatabaseKind, readOnly: boolean): string[] {
  switch (kind) {
    case "postgres":
      return [];
    case "mysql":
      return ["SET autocommit = 1"];
    case "sqlite":
      return readOnly ? ["PRAGMA query_only = OFF"] : [];
  }
}

/**
 * Whether the database's error `code` is a conflict with a concurrent transaction, after which it
 * rolled the transaction back, and which running the whole transaction again may clear:
 * PostgreSQL's serialization failure (`40001`) and deadlock (`40P01`), InnoDB's deadlock and
 * MariaDB's snapshot isolation failure (`ER_CHECKREAD`).
 */
export function isConflict(kind: DatabaseKind, code: string | undefined): boolean {
  switch (kind) {
    case "postgres":
      return code === "40001" || code === "40P01";
    case "mysql":
      // ER_CHECKREAD: MariaDB's snapshot isolation refused a write to a row changed since the
      // transaction's snapshot, and rolled the transaction back ("try restarting transaction").
      return code === "ER_LOCK_DEADLOCK" || code === "ER_CHECKREAD";
    case "sqlite":
      return false;
  }
}
