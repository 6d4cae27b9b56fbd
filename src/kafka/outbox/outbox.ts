// The transactional outbox of one datasource: a record sent inside a transaction is a row of the
// outbox table, written on the transaction's connection, so that it commits or rolls back with
// the transaction's own rows; a relay then sends the committed rows and marks them sent. The
// relay is woken by each commit that wrote a row, and polls for rows nobody woke it for (a
// process killed between its commit and its send, another replica's). Replicas relay one at a
// time, through a lock with a lease in a table beside the outbox's (SqlLockManager's): a relay
// that dies holding it stops blocking the others once the lease ends.
import { Backoff } from "../../runtime/backoff.ts";
import type { SqlClient } from "../../data/sql_client.ts";
import type { Transaction } from "../../data/transaction.ts";
import type { ContextLogger } from "../../context/class_record.ts";
import { runDetached } from "../../events/detached_run.ts";
import { checkOptionsObject } from "../../options_object.ts";
import { loggableText } from "../../observe/loggable.ts";
import { SqlLockManager } from "../../tasks/sql_lock_manager.ts";
import type { HeldLock } from "../../tasks/lock_manager.ts";
import { type OutgoingRecord, type RecordSender, writtenOf } from "../outgoing_record.ts";
import { decodeHeaders, encodeHeaders } from "./outbox_headers.ts";
import {
  checkTableName,
  DEFAULT_OUTBOX_TABLE,
  isMissingTable,
  type OutboxStatements,
  outboxStatements,
} from "./outbox_table.ts";

/** The options of {@linkcode Outbox}; every duration in milliseconds. */
export interface OutboxOptions {
  /** The outbox table: `thaw_outbox` by default. Its lock table is this name and `_lock`. */
  readonly table?: string | undefined;
  /** How often the relay looks for rows no commit of this process woke it for: 1,000 by default. */
  readonly pollIntervalMs?: number | undefined;
  /** Rows read and sent at a time: 100 by default. */
  readonly batchSize?: number | undefined;
  /**
   * How long a relay's lock lasts unless given back: 30,000 by default. A relay that dies holding
   * it blocks the others this long; a relay starts no batch past half of it, and gives it back.
   */
  readonly leaseMs?: number | undefined;
  /** The wait after a failed send or database call, doubled at each failure in a row: 100. */
  readonly retryDelayMs?: number | undefined;
  /** The longest wait between tries: 30,000 by default. */
  readonly maxRetryDelayMs?: number | undefined;
  /**
   * How long a send may take before it counts as failed and is tried again (the record may then
   * go twice): 10,000 by default. A producer that cannot reach the broker may never answer.
   */
  readonly sendTimeoutMs?: number | undefined;
  /** How long sent rows stay in the table (0: deleted once sent): one hour by default. */
  readonly retentionMs?: number | undefined;
  /** Where the relay's failures go: `console` by default. */
  readonly logger?: ContextLogger | undefined;
}

const OPTIONS = [
  "table",
  "pollIntervalMs",
  "batchSize",
  "leaseMs",
  "retryDelayMs",
  "maxRetryDelayMs",
  "retentionMs",
  "sendTimeoutMs",
  "logger",
];
const WHO = "Outbox";
// The lock's one key: one relay at a time per table.
const LOCK_KEY = "thaw-outbox-relay";
// Old sent rows are deleted at most this often (and as often as the retention, if shorter).
const PURGE_EVERY_MS = 60_000;

// A row read back, with the record it holds.
interface OutboxRow {
  readonly id: unknown;
  readonly record: OutgoingRecord;
}

// How a pass of the relay ended.
// "blocked": some keys went, others failed: the backoff holds, but a commit ends it.
// "doubt": a send given up on may still be written: nothing goes until it settled.
type PassOutcome = "idle" | "more" | "busy" | "blocked" | "failed" | "doubt";

