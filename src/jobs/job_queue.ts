// The bean an app enqueues jobs with. The checks are the queue's, the writing the store's: on a
// datasource, an enqueue inside one of its transactions is part of it.
import { checkEnqueue, type EnqueueOptions } from "./enqueue_options.ts";
import type { Enqueued, JobSender } from "./job_store.ts";
import type { JobsTelemetry } from "./jobs_telemetry.ts";

/**
 * Enqueues jobs for the `@JobHandler` of their queue, in this process or another: the bean
 * `jobs()` of `@thaw/thaw/jobs` makes (`@Autowired(JobQueue)`).
 *
 * @example A job enqueued in a transaction that rolls back never runs
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 * import { JobQueue, jobs } from "@thaw/thaw/jobs";
 * import { jobTableStatements } from "../sql/job_statements.ts";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 *   jobs: jobs(),
 * });
 * const sql = app.getBean(SqlClient);
 * for (const text of jobTableStatements(sql.kind)) await sql.unsafe(text);
 * const queue = app.getBean(JobQueue);
 * await sql.transaction(async (status) => {
 *   await queue.enqueue("mail", { to: "ada@example.com" });
 *   status.setRollbackOnly();
 * });
 * const kept = await queue.enqueue("mail", { to: "alan@example.com" }, { key: "alan" });
 * const again = await queue.enqueue("mail", { to: "alan@example.com" }, { key: "alan" });
 * assert.deepEqual(again, { id: kept.id, created: false });
 * assert.equal((await sql.query`SELECT COUNT(*) AS n FROM thaw_jobs`)[0].n, 1);
 * await app.close();
 * ```
 */
export class JobQueue {
  readonly #store: JobSender;
  readonly #telemetry: JobsTelemetry | undefined;

  /** Not part of the API: `jobs()` makes the bean. */
  constructor(store: JobSender, telemetry?: JobsTelemetry) {
    this.#store = store;
    this.#telemetry = telemetry;
  }

  /**
   * Enqueues `payload` (JSON: anything `JSON.stringify` would change or drop is refused) on
   * `queue`. Resolves the job's id, and whether it was created: `false` when `options.key` is held
   * by a waiting or running job of the queue, whose id it is. Rejects with a `TypeError` naming
   * the queue for a payload or an option that is wrong, before anything is written.
   */
  async enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<Enqueued> {
    const job = checkEnqueue(queue, payload, options, Date.now());
    if (this.#telemetry === undefined) return await this.#store.enqueue(job, undefined);
    return await this.#telemetry.enqueue(job.queue, (trace) => this.#store.enqueue(job, trace));
  }
}
