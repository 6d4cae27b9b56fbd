// The outbox table's rows as the outbox reads and writes them: a record inserted on the caller's
// transaction, and, outside any transaction of the caller's, the backlog counted, the unsent rows
// read in id order, the sent ones marked (or deleted) and the old ones purged.
import type { SqlClient } from "../../data/sql_client.ts";
import type { Transaction } from "../../data/transaction.ts";
import type { OutgoingRecord } from "../outgoing_record.ts";
import type { OutboxSettings } from "./outbox_options.ts";
import { insertParameters, type OutboxRow, rowOf } from "./outbox_row.ts";
import type { OutboxStatements } from "./outbox_table.ts";

// Old sent rows are deleted at most this often (and as often as the retention, if shorter).
const PURGE_EVERY_MS = 60_000;

/** The rows of one outbox table, through its datasource's client. */
export class OutboxStore {
  readonly #sql: SqlClient;
  readonly #statements: OutboxStatements;
  readonly #batchSize: number;
  readonly #retentionMs: number;
  // The outbox, as the errors of a row it cannot read name it.
  readonly #where: string;
  #lastPurge = -Infinity;

  constructor(
    sql: SqlClient,
    statements: OutboxStatements,
    { batchSize, retentionMs }: OutboxSettings,
    where: string,
  ) {
    this.#sql = sql;
    this.#statements = statements;
    this.#batchSize = batchSize;
    this.#retentionMs = retentionMs;
    this.#where = where;
  }

  /** Inserts `record` on `transaction`'s connection: the row commits or rolls back with it. */
  async insert(transaction: Transaction, record: OutgoingRecord): Promise<void> {
    await transaction.connection.run(
      this.#statements.insert,
      insertParameters(record),
      transaction.deadline,
    );
  }

  /** The rows not sent yet. */
  async backlog(): Promise<number> {
    const rows = await this.#outside(() => this.#sql.unsafe(this.#statements.backlog));
    return Number((rows.rows[0] as { backlog: unknown }).backlog);
  }

  /** The first unsent rows (a batch of them) past the id `after`, in id order. */
  async unsent(after: unknown): Promise<OutboxRow[]> {
    const { rows } = await this.#outside(() =>
      this.#sql.unsafe(this.#statements.unsent, [after, this.#batchSize])
    );
    return rows.map((row) => rowOf(row as Record<string, unknown>, this.#where));
  }

  /** Marks the rows of `ids` sent; deletes them when sent rows are kept no time. */
  async markSent(ids: readonly unknown[]): Promise<void> {
    const statements = this.#statements;
    const text = this.#retentionMs === 0
      ? statements.deleteSent(ids.length)
      : statements.markSent(ids.length);
    await this.#outside(() => this.#sql.unsafe(text, ids));
  }

  /** Deletes the rows sent longer ago than the retention, unless it was done a short while ago. */
  async purgeIfDue(): Promise<void> {
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
}
