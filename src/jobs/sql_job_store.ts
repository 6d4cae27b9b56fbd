// Jobs kept in a table of a datasource (jobsMigration() makes it). An enqueue runs through the
// datasource's client, so inside one of its transactions it is part of it: it commits or rolls
// back with the caller's rows. Everything else runs outside any transaction of the caller's.
// PostgreSQL takes jobs with FOR UPDATE SKIP LOCKED in one UPDATE; MariaDB/MySQL with a locking
// SELECT then an UPDATE, in a transaction of its own; SQLite in one UPDATE, its one writer
// keeping two takes apart.
import type { SqlClient } from "../data/sql_client.ts";
import { innermostTransaction } from "../data/transaction_scope.ts";
import { isMissingTable } from "../sql/missing_table.ts";
import { DataError } from "../sql/data_error.ts";
import { Backoff } from "../runtime/backoff.ts";
import { JOBS_TABLE, type JobStatements, jobStatements } from "../sql/job_statements.ts";
import type { CheckedEnqueue } from "./enqueue_options.ts";
import type { DeadJob, Enqueued, JobStore, StateCount, TakenJob } from "./job_store.ts";
import type { NextStep } from "./run_outcome.ts";

/** The longest last error kept with a job, in characters. */
export const MAX_ERROR_LENGTH = 4000;

// A statement the database refused for a conflict with a concurrent one (a deadlock between a
// take, which locks the due index then the rows, and an end, which locks a row then its index
// entries, on MariaDB; SQLite's one writer busy in another process) is tried again this many
// times in all, after a short random wait.
const CONFLICT_TRIES = 8;
const conflictWait = new Backoff({ delay: 5, multiplier: 2, maxDelay: 200, jitter: 5 });

// A holder that finished between the insert that met its key and the read of its id leaves the
// key free: the insert is tried again, this many times at most.
const KEY_RACES = 5;

/** The jobs of one datasource's table. */
export class SqlJobStore implements JobStore {
  readonly #sql: SqlClient;
  readonly #statements: JobStatements;
  readonly #retentionMs: number;
  readonly #visible: (queue: string) => void;
  // The datasource and table, as messages name them.
  readonly where: string;
  // A job's id as the table makes them.
  readonly ids: RegExp = /^[1-9][0-9]{0,17}$/;

  /**
   * The jobs of the datasource of `sql`; done jobs are kept `retentionMs` (0: deleted as they
   * finish); `visible` hears of the queue of each job enqueued, once it can be taken.
   */
  constructor(sql: SqlClient, retentionMs: number, visible: (queue: string) => void) {
    this.#sql = sql;
    this.#statements = jobStatements(sql.kind);
    this.#retentionMs = retentionMs;
    this.#visible = visible;
    this.where = `jobs of datasource "${sql.name}" (table ${JOBS_TABLE})`;
  }

  /** The datasource's client. */
  get sql(): SqlClient {
    return this.#sql;
  }

  /** Whether each enqueue notifies the jobs' channel, for a LISTEN to hear (PostgreSQL). */
  get notifies(): boolean {
    return this.#statements.notifies;
  }

  async enqueue(job: CheckedEnqueue, trace: string | undefined): Promise<Enqueued> {
    const params = [
      job.queue,
      job.payload,
      job.priority,
      job.delayMs,
      job.attempts ?? null,
      job.key ?? null,
      trace ?? null,
    ];
    const enqueued = await this.#insert(job, params);
    if (enqueued.created) this.#whenCommitted(() => this.#visible(job.queue));
    return enqueued;
  }

  // Inside a transaction of the caller's, a conflict is the caller's to retry (its transaction is
  // rolled back); outside one, it is tried again here. The database's error reaches the caller as
  // it is (a `DataError`, its reason for a retry policy to read), but for a missing table.
  async #insert(job: CheckedEnqueue, params: unknown[]): Promise<Enqueued> {
    try {
      return this.#inCallersTransaction()
        ? await this.#inserted(job, params)
        : await retryingConflicts(() => this.#inserted(job, params));
    } catch (error) {
      if (isMissingTable(error)) throw this.named(error, `enqueue on queue "${job.queue}"`);
      throw error;
    }
  }

