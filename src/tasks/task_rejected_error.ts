// What a run handed to a full (or closed) executor gets instead of running.

/**
 * An `@Async` call its executor refused: every run slot busy and the queue full, or the app
 * closing. Nothing of the method ran.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TaskRejectedError } from "@thaw/thaw/tasks";
 *
 * const error = new TaskRejectedError("default", "its 8 runs busy and its queue of 1000 full");
 * assert.equal(error.executor, "default");
 * assert.match(error.message, /task executor "default" refused the run: its 8 runs busy/);
 * ```
 */
export class TaskRejectedError extends Error {
  /** The executor's name: `default`, or one of `thaw.task.executors`. */
  readonly executor: string;

  /**
   * Whether the run was queued, then dropped because the app closed before its turn came (the
   * close logs how many): else the queue was full, or the app closing, when it was called.
   */
  readonly dropped: boolean;

  /**
   * The refusal of one call.
   *
   * @param executor the executor's name
   * @param why what the executor was doing, as the message says it
   * @param dropped whether the close dropped the run queued
   */
  constructor(executor: string, why: string, dropped = false) {
    super(`The task executor "${executor}" refused the run: ${why}`);
    this.name = "TaskRejectedError";
    this.executor = executor;
    this.dropped = dropped;
  }
}
