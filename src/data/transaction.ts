// One transaction of one pool, from its BEGIN to its end: the connection it holds, what marked it
// for rollback, the work registered for its phases and the savepoint of the NESTED call in use.
// Its state changes only through its methods: the calls inside it (transactions.ts), its
// connection (transaction_connection.ts) and the scope its statements run in
// (transaction_scope.ts) ask rather than write.
import type { DataConnection, DataPool } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { DIALECTS } from "../sql/dialects.ts";
import type { Isolation, TransactionOptions } from "./transaction_options.ts";
import {
  type Aborted,
  type AbortState,
  type TransactionConnection,
  transactionConnection,
} from "./transaction_connection.ts";

/**
 * When a transactional event listener runs (Spring's `TransactionPhase`): just before the
 * transaction commits (inside it; a failure rolls it back), after it committed, after it rolled
 * back, or after either.
 */
export type TransactionPhase =
  | "BEFORE_COMMIT"
  | "AFTER_COMMIT"
  | "AFTER_ROLLBACK"
  | "AFTER_COMPLETION";

/** Work a transaction runs at one of its phases, in the order it was registered. */
export interface Synchronization {
  readonly phase: TransactionPhase;
  readonly run: () => Promise<void>;
}

/** A NESTED call's savepoint while it runs: its siblings wait for `done`. */
export interface Savepoint {
  readonly transaction: Transaction;
  /** The savepoint of the NESTED call it runs in, if any. */
  readonly parent: Savepoint | undefined;
  /** Its name in the transaction's SAVEPOINT statements. */
  readonly name: string;
  readonly done: Promise<void>;
}

/** A transaction's rollback mark at one moment: a savepoint rolled back to takes it back. */
export interface RollbackMark {
  readonly rollbackOnly: boolean;
  readonly doom: string | undefined;
}

/** What dooms a transaction that ran past its timeout, as its commit's refusal says. */
export const TIMED_OUT = "it ran past its timeout";

// A savepoint held by a NESTED call, which its leaving resolves.
class HeldSavepoint implements Savepoint {
  readonly transaction: Transaction;
  readonly parent: Savepoint | undefined;
  readonly name: string;
  readonly done: Promise<void>;
  readonly leave: () => void;

  constructor(transaction: Transaction, parent: Savepoint | undefined, name: string) {
    this.transaction = transaction;
    this.parent = parent;
    this.name = name;
    let leave = (): void => {};
    this.done = new Promise<void>((resolve) => leave = resolve);
    this.leave = leave;
  }
}

/** One transaction of one pool, as the calls inside it share it. */
export class Transaction implements AbortState {
  readonly pool: DataPool;
  /** Its connection as the calls inside it use it (transaction_connection.ts). */
  readonly connection: TransactionConnection;
  /** When it must have ended (`performance.now()`), if it has a timeout. */
  readonly deadline: number | undefined;
  /** The call that began it, as errors name it: `Billing.charge()`, `transaction()`. */
  readonly name: string;
  /** Begun read-only: a read-write call cannot join it. */
  readonly readOnly: boolean;
  /** The level it was begun at: a call asking another cannot join it. */
  readonly isolation: Isolation;
  // The pool's connection itself: its BEGIN, COMMIT or ROLLBACK and session resets.
  readonly #held: DataConnection;
  #doom: string | undefined = undefined;
  #savepoints = 0;
  #rollbackOnly = false;
  #ended = false;
  #aborted: Aborted | undefined = undefined;
  readonly #synchronizations: Synchronization[] = [];
  #activeSavepoint: HeldSavepoint | undefined = undefined;
  // The connection is in a state nobody knows: closed rather than given back to the pool.
  #broken = false;
  #givenBack = false;

  /**
   * A transaction of `pool` begun for the call `where`, as `options` ask, on a connection of its
   * own. The timeout counts from now: it bounds the wait for BEGIN's answer too.
   */
  static async begin(
    pool: DataPool,
    options: TransactionOptions,
    where: string,
  ): Promise<Transaction> {
    const connection = await pool.acquire();
    const readOnly = options.readOnly === true;
    const deadline = options.timeout === undefined
      ? undefined
      : performance.now() + options.timeout * 1000;
    try {
      for (const text of DIALECTS[pool.kind].begin(readOnly, options.isolation)) {
        await connection.control(text, deadline);
      }
    } catch (error) {
      connection.release(true);
      throw error;
    }
    return new Transaction(pool, connection, deadline, options, where);
  }

  private constructor(
    pool: DataPool,
    connection: DataConnection,
    deadline: number | undefined,
    options: TransactionOptions,
    where: string,
  ) {
    this.pool = pool;
    this.#held = connection;
    this.deadline = deadline;
    this.name = where;
    this.readOnly = options.readOnly === true;
    this.isolation = options.isolation ?? "DEFAULT";
    // It hears the failures after which the database ended the transaction itself.
    this.connection = transactionConnection(pool, connection, () => this);
  }

  /** What marked it for rollback first, as its commit's refusal says (`undefined`: unknown). */
  get doom(): string | undefined {
    return this.#doom;
  }

  /** A call inside it failed and asked for a rollback: the outer call cannot commit it. */
  get rollbackOnly(): boolean {
    return this.#rollbackOnly;
  }