/**
 * The outbox of one datasource: {@linkcode Outbox.write} adds a record to the outbox table inside
 * a transaction of that datasource; once {@linkcode Outbox.start}ed, its relay sends the rows
 * committed (by this process or another, earlier or now) through `sender`, in id order, and marks
 * them sent. A row whose send fails stays, and so do the later rows of its key, until a retry
 * sends it: records of a key never overtake each other. A row is sent at least once: a relay
 * killed between a send and its mark sends it again.
 *
 * The table and its lock table are created by Thaw's outbox migration
 * ({@linkcode outboxMigration}).
 *
 * @example A record written in a transaction that commits is relayed; one that rolls back is not
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 * import { innermostTransaction } from "../../data/transaction_scope.ts";
 * import { Outbox } from "./outbox.ts";
 * import { outboxTableStatements } from "./outbox_table.ts";
 * import { SqlLockManager } from "../../tasks/sql_lock_manager.ts";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 * });
 * const sql = app.getBean(SqlClient);
 * for (const text of outboxTableStatements(sql.kind, "thaw_outbox")) await sql.unsafe(text);
 * await sql.unsafe(SqlLockManager.createTable(sql.kind, "thaw_outbox_lock"));
 * const sent: string[] = [];
 * const outbox = new Outbox(sql, {
 *   send: async (records) => {
 *     sent.push(...records.map((r) => new TextDecoder().decode(r.value)));
 *     return records.map((r, i) => ({ topic: r.topic, partition: 0, offset: BigInt(i) }));
 *   },
 * });
 * const record = (text: string) => ({
 *   topic: "orders",
 *   key: undefined,
 *   value: new TextEncoder().encode(text),
 *   headers: [],
 *   partition: undefined,
 * });
 * await sql.transaction(() => outbox.write(innermostTransaction()!, record("kept")));
 * await sql.transaction(async (status) => {
 *   await outbox.write(innermostTransaction()!, record("rolled back"));
 *   status.setRollbackOnly();
 * });
 * assert.equal(await outbox.backlog(), 1);
 * await outbox.start();
 * while (await outbox.backlog() > 0) await new Promise((r) => setTimeout(r, 10));
 * assert.deepEqual(sent, ["kept"]);
 * await outbox.close(5_000);
 * await app.close();
 * ```
 */
export class Outbox {
  readonly #sql: SqlClient;
  readonly #sender: RecordSender;
  readonly #table: string;
  readonly #statements: OutboxStatements;
  readonly #locks: SqlLockManager;
  readonly #pollIntervalMs: number;
  readonly #batchSize: number;
  readonly #leaseMs: number;
  readonly #backoff: Backoff;
  readonly #retentionMs: number;
  readonly #sendTimeoutMs: number;
  readonly #logger: ContextLogger;
  // The transactions whose commit already wakes the relay.
  readonly #registered = new WeakSet<Transaction>();
  #loop: Promise<void> | undefined;
  #closing = false;
  #woken = false;
  #wake: (() => void) | undefined;
  #lastPurge = -Infinity;
  // A send given up on at the send timeout that the producer may still write: no row goes until
  // it settled, so that no row of its keys overtakes it.
  #inDoubt: Promise<unknown> | undefined;

