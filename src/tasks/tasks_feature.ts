// What `bootstrap` knows of the tasks feature: an opaque value made by `tasks()` of the `tasks`
// entry point, so that an app that does not use it neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The task executors and the decorators that run on them (`@Async`, `@Lockable`, `@Retryable`,
 * `@ConcurrencyLimit`), for `bootstrap({ tasks })`: made by `tasks()` of `@thaw/thaw/tasks`.
 */
export interface TasksFeature {
  /** What this is, for messages. */
  readonly feature: "tasks";
}

/** Makes the value `bootstrap({ tasks })` takes. */
export const tasksFeature = (setup: FeatureSetup): TasksFeature => makeFeature("tasks", setup);