  /** Committed or rolled back: a statement now is one that outlived it. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The failure at which the database ended it (a deadlock): a statement now is refused. */
  get aborted(): Aborted | undefined {
    return this.#aborted;
  }

  /** Dooms it: it rolls back. `doom` says why, where nothing said so before. */
  markRollbackOnly(doom?: string): void {
    this.#rollbackOnly = true;
    this.#doom ??= doom;
  }

  /** Dooms it if it ran past its timeout; says whether it did. */
  markIfTimedOut(): boolean {
    if (this.deadline === undefined || performance.now() <= this.deadline) return false;
    this.markRollbackOnly(TIMED_OUT);
    return true;
  }

  /** Its rollback mark now, for `restoreMark` once rolled back to a savepoint made now. */
  mark(): RollbackMark {
    return { rollbackOnly: this.#rollbackOnly, doom: this.#doom };
  }

  /** Rolled back to a savepoint: the mark is what it was then (Spring's rollbackToSavepoint). */
  restoreMark(mark: RollbackMark): void {
    this.#rollbackOnly = mark.rollbackOnly;
    this.#doom = mark.doom;
  }

  /** The database ended it at `aborted`: for good (InnoDB) dooms it. */
  abortAt(aborted: Aborted): void {
    this.#aborted = aborted;
    if (aborted.final) this.#rollbackOnly = true;
  }

  /** Rolled back to a savepoint on PostgreSQL: the abort is taken back with the failed work. */
  revive(): void {
    this.#aborted = undefined;
  }

  /** Work to run at `sync.phase` (a transactional event listener's), after that registered. */
  register(sync: Synchronization): void {
    this.#synchronizations.push(sync);
  }

  /** Runs the work registered for `phases`, in order; the first failure rejects. */
  async runPhases(phases: readonly TransactionPhase[]): Promise<void> {
    for (const { phase, run } of this.#synchronizations) {
      if (phases.includes(phase)) await run();
    }
  }

  /**
   * A savepoint for a NESTED call made in `enclosing` (the savepoint its caller runs in, if any),
   * once the one in use beside it is left: two side by side (Promise.all) would interleave their
   * statements on the one connection, and one's rollback would take the other's finished work.
   */
  async enterSavepoint(enclosing: Savepoint | undefined): Promise<Savepoint> {
    while (this.#activeSavepoint !== undefined && this.#activeSavepoint !== enclosing) {
      await this.#activeSavepoint.done;
    }
    const savepoint = new HeldSavepoint(this, enclosing, `thaw_savepoint_${++this.#savepoints}`);
    this.#activeSavepoint = savepoint;
    return savepoint;
  }

  /** The NESTED call of `savepoint` ended: the next beside it may begin. */
  leaveSavepoint(savepoint: Savepoint): void {
    this.#activeSavepoint = savepoint.parent as HeldSavepoint | undefined;
    (savepoint as HeldSavepoint).leave();
  }

  /** The call failed with `error`: one that says its connection died closes it. */
  failedWith(error: unknown): void {
    this.#broken ||= error instanceof DataError && error.reason === "connection" &&
      error.datasource === this.pool.name;
  }

  /**
   * Ends it: whatever the outcome, no statement runs on it after this, and its connection is
   * given back. The COMMIT or ROLLBACK waits for the statements sent before it to settle (one
   * beside a failure may still be on its way, and must not reach the server after the end);
   * which of the two is chosen once they settled (one may have ended the transaction on the
   * database, a deadlock, and a COMMIT then commits nothing): `how`, unless `doomed()` says it
   * must roll back. Resolves to the statement sent.
   */
  async end(
    how: "COMMIT" | "ROLLBACK",
    doomed: () => boolean,
  ): Promise<"COMMIT" | "ROLLBACK"> {
    this.#ended = true;
    try {
      await this.connection.settled();
      const chosen = doomed() ? "ROLLBACK" : how;
      await this.#control(chosen);
      return chosen;
    } finally {
      await this.giveBack();
    }
  }

  /**
   * Gives its connection back, once, with what the transaction set on the session put back for
   * the next user (SQLite's query_only, MySQL's autocommit); one that cannot be put back closes
   * it. Done before the after-phase listeners run: they may use the datasource, whose pool may
   * have no other connection (`:memory:` has one).
   */
  async giveBack(): Promise<void> {
    if (this.#givenBack) return;
    this.#givenBack = true;
    if (!this.#broken) {
      for (const text of DIALECTS[this.pool.kind].reset(this.readOnly)) {
        await this.#control(text).catch(() => this.#broken = true);
      }
    }
    this.#held.release(this.#broken);
  }

  // A transaction statement that fails leaves the connection in a state nobody knows: closed.
  // (A COMMIT PostgreSQL answered with ROLLBACK is known: the connection is fine.) One that
  // fails may leave the transaction open (SQLite's COMMIT, refused while another handle reads).
  async #control(text: string): Promise<void> {
    try {
      await this.#held.control(text);
    } catch (error) {
      this.#broken ||= !rolledBack(error);
      throw error;
    }
  }
}

/**
 * Whether `error` is a COMMIT the database turned into a rollback (PostgreSQL's, after a failed
 * statement, or at a serialization failure).
 */
export function rolledBack(error: unknown): boolean {
  return error instanceof DataError &&
    (error.reason === "transaction" || error.reason === "conflict");
}
