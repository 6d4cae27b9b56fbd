/**
 * Durable background jobs: `jobs()` for `bootstrap({ jobs })`, the `JobQueue` bean that enqueues
 * them, `@JobHandler` for the method that runs a queue's jobs, and `jobsMigration()`, the
 * migration that makes their table. A job enqueued inside a transaction of its datasource commits
 * or rolls back with the caller's rows; a run that throws is tried again after a backoff; a
 * process killed mid-run leaves its job to be taken again once its lease ends.
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * @example An app that enqueues a job
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { data, SqlClient } from "@thaw/thaw/data";
 * import { JobQueue, jobs } from "@thaw/thaw/jobs";
 * import { jobTableStatements } from "./src/sql/job_statements.ts";
 *
 * const app = await bootstrap({
 *   config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
 *   data: data(),
 *   jobs: jobs(),
 * });
 * const sql = app.getBean(SqlClient);
 * for (const text of jobTableStatements(sql.kind)) await sql.unsafe(text);
 * const { created } = await app.getBean(JobQueue).enqueue("mail", { to: "ada@example.com" });
 * assert.equal(created, true);
 * await app.close();
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/jobs.md
 *
 * @module
 */
import "./src/config/job_keys.ts";

export { jobs } from "./src/jobs/jobs_setup.ts";
export type { JobsFeature } from "./src/jobs/jobs_feature.ts";
export { JobQueue } from "./src/jobs/job_queue.ts";
export type { EnqueueOptions } from "./src/jobs/enqueue_options.ts";
export type { Enqueued } from "./src/jobs/job_store.ts";
export { type Job, JobHandler, type JobHandlerDecorator } from "./src/jobs/job_handler.ts";
export type { JobHandlerOptions } from "./src/jobs/handler_options.ts";
export { type JobsMigration, jobsMigration } from "./src/jobs/jobs_migration.ts";
// What `app.queue` is given on Cloudflare Workers, where the jobs are on Cloudflare Queues.
export type { MessageBatch, QueueMessage, QueueRetryOptions } from "./src/edge_events.ts";
