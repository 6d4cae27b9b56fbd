// The isolation levels a transaction may ask of its database (Spring's names): a type of the
// SQL layer, since each database's dialect says which it has.

/**
 * The isolation level a transaction begins at (Spring's `Isolation`):
 * - `DEFAULT`: the database's own (PostgreSQL's `READ COMMITTED`, InnoDB's `REPEATABLE READ`,
 *   SQLite's `SERIALIZABLE`), with no statement sent for it;
 * - `READ_UNCOMMITTED`, `READ_COMMITTED`, `REPEATABLE_READ`, `SERIALIZABLE`: the SQL levels.
 *   SQLite has only `SERIALIZABLE` (what its transactions are); the others are refused there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Isolation } from "@thaw/thaw/data";
 *
 * const options = { isolation: Isolation.SERIALIZABLE };
 * assert.equal(options.isolation, "SERIALIZABLE");
 * ```
 */
export type Isolation =
  | "DEFAULT"
  | "READ_UNCOMMITTED"
  | "READ_COMMITTED"
  | "REPEATABLE_READ"
  | "SERIALIZABLE";

/** The isolation levels by name, as Spring's enum spells them: `Isolation.SERIALIZABLE`. */
export const Isolation: { readonly [I in Isolation]: I } = Object.freeze({
  DEFAULT: "DEFAULT",
  READ_UNCOMMITTED: "READ_UNCOMMITTED",
  READ_COMMITTED: "READ_COMMITTED",
  REPEATABLE_READ: "REPEATABLE_READ",
  SERIALIZABLE: "SERIALIZABLE",
});