  async #inserted(job: CheckedEnqueue, params: unknown[]): Promise<Enqueued> {
    const s = this.#statements;
    for (let race = 0; race < KEY_RACES; race++) {
      const result = await this.#sql.unsafe<{ id: unknown }>(s.insert, params);
      if (s.insertAnswers === "insert id") {
        // 1: inserted; 2: the row holding the key counted one more enqueue (its id the insert id).
        return { id: String(result.lastInsertId), created: result.rowsAffected === 1 };
      }
      if (result.rows.length > 0) return { id: String(result.rows[0].id), created: true };
      const { rows } = await this.#sql.unsafe<{ id: unknown }>(s.holder, [job.queue, job.key]);
      if (rows.length > 0) return { id: String(rows[0].id), created: false };
    }
    throw new Error(
      `${this.where}: could not enqueue on queue "${job.queue}": the job holding its key ` +
        `finished as each of ${KEY_RACES} inserts met it`,
    );
  }

  // Runs `fn` once what this call wrote can be read by others: at the commit of the transaction
  // of this datasource it runs in, else now. A rollback never runs it.
  #whenCommitted(fn: () => void): void {
    const transaction = innermostTransaction();
    if (transaction === undefined || !this.#inCallersTransaction()) return fn();
    transaction.register({ phase: "AFTER_COMMIT", run: () => Promise.resolve(fn()) });
  }

  // Whether this call runs in a transaction of this datasource.
  #inCallersTransaction(): boolean {
    return innermostTransaction()?.pool.name === this.#sql.name;
  }

  async take(queue: string, count: number, leaseMs: number): Promise<TakenJob[]> {
    const lease = crypto.randomUUID();
    const s = this.#statements;
    const rows = await this.#outside(async (): Promise<Record<string, unknown>[]> => {
      if (s.take !== undefined) {
        return (await this.#sql.unsafe(s.take, [queue, count, lease, leaseMs])).rows;
      }
      // MariaDB/MySQL: at READ COMMITTED its locking read takes no gap locks that would hold up
      // an enqueue until the take commits.
      return await this.#sql.transaction(async () => {
        const { rows } = await this.#sql.unsafe(s.due as string, [queue, count]);
        if (rows.length === 0) return rows;
        await this.#sql.unsafe(s.lease(rows.length), [lease, leaseMs, ...rows.map((r) => r.id)]);
        // The UPDATE counted this run; the rows were read before it.
        return rows.map((row): Record<string, unknown> => ({
          ...row,
          attempt: Number(row.attempt) + 1,
        }));
      }, { propagation: "REQUIRES_NEW", isolation: "READ_COMMITTED" });
    });
    return rows
      .map((row) => ({ row, priority: Number(row.priority), runAt: Number(row.run_at) }))
      .sort((a, b) =>
        b.priority - a.priority || a.runAt - b.runAt || compareIds(a.row.id, b.row.id)
      )
      .map(({ row }) => ({
        id: String(row.id),
        queue: String(row.queue),
        payload: String(row.payload),
        attempt: Number(row.attempt),
        attempts: row.max_attempts === null ? undefined : Number(row.max_attempts),
        enqueuedAt: new Date(Number(row.enqueued_at)),
        trace: row.trace === null ? undefined : String(row.trace),
        lease,
      }));
  }

  async finish(job: TakenJob, step: NextStep, error: string | undefined): Promise<boolean> {
    const s = this.#statements;
    const held = [job.id, job.lease];
    const shown = error === undefined ? null : storedError(error);
    const [text, params] = step.state === "done"
      ? [this.#retentionMs === 0 ? s.doneDeleted : s.done, held]
      : step.state === "waiting"
      ? [s.retry, [step.delayMs, shown, ...held]]
      : step.state === "dead"
      ? [s.dead, [shown, ...held]]
      : [s.release, held];
    const { rowsAffected } = await this.#outside(() => this.#sql.unsafe(text, params));
    return rowsAffected > 0;
  }

  async reclaim(queue: string, attempts: number): Promise<number> {
    const error = "its lease ended before the run did (the process stopped, or the run took " +
      "longer than the handler's timeout)";
    const { rowsAffected } = await this.#outside(() =>
      this.#sql.unsafe(this.#statements.reclaim, [attempts, error, attempts, queue])
    );
    return rowsAffected;
  }

  async prune(retentionMs: number): Promise<void> {
    await this.#outside(() => this.#sql.unsafe(this.#statements.prune, [retentionMs]));
  }

  async counts(): Promise<StateCount[]> {
    const [{ rows }, now] = await this.#outside(() =>
      Promise.all([this.#sql.unsafe(this.#statements.counts), this.#now()])
    );
    return rows.map((row) => ({
      queue: String(row.queue),
      state: String(row.state) as StateCount["state"],
      jobs: Number(row.jobs),
      dueForMs: row.earliest === null || row.earliest === undefined
        ? undefined
        : Math.max(0, now - Number(row.earliest)),
    }));
  }

  async dead(limit: number): Promise<DeadJob[]> {
    const { rows } = await this.#outside(() =>
      this.#sql.unsafe(this.#statements.deadList, [limit])
    );
    return rows.map((row) => ({
      id: String(row.id),
      queue: String(row.queue),
      attempt: Number(row.attempt),
      diedAt: new Date(Number(row.finished_at)).toISOString(),
      error: row.last_error === null ? undefined : String(row.last_error),
    }));
  }

  async revive(id: string): Promise<string | undefined> {
    const s = this.#statements;
    return await this.#outside(async () => {
      const { rows } = await this.#sql.unsafe<{ queue: unknown }>(s.deadQueue, [id]);
      if (rows.length === 0) return undefined;
      const { rowsAffected } = await this.#sql.unsafe(s.revive, [id]);
      if (rowsAffected === 0) return undefined;
      const queue = String(rows[0].queue);
      this.#visible(queue);
      return queue;
    });
  }

  async remove(id: string): Promise<boolean> {
    const { rowsAffected } = await this.#outside(() =>
      this.#sql.unsafe(this.#statements.remove, [id])
    );
    return rowsAffected > 0;
  }

  async #now(): Promise<number> {
    const { rows } = await this.#sql.unsafe<{ now: unknown }>(this.#statements.now);
    return Number(rows[0].now);
  }

  /** `error` with the datasource and table named; for a missing table, how to create it. */
  named(error: unknown, what: string): Error {
    const message = error instanceof Error ? error.message : String(error);
    if (isMissingTable(error)) {
      return new Error(
        `${this.where}: could not ${what}: datasource "${this.#sql.name}" has no table ` +
          `${JOBS_TABLE}: create it with Thaw's jobs migration, a file ` +
          `migrations/${this.#sql.name}/V<next>__thaw_jobs.ts holding ` +
          "`export default jobsMigration()` (see docs/jobs.md) " + `(${message})`,
        { cause: error },
      );
    }
    return new Error(`${this.where}: could not ${what}: ${message}`, { cause: error });
  }

  // Runs `work` outside any transaction of the caller's, again after a conflict.
  // A missing table is named with how to make it.
  async #outside<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await retryingConflicts(() =>
        this.#sql.transaction(work, { propagation: "NOT_SUPPORTED" })
      );
    } catch (error) {
      if (isMissingTable(error)) throw this.named(error, "read the jobs");
      throw error;
    }
  }
}

