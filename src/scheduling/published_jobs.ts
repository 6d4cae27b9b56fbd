// Where an app's scheduler shows its jobs to the features beside it (the actuator's
// `scheduledtasks`), by the app's context: neither imports the other, and an app without a
// schedule publishes nothing.
import type { ScheduledJobInfo } from "./scheduled_job_info.ts";

/** Reads the jobs of an app's scheduler as they are now. */
export type JobsView = () => readonly ScheduledJobInfo[];

const BY_APP = /* @__PURE__ */ new WeakMap<object, JobsView>();

/** Publishes the jobs of the app whose context is `context`. */
export function publishJobs(context: object, jobs: JobsView): void {
  BY_APP.set(context, jobs);
}

/** The jobs the scheduler of the app whose context is `context` published; none without one. */
export function publishedJobs(context: object): readonly ScheduledJobInfo[] {
  return BY_APP.get(context)?.() ?? [];
}
