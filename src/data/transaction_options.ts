// What a transaction is asked to be (Spring's `@Transactional` attributes), checked once where it is declared, and the rule that says whether an error rolls it
// back. Pure: nothing here runs a statement.
import { Isolation } from "../sql/isolation.ts";
import { checkOptionsObject } from "../options_object.ts";
import { shownValue } from "../shown_value.ts";

export { Isolation };

/**
 * How a transactional call relates to the transaction it is called in (Spring's `Propagation`):
 * - `REQUIRED` (the default): joins it, or begins one when there is none;
 * - `REQUIRES_NEW`: begins its own, on another connection, the caller's suspended meanwhile;
 * - `MANDATORY`: joins it; fails when there is none;
 * - `NEVER`: runs outside any; fails when there is one;
 * - `SUPPORTS`: joins it when there is one, else runs outside any;
 * - `NOT_SUPPORTED`: runs outside any, the caller's suspended meanwhile;
 * - `NESTED`: a savepoint in it, rolled back alone on failure; begins one when there is none.
 */
export type Propagation =
  | "REQUIRED"
  | "REQUIRES_NEW"
  | "MANDATORY"
  | "NEVER"
  | "SUPPORTS"
  | "NOT_SUPPORTED"
  | "NESTED";

/** The propagations by name, as Spring's enum spells them: `Propagation.REQUIRES_NEW`. */
export const Propagation: { readonly [P in Propagation]: P } = Object.freeze({
  REQUIRED: "REQUIRED",
  REQUIRES_NEW: "REQUIRES_NEW",
  MANDATORY: "MANDATORY",
  NEVER: "NEVER",
  SUPPORTS: "SUPPORTS",
  NOT_SUPPORTED: "NOT_SUPPORTED",
  NESTED: "NESTED",
});

/** An error class a rollback rule names. */
// deno-lint-ignore no-explicit-any -- an error class's constructor takes anything
export type ErrorClass = abstract new (...args: any[]) => Error;

/** What a transaction is asked to be. Every field has Spring's default. */
export interface TransactionOptions {
  /** How it relates to the transaction it is called in; `REQUIRED` by default. */
  readonly propagation?: Propagation | undefined;
  /**
   * Refuses writes where the database can (PostgreSQL's and MySQL's read-only transactions,
   * SQLite's `query_only`). Only a transaction this call begins is made read-only: one it joins
   * stays as its beginner made it. A call without it cannot join a read-only transaction (Spring's
   * `validateExistingTransaction`): it is refused before it runs.
   */
  readonly readOnly?: boolean | undefined;
  /**
   * The isolation level of a transaction this call begins; `DEFAULT` (the database's own) by
   * default. A call that joins a transaction and asks a level other than `DEFAULT` is refused
   * unless the transaction was begun at that very level (Spring with
   * `validateExistingTransaction`). SQLite has only `SERIALIZABLE`.
   */
  readonly isolation?: Isolation | undefined;
  /**
   * Seconds the transaction may take from its beginning: a statement after that fails, and the
   * transaction rolls back. None by default.
   */
  readonly timeout?: number | undefined;
  /** Errors that roll back (the default: every error). */
  readonly rollbackFor?: readonly ErrorClass[] | undefined;
  /** Errors that commit the work done before them, then reach the caller all the same. */
  readonly noRollbackFor?: readonly ErrorClass[] | undefined;
}

const PROPAGATIONS: ReadonlySet<string> = new Set(Object.keys(Propagation));
const ISOLATIONS: ReadonlySet<string> = new Set(Object.keys(Isolation));
const KEYS: readonly string[] = [
  "propagation",
  "readOnly",
  "isolation",
  "timeout",
  "rollbackFor",
  "noRollbackFor",
];

/**
 * `options` checked: a `TypeError` naming `where` (`@Transactional on UserService.save`) and the
 * option for an unknown key or a value of the wrong kind. `extra`: keys a caller takes besides.
 */
export function checkTransactionOptions(
  options: unknown,
  where: string,
  extra: readonly string[] = [],
): TransactionOptions {
  if (options === undefined) return {};
  // sql.transaction() checks its options at each call: no list is made where none is added.
  checkOptionsObject(options, where, extra.length === 0 ? KEYS : [...extra, ...KEYS]);
  const { propagation, readOnly, isolation, timeout, rollbackFor, noRollbackFor } = options;
  if (propagation !== undefined && !PROPAGATIONS.has(propagation as string)) {
    throw new TypeError(
      `${where}: propagation ${JSON.stringify(propagation)} is none of ${
        [...PROPAGATIONS].join(", ")
      }`,
    );
  }
  if (isolation !== undefined && !ISOLATIONS.has(isolation as string)) {
    throw new TypeError(
      `${where}: isolation ${JSON.stringify(isolation)} is none of ${[...ISOLATIONS].join(", ")}`,
    );
  }
  if (readOnly !== undefined && typeof readOnly !== "boolean") {
    throw new TypeError(`${where}: readOnly must be true or false, got ${shownValue(readOnly)}`);
  }
  if (
    timeout !== undefined &&
    (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0)
  ) {
    throw new TypeError(`${where}: timeout is in seconds, above 0; got ${shownValue(timeout)}`);
  }
  for (const [name, list] of [["rollbackFor", rollbackFor], ["noRollbackFor", noRollbackFor]]) {
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((c) => typeof c !== "function")) {
      throw new TypeError(`${where}: ${name} must be a list of error classes ([ConflictError])`);
    }
  }
  return options as TransactionOptions;
}

/**
 * Whether `error` rolls the transaction back: the rule naming the class nearest to the error's
 * own wins (Spring's), `rollbackFor` on a tie; an error no rule names rolls back.
 */
export function rollsBack(options: TransactionOptions, error: unknown): boolean {
  const commit = distance(error, options.noRollbackFor);
  if (commit === undefined) return true;
  const rollback = distance(error, options.rollbackFor);
  return rollback !== undefined && rollback <= commit;
}

// How many steps up its prototype chain `error` meets one of `classes`; undefined: never.
function distance(error: unknown, classes: readonly ErrorClass[] | undefined): number | undefined {
  if (classes === undefined || (typeof error !== "object" && typeof error !== "function")) {
    return undefined;
  }
  let steps = 0;
  for (let p = Object.getPrototypeOf(error); p !== null; p = Object.getPrototypeOf(p), steps++) {
    if (classes.some((c) => c.prototype === p)) return steps;
  }
  return undefined;
}