// `run`, tried again after a conflict, up to CONFLICT_TRIES in all.
async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let tries = 1;; tries++) {
    try {
      return await run();
    } catch (error) {
      if (!isConflict(error) || tries >= CONFLICT_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, conflictWait.delayOf(tries)));
    }
  }
}

/**
 * An error's text as a job keeps it: at most {@linkcode MAX_ERROR_LENGTH} characters, with no NUL
 * (PostgreSQL refuses it in text) and no lone surrogate (which a database would change).
 */
export function storedError(text: string): string {
  // With the u flag a surrogate pair is one code point: only a lone surrogate is of category Cs.
  const clean = text.replace(/\0|\p{Cs}/gu, "\uFFFD");
  if (clean.length <= MAX_ERROR_LENGTH) return clean;
  // Not cut inside a surrogate pair.
  let end = MAX_ERROR_LENGTH - 1;
  if (/[\uD800-\uDBFF]/.test(clean[end - 1])) end--;
  return `${clean.slice(0, end)}…`;
}

// A conflict with a concurrent statement, which the same statement may pass when tried again: a
// deadlock or serialization failure, or SQLite's write lock held by another process past the
// busy timeout.
function isConflict(error: unknown): boolean {
  return error instanceof DataError &&
    (error.reason === "conflict" || error.code === "SQLITE_BUSY");
}

function compareIds(a: unknown, b: unknown): number {
  const x = BigInt(String(a));
  const y = BigInt(String(b));
  return x < y ? -1 : x > y ? 1 : 0;
}
