// The scheduler's runs as Spring Boot 3 measures them: `tasks.scheduled.execution`, a timer by the
// job's class (`code.namespace`) and method (`code.function`), its `outcome` and its `exception`;
// and Thaw's `thaw.scheduling.lock.not_acquired`, the runs skipped because another replica held
// the job's lock. Recorded as each run ends, never per request; every attribute comes from the
// code (classes, methods, what they throw by class), so the series are as many as the jobs.
import type { Attributes, Counter, Histogram, MeterProvider } from "@opentelemetry/api";
import { watchRuns } from "../scheduling/job_runs.ts";
import { VERSION } from "../version.ts";
import { FollowedProviders } from "./followed_providers.ts";
import { exceptionType } from "./scheduled_tasks.ts";

/** The buckets of a run's duration, in seconds: from a few milliseconds to an hour. */
export const RUN_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
  300,
  900,
  3600,
];

interface RunInstruments {
  readonly runs: Histogram;
  readonly notAcquired: Counter;
}

function instrumentsOn(provider: MeterProvider): RunInstruments {
  const meter = provider.getMeter("thaw", VERSION);
  return {
    runs: meter.createHistogram("tasks.scheduled.execution", {
      unit: "s",
      description: "Runs of @Scheduled jobs: how long each took, by outcome.",
      advice: { explicitBucketBoundaries: [...RUN_BUCKETS] },
    }),
    notAcquired: meter.createCounter("thaw.scheduling.lock.not_acquired", {
      unit: "{run}",
      description: "Runs of @Scheduled jobs skipped because another replica held the lock.",
    }),
  };
}

/**
 * Records each run of the scheduler of the app whose context is `context` on the providers
 * `providers` gives as it ends, until the returned function is called.
 */
export function observeScheduledRuns(
  context: object,
  providers: () => readonly MeterProvider[],
): () => void {
  const followed = new FollowedProviders(providers, instrumentsOn);
  const unwatch = watchRuns(context, ({ className, method, last }) => {
    const code: Attributes = { "code.namespace": className, "code.function": method };
    if (last.outcome === "skipped") {
      for (const { notAcquired } of followed.now()) notAcquired.add(1, code);
      return;
    }
    const attributes: Attributes = {
      ...code,
      outcome: last.outcome === "ok" ? "SUCCESS" : "ERROR",
      exception: last.outcome === "ok" ? "none" : exceptionType(last.error),
    };
    for (const { runs } of followed.now()) runs.record(last.durationMs / 1000, attributes);
  });
  return () => {
    unwatch();
    followed.stop();
  };
}
