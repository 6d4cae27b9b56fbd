// The transactional outbox of one datasource: a record sent inside a transaction is a row of the
// outbox table, written on the transaction's connection, so that it commits or rolls back with
// the transaction's own rows; a relay (outbox_relay.ts) then sends the committed rows and marks
// them sent. The relay is woken by each commit that wrote a row, and polls for rows nobody woke it
// for (a process killed between its commit and its send, another replica's). Replicas relay one
// at a time, through a lock with a lease in a table beside the outbox's (SqlLockManager's): a
// relay that dies holding it stops blocking the others once the lease ends.
import type { SqlClient } from "../../data/sql_client.ts";
import type { Transaction } from "../../data/transaction.ts";
import { runDetached } from "../../events/detached_run.ts";
import { SqlLockManager } from "../../tasks/sql_lock_manager.ts";
import type { ContextLogger } from "../../context/class_record.ts";
import type { OutgoingRecord, RecordSender } from "../outgoing_record.ts";
import { type OutboxOptions, outboxSettings, outboxTable, WHO } from "./outbox_options.ts";
import { OutboxRelay } from "./outbox_relay.ts";
import { checkRecord } from "./outbox_row.ts";
import { OutboxStore } from "./outbox_store.ts";
import { DEFAULT_OUTBOX_TABLE, isMissingTable, outboxStatements } from "./outbox_table.ts";

export type { OutboxOptions } from "./outbox_options.ts";

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
  readonly #table: string;
  // The datasource's name and the table, as messages name them.
  readonly #where: string;
  readonly #store: OutboxStore;
  readonly #relay: OutboxRelay;
  readonly #logger: ContextLogger;
  // The transactions whose commit already wakes the relay.
  readonly #registered = new WeakSet<Transaction>();
  // The start under way or done, until a close: a second start, at once or later, is the same.
  #starting: Promise<void> | undefined;
  // Each close moves it on: a start that a close overtook opens nothing.
  #closes = 0;
  // The relay's run until it ended, a close's time-out included.
  #loop: Promise<void> | undefined;

  /**
   * The outbox of the datasource of `sql` (its `SqlClient` bean), relaying through `sender`.
   * Throws a `TypeError` for an unknown option, a table name that is not a plain identifier and a
   * number out of range; nothing runs before {@linkcode Outbox.start}.
   */
  constructor(sql: SqlClient, sender: RecordSender, options: OutboxOptions = {}) {
    const table = outboxTable(options, sender);
    const statements = outboxStatements(sql.kind, table);
    const locks = new SqlLockManager(sql, { table: `${table}_lock` });
    const settings = outboxSettings(options, table);
    this.#sql = sql;
    this.#table = table;
    this.#where = `${WHO} of datasource "${sql.name}" (table ${table})`;
    this.#store = new OutboxStore(sql, statements, settings, this.#where);
    this.#relay = new OutboxRelay(this.#store, locks, sender, settings, this.#where);
    this.#logger = settings.logger;
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
      await this.#store.insert(transaction, record);
    } catch (error) {
      throw this.#named(error, "write a record");
    }
    if (!this.#registered.has(transaction)) {
      this.#registered.add(transaction);
      transaction.register({
        phase: "AFTER_COMMIT",
        run: () => Promise.resolve(this.#relay.poke()),
      });
    }
  }

  /**
   * Starts the relay: it sends what is in the table (what an earlier process committed and never
   * sent), then what each commit adds, and looks again every `pollIntervalMs`. Rejects, naming
   * the datasource and the table, when the table does not exist; twice is once, at once or later,
   * until a close. After a close that timed out, it starts once the batch still in flight ended.
   */
  start(): Promise<void> {
    if (this.#starting === undefined) {
      const starting = this.#begin(this.#closes);
      this.#starting = starting;
      // A start that failed is tried again by the next one.
      starting.catch(() => {
        if (this.#starting === starting) this.#starting = undefined;
      });
    }
    return this.#starting;
  }

  async #begin(closes: number): Promise<void> {
    // Opened while it ends a batch, a relay a timed-out close left would run on beside the new one.
    await this.#loop;
    if (closes !== this.#closes) return;
    this.#relay.open();
    try {
      await this.backlog();
    } catch (error) {
      if (isMissingTable(error) || isMissingTable((error as Error).cause)) throw error;
      this.#logger.error(`${this.#where}: the relay starts, but cannot read the table yet`, error);
    }
    if (closes !== this.#closes) return;
    const loop = runDetached(() => this.#relay.run());
    this.#loop = loop;
    const ended = () => {
      if (this.#loop === loop) this.#loop = undefined;
    };
    loop.then(ended, ended);
  }

  /**
   * Stops the relay: no batch starts after this; resolves `true` once the batch in flight ended
   * within `timeoutMs`, `false` if it still runs (its rows are sent again by the next relay).
   */
  async close(timeoutMs: number): Promise<boolean> {
    this.#closes++;
    this.#starting = undefined;
    this.#relay.stop();
    const loop = this.#loop;
    if (loop === undefined) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      loop.then(() => true),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), timeoutMs)),
    ]);
    clearTimeout(timer);
    return ended;
  }

  /** The rows not sent yet (the backlog's gauge), counted outside any transaction. */
  async backlog(): Promise<number> {
    try {
      return await this.#store.backlog();
    } catch (error) {
      throw this.#named(error, "count the backlog");
    }
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