  /**
   * The outbox of the datasource of `sql` (its `SqlClient` bean), relaying through `sender`.
   * Throws a `TypeError` for an unknown option, a table name that is not a plain identifier and a
   * number out of range; nothing runs before {@linkcode Outbox.start}.
   */
  constructor(sql: SqlClient, sender: RecordSender, options: OutboxOptions = {}) {
    const given: unknown = options;
    checkOptionsObject(given, WHO, OPTIONS);
    if (typeof sender?.send !== "function") {
      throw new TypeError(`${WHO}: the sender has no send(records) method`);
    }
    this.#sql = sql;
    this.#sender = sender;
    this.#table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE, WHO);
    if (this.#table.length > 58) {
      throw new TypeError(`${WHO}: table ${this.#table} is longer than 58 characters`);
    }
    this.#statements = outboxStatements(sql.kind, this.#table);
    this.#locks = new SqlLockManager(sql, { table: `${this.#table}_lock` });
    this.#pollIntervalMs = positive(options.pollIntervalMs, 1_000, "pollIntervalMs");
    this.#batchSize = positive(options.batchSize, 100, "batchSize");
    this.#leaseMs = positive(options.leaseMs, 30_000, "leaseMs");
    this.#backoff = new Backoff({
      delay: positive(options.retryDelayMs, 100, "retryDelayMs"),
      multiplier: 2,
      maxDelay: positive(options.maxRetryDelayMs, 30_000, "maxRetryDelayMs"),
    });
    this.#retentionMs = positive(options.retentionMs, 3_600_000, "retentionMs", 0);
    this.#sendTimeoutMs = positive(options.sendTimeoutMs, 10_000, "sendTimeoutMs");
    this.#logger = options.logger ?? console;
  }

  /** The datasource's name and the table, as messages name them. */
  get #where(): string {
    return `${WHO} of datasource "${this.#sql.name}" (table ${this.#table})`;
  }

  /**
   * Writes `record` to the outbox table inside `transaction` (one of this outbox's datasource), on
   * its connection: the row commits or rolls back with it. Its commit wakes the relay. Rejects,
   * naming the datasource and the table, when the table does not exist.
   */
  async write(transaction: Transaction, record: OutgoingRecord): Promise<void> {
    if (transaction.pool.name !== this.#sql.name) {
      throw new TypeError(
        `${this.#where}: the transaction ${transaction.name} is one of datasource ` +
          `"${transaction.pool.name}": its records go to that datasource's outbox`,
      );
    }
    if (transaction.readOnly) {
      throw new TypeError(
        `${this.#where}: the transaction ${transaction.name} is read-only: a record sent in it ` +
          "is a row to write",
      );
    }
    checkRecord(record, this.#where);
    try {
      await transaction.connection.run(
        this.#statements.insert,
        [
          record.topic,
          record.key ?? null,
          record.value ?? null,
          encodeHeaders(record.headers),
          record.partition ?? null,
        ],
        transaction.deadline,
      );
    } catch (error) {
      throw this.#named(error, "write a record");
    }
    if (!this.#registered.has(transaction)) {
      this.#registered.add(transaction);
      transaction.register({ phase: "AFTER_COMMIT", run: () => Promise.resolve(this.#poke()) });
    }
  }

  /**
   * Starts the relay: it sends what is in the table (what an earlier process committed and never
   * sent), then what each commit adds, and looks again every `pollIntervalMs`. Rejects, naming
   * the datasource and the table, when the table does not exist; twice is once.
   */
  async start(): Promise<void> {
    if (this.#loop !== undefined) return;
    this.#closing = false;
    try {
      await this.backlog();
    } catch (error) {
      if (isMissingTable(error) || isMissingTable((error as Error).cause)) throw error;
      this.#logger.error(`${this.#where}: the relay starts, but cannot read the table yet`, error);
    }
    this.#loop = runDetached(() => this.#run());
  }

  /**
   * Stops the relay: no batch starts after this; resolves `true` once the batch in flight ended
   * within `timeoutMs`, `false` if it still runs (its rows are sent again by the next relay).
   */
  async close(timeoutMs: number): Promise<boolean> {
    const loop = this.#loop;
    this.#closing = true;
    this.#wake?.();
    if (loop === undefined) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      loop.then(() => true),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), timeoutMs)),
    ]);
    clearTimeout(timer);
    if (ended) this.#loop = undefined;
    return ended;
  }

  /** The rows not sent yet (the backlog's gauge), counted outside any transaction. */
  async backlog(): Promise<number> {
    try {
      const rows = await this.#outside(() => this.#sql.unsafe(this.#statements.backlog));
      return Number((rows.rows[0] as { backlog: unknown }).backlog);
    } catch (error) {
      throw this.#named(error, "count the backlog");
    }
  }

  // A commit wrote rows: the relay looks now (or once its pass in flight ends).
  #poke(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#closing) {
      this.#woken = false;
      let outcome: PassOutcome;
      try {
        outcome = await this.#pass();
      } catch (error) {
        this.#logger.error(`${this.#where}: the relay failed; it tries again`, error);
        outcome = "failed";
      }
      if (outcome === "doubt") {
        // Its settling wakes the relay; a commit meanwhile finds it still in doubt.
        await this.#sleep(this.#backoff.maxDelay, true);
        continue;
      }
      if (outcome === "failed" || outcome === "blocked") {
        failures++;
        await this.#sleep(this.#backoff.delayOf(failures), outcome === "blocked");
        continue;
      }
      failures = 0;
      if (outcome === "more") continue;
      await this.#sleep(this.#pollIntervalMs, true);
    }
  }

  // Waits `ms`, or less once closing (or, if `wakeable`, once a commit wrote rows).
  #sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.#closing || (wakeable && this.#woken)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = () => {
        if (this.#closing || wakeable) done();
      };
    });
  }

  // One pass under the lock: batches until every unsent row was read once, a batch sent nothing,
  // or half the lease has gone by. A key whose send failed is blocked for the rest of the pass:
  // its later rows are read past, not sent (they keep their order), and the other keys go on.
  async #pass(): Promise<PassOutcome> {
    if (this.#inDoubt !== undefined) return "doubt";
    let held: HeldLock | undefined;
    try {
      held = await this.#locks.acquire({ key: LOCK_KEY, waitMs: 0, leaseMs: this.#leaseMs });
    } catch (error) {
      this.#logger.error(`${this.#where}: the relay's lock could not be taken`, error);
      return "failed";
    }
    if (held === undefined) return "busy";
    const blocked = new Set<string>();
    let sentAny = false;
    // How the pass ended, once the rows it could send went: a key held back keeps the backoff.
    const ended = (): PassOutcome => blocked.size === 0 ? "idle" : sentAny ? "blocked" : "failed";
    try {
      const until = performance.now() + this.#leaseMs / 2;
      let after: unknown = 0;
      while (!this.#closing) {
        if (this.#inDoubt !== undefined) return "doubt";
        await this.#purgeIfDue();
        const rows = await this.#unsent(after);
        if (rows.length === 0) return ended();
        after = rows[rows.length - 1].id;
        const sendable = rows.filter((row) => !blocked.has(groupName(row.record)));
        if (sendable.length > 0) {
          const sent = await this.#sendBatch(sendable, blocked);
          // Nothing of several keys went: the broker, not a record, is at fault.
          if (sent === 0 && new Set(sendable.map((row) => groupName(row.record))).size > 1) {
            return sentAny ? "blocked" : "failed";
          }
          if (sent > 0) sentAny = true;
        }
        if (performance.now() >= until) return blocked.size === 0 ? "more" : ended();
      }
      return ended();
    } finally {
      const release = () =>
        held.release().catch((error) =>
          this.#logger.error(`${this.#where}: the relay's lock could not be given back`, error)
        );
      // A send in doubt keeps the lock (until it settles, or its lease ends): another replica
      // must not send its rows while this producer may still write them.
      // (Read anew: the narrowing of the pass's first line does not hold past its awaits.)
      const doubt = this.#inDoubt as Promise<unknown> | undefined;
      if (doubt === undefined) await release();
      else void doubt.finally(release);
    }
  }

  async #unsent(after: unknown): Promise<OutboxRow[]> {
    const { rows } = await this.#outside(() =>
      this.#sql.unsafe(this.#statements.unsent, [after, this.#batchSize])
    );
    return rows.map((row) => this.#rowOf(row as Record<string, unknown>));
  }

  #rowOf(row: Record<string, unknown>): OutboxRow {
    const where = `${this.#where}, row ${String(row.id)}`;
    const partition = row.record_partition;
    return {
      id: row.id,
      record: {
        topic: String(row.topic),
        key: bytesOf(row.record_key),
        value: bytesOf(row.record_value),
        headers: decodeHeaders(bytesOf(row.headers) ?? new Uint8Array(), where),
        partition: partition === null || partition === undefined ? undefined : Number(partition),
      },
    };
  }

  // Sends `rows` in one call (the producer keeps their order within each partition), then marks
  // them sent. When that fails, each key's rows are sent on their own, one key after the other (an
  // idempotent producer refuses two sends in flight to one partition): the keys whose send fails
  // stay, and are added to `blocked`; the others go. Resolves with how many rows went.
  async #sendBatch(rows: readonly OutboxRow[], blocked: Set<string>): Promise<number> {
    try {
      await this.#send(rows);
      await this.#markSent(rows.map((row) => row.id));
      return rows.length;
    } catch (error) {
      // The rows the producer wrote before the send failed (another key's record refused) are
      // marked, not sent again.
      const written = writtenOf(error);
      if (written.size > 0) {
        await this.#markSent(rows.filter((_, i) => written.has(i)).map((r) => r.id));
      }
      const groups = new Map<string, OutboxRow[]>();
      for (const [i, row] of rows.entries()) {
        if (written.has(i)) continue;
        const name = groupName(row.record);
        const group = groups.get(name);
        if (group === undefined) groups.set(name, [row]);
        else group.push(row);
      }
      // A send in doubt: no key goes until it settled.
      if (groups.size === 1 || this.#inDoubt !== undefined) {
        this.#sendFailed(rows, error);
        for (const name of groups.keys()) blocked.add(name);
        return written.size;
      }
      const sent: unknown[] = [];
      for (const [name, group] of groups) {
        // A key's send that went in doubt holds back every key after it too.
        if (this.#inDoubt !== undefined) {
          blocked.add(name);
          continue;
        }
        try {
          await this.#send(group);
          for (const row of group) sent.push(row.id);
        } catch (error) {
          blocked.add(name);
          this.#sendFailed(group, error);
        }
      }
      if (sent.length > 0) await this.#markSent(sent);
      return sent.length + written.size;
    }
  }

  // The sender's send of `rows`, given up after the send timeout. One given up on may still be
  // written: it is in doubt until it settles, and the relay sends nothing meanwhile. Written, its
  // rows are marked sent then; refused, they are sent again, never behind a later row of their
  // key.
  async #send(rows: readonly OutboxRow[]): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sending = this.#sender.send(rows.map((row) => row.record));
    try {
      await Promise.race([
        sending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const inDoubt = sending.then(
              () => this.#markSent(rows.map((row) => row.id)),
              () => {},
            ).catch((error) => {
              // Not marked: the rows go again, at least once.
              this.#logger.error(`${this.#where}: a late send's rows could not be marked`, error);
            }).finally(() => {
              if (this.#inDoubt === inDoubt) this.#inDoubt = undefined;
              this.#poke();
            });
            this.#inDoubt = inDoubt;
            reject(new Error(`no answer from the broker in ${this.#sendTimeoutMs} ms`));
          }, this.#sendTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  #sendFailed(rows: readonly OutboxRow[], error: unknown): void {
    this.#logger.error(
      `${this.#where}: sending row ${String(rows[0].id)} to topic ` +
        `${JSON.stringify(loggableText(rows[0].record.topic))} failed; it and the later rows ` +
        "of its key stay, and are sent again",
      error,
    );
  }

  async #markSent(ids: readonly unknown[]): Promise<void> {
    const statements = this.#statements;
    const text = this.#retentionMs === 0
      ? statements.deleteSent(ids.length)
      : statements.markSent(ids.length);
    await this.#outside(() => this.#sql.unsafe(text, ids));
  }

  async #purgeIfDue(): Promise<void> {
    if (this.#retentionMs === 0) return;
    const now = performance.now();
    if (now - this.#lastPurge < Math.min(PURGE_EVERY_MS, this.#retentionMs)) return;
    this.#lastPurge = now;
    await this.#outside(() => this.#sql.unsafe(this.#statements.purge, [this.#retentionMs]));
  }

  // Runs `work` outside any transaction of the caller's.
  #outside<T>(work: () => Promise<T>): Promise<T> {
    return this.#sql.transaction(work, { propagation: "NOT_SUPPORTED" });
  }

  // `error` with the datasource and the table named, and for a missing table, how to create it.
  #named(error: unknown, what: string): Error {
    const message = error instanceof Error ? error.message : String(error);
    if (isMissingTable(error)) {
      return new Error(
        `${this.#where}: could not ${what}: datasource "${this.#sql.name}" has no table ` +
          `${this.#table}: create it (and ${this.#table}_lock) with Thaw's outbox migration, a ` +
          `file migrations/${this.#sql.name}/V<next>__thaw_outbox.ts holding ` +
          `\`export default outboxMigration(${
            this.#table === DEFAULT_OUTBOX_TABLE ? "" : JSON.stringify(this.#table)
          })\` (see "The outbox" in docs/kafka.md) (${message})`,
        { cause: error },
      );
    }
    return new Error(`${this.#where}: could not ${what}: ${message}`, { cause: error });
  }
}

