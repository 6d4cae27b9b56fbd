// The scheduler as a feature of its app: brought by `@Scheduled` and `@SchedulerLock`, so that an
// app without a schedule neither loads nor carries it.
import type { FeatureFactory } from "../app_feature.ts";
import { schedulerFor } from "./scheduler.ts";
import { publishJobs } from "./published_jobs.ts";

/** Builds the scheduler of the app's jobs (rejecting on one it cannot schedule); nothing runs until `start`. */
export const schedulingFeature: FeatureFactory = async (host) => {
  const scheduler = await schedulerFor({
    context: host.context,
    config: host.settings.config.values,
    enabled: host.settings.get("thaw.scheduling.enabled"),
    logger: host.logger,
  });
  // For the actuator's `scheduledtasks`, which reads them as each request comes.
  publishJobs(host.context, () => scheduler.jobs());
  const timeoutMs = host.shutdownTimeoutMs;
  return {
    start: () => scheduler.start(),
    cron: (expression) => scheduler.runCron(expression),
    // No job starts while the requests in flight finish; the close waits for those running.
    stopAccepting: () => void scheduler.stop(timeoutMs),
    // The schedules stop, and a run in progress ends, before the beans it uses stop.
    close: { jobs: () => scheduler.stop(timeoutMs) },
  };
};
