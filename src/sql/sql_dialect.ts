// What each database does its own way with a statement and a transaction, one object per
// database (postgres_dialect.ts, ...; dialects.ts looks one up): asked instead of its kind.
import type { DataError } from "./data_error.ts";
import type { Isolation } from "./isolation.ts";

/** The databases the SQL layer speaks to. */
export type DatabaseKind = "sqlite" | "postgres" | "mysql";

/** One database's statement-level rules: placeholders, quoting, binding, transactions. */
export interface SqlDialect {
  /** Its name in messages and the health details: `PostgreSQL`, `MySQL or MariaDB`, `SQLite`. */
  readonly name: string;
  /** OpenTelemetry's `db.system.name` of a datasource at `location` (MariaDB's by its scheme). */
  systemOf(location: string): string;
  /** The port of a URL that names none; none for a database that is a file. */
  readonly defaultPort: number | undefined;
  /** Whether the database is a file: its location a path, with no credentials in it to mask. */
  readonly file: boolean;
  /** Whether its DDL runs in a transaction, so that a migration file commits or rolls back whole. */
  readonly transactionalDdl: boolean;
  /** The time now, to the millisecond, as the tables Thaw makes store it (their `created_at`). */
  readonly now: string;
  /** The time `ms` milliseconds before {@linkcode now}, `ms` a placeholder or a number. */
  ago(ms: string): string;
  /** The most parameters one statement binds. */
  readonly maxParameters: number;
  /** Whether its driver binds objects and arrays (as their JSON; an array's items one by one). */
  readonly bindsObjects: boolean;
  /** Whether its driver binds an `ArrayBuffer`'s bytes (pg stores `{}`). */
  readonly bindsArrayBuffer: boolean;
  /** Whether a bigint must fit in 64 bits to be bound. */
  readonly bigintIs64Bits: boolean;
  /** Whether a statement can be stopped at a query timeout (SQLite cannot stop one it runs). */
  readonly stopsStatements: boolean;
  /**
   * Whether one connection writes at a time (SQLite): a write transaction holds the database's
   * one writer, so no other connection writes before it ends.
   */
  readonly oneWriter: boolean;
  /** The placeholder of the `n`th parameter, from 1: `$1` or `?`. */
  placeholder(n: number): string;
  /** One name quoted for the SQL text, the quote character inside it doubled. */
  quote(name: string): string;
  /** Why it lacks `isolation`, said after its name in a message; `undefined` when it has it. */
  lacks(isolation: Isolation): string | undefined;
  /** The statements that begin a transaction (at the database's own level when `DEFAULT`). */
  begin(readOnly: boolean, isolation: Isolation | undefined): string[];
  /** What puts a session back as the pool hands it out, once the transaction ended. */
  reset(readOnly: boolean): string[];
  /** Whether error `code` is a conflict with a concurrent transaction, which a retry may clear. */
  isConflict(code: string | undefined): boolean;
  /**
   * Whether it ended the transaction at `error`: `true` rolled back whole, `false` aborted until
   * a rollback, `undefined` not (the statement alone failed). `ask` runs a query on its connection.
   */
  endedAt(
    error: DataError,
    ask: (text: string) => Promise<readonly Record<string, unknown>[]>,
  ): Promise<boolean | undefined>;
}

/** A level to set, as SQL spells it (`REPEATABLE READ`); `undefined` for the database's own. */
export function levelOf(isolation: Isolation | undefined): string | undefined {
  return isolation === undefined || isolation === "DEFAULT"
    ? undefined
    : isolation.replace("_", " ");
}