// The records whose order is kept among themselves: one topic's, of one key (and partition, when
// one is asked for). Records without a key keep their order among themselves too.
function groupName(record: OutgoingRecord): string {
  const key = record.key === undefined
    ? "-"
    : "k" + Array.from(record.key, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${record.topic}\u0000${record.partition ?? ""}\u0000${key}`;
}

// A driver's bytes (a Buffer on Node's drivers, a Uint8Array on Deno's SQLite) as a Uint8Array.
function bytesOf(value: unknown): Uint8Array | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`outbox: a bytes column read back as ${typeof value}`);
}

function positive(value: unknown, fallback: number, name: string, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(
      `${WHO}: ${name} must be a whole number of ${min} or more, not ${String(value)}`,
    );
  }
  return value;
}

function checkRecord(record: OutgoingRecord, where: string): void {
  const bytes = (v: unknown) => v === undefined || v instanceof Uint8Array;
  if (
    typeof record?.topic !== "string" || record.topic === "" || !bytes(record.key) ||
    !bytes(record.value) || !Array.isArray(record.headers) ||
    !record.headers.every((h) =>
      Array.isArray(h) && typeof h[0] === "string" && h[1] instanceof Uint8Array
    ) ||
    (record.partition !== undefined &&
      (!Number.isSafeInteger(record.partition) || record.partition < 0))
  ) {
    throw new TypeError(`${where}: the record is not a serialized OutgoingRecord`);
  }
}
