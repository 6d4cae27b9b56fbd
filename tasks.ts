/**
 * Work beside the request: `tasks()` for `bootstrap({ tasks })`, and the decorators that run on
 * it. `@Async` hands a method's calls to a bounded executor, `@Lockable` keeps runs of one key
 * from overlapping, `@Retryable` tries a failing method again, `@ConcurrencyLimit` bounds its
 * runs at once, and `@Daemon` keeps a bean's `run(signal)` going while the app runs.
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * @example An app whose `@Async` runs go two at a time
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { TaskRejectedError, tasks } from "@thaw/thaw/tasks";
 *
 * const app = await bootstrap({
 *   config: { thaw: { task: { execution: { pool: { "max-size": 2 } } } } },
 *   tasks: tasks(),
 * });
 * await app.close();
 * assert.equal(new TaskRejectedError("default", "full").executor, "default");
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md
 *
 * @module
 */
import "./src/config/task_keys.ts";

export { tasks } from "./src/tasks/tasks_setup.ts";
export type { TasksFeature } from "./src/tasks/tasks_feature.ts";
export { Async, type AsyncDecorator } from "./src/tasks/async.ts";
export { TaskRejectedError } from "./src/tasks/task_rejected_error.ts";
export { Lockable, type LockableDecorator, type LockableOptions } from "./src/tasks/lockable.ts";
export { LockNotAcquiredError } from "./src/tasks/lock_not_acquired_error.ts";
export { type HeldLock, LockManager, type LockRequest } from "./src/tasks/lock_manager.ts";
export { SqlLockManager, type SqlLockManagerOptions } from "./src/tasks/sql_lock_manager.ts";
export {
  Retryable,
  type RetryableDecorator,
  type RetryableOptions,
} from "./src/tasks/retryable.ts";
export type { ErrorClass } from "./src/tasks/retry_policy.ts";
export {
  ConcurrencyLimit,
  type ConcurrencyLimitDecorator,
  type ConcurrencyLimitOptions,
} from "./src/tasks/concurrency_limit.ts";
export {
  Daemon,
  type DaemonDecorator,
  type DaemonOptions,
  type SingletonDaemonDecorator,
} from "./src/tasks/daemon.ts";
export type { DaemonLease } from "./src/tasks/singleton_daemon.ts";
