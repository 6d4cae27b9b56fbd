// Where an app's scheduler tells the features beside it (the actuator's meters) of each run as it
// ends, by the app's context: neither imports the other, and a run no feature watches costs a
// look-up. What is told comes from the code (the job's class and method), never from a request.
import type { LastRun } from "./scheduled_job_info.ts";

/** One run of a job, ended: done, failed, or skipped (another replica held its lock). */
export interface EndedRun {
  /** The job's class, by name (Spring's `code.namespace`). */
  readonly className: string;
  /** The scheduled method's name (Spring's `code.function`). */
  readonly method: string;
  readonly last: Exclude<LastRun, { readonly outcome: "running" }>;
}

/** Told of each run as it ends. */
export type RunWatcher = (run: EndedRun) => void;

const BY_APP = /* @__PURE__ */ new WeakMap<object, Set<RunWatcher>>();

/** Tells `watcher` of each run of the app whose context is `context`, until the returned function is called. */
export function watchRuns(context: object, watcher: RunWatcher): () => void {
  let watchers = BY_APP.get(context);
  if (watchers === undefined) BY_APP.set(context, watchers = new Set());
  watchers.add(watcher);
  return () => void watchers.delete(watcher);
}

/** Tells the watchers of the app whose context is `context` of `run`; one that throws fails no job. */
export function reportRun(context: object, run: EndedRun): void {
  for (const watcher of BY_APP.get(context) ?? []) {
    try {
      watcher(run);
    } catch {
      // A meter that fails must not fail the job it measures.
    }
  }
}
