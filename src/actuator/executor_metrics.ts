// The task executors' series as Spring (Micrometer) names them: `executor.active` and
// `executor.queued` (gauges), `executor.completed` and `executor.rejected` (counters), each by
// the executor's `name`; and Thaw's `thaw.task.retries`, `thaw.task.daemon.restarts` and
// `thaw.task.async.unawaited_failures`. Read from the counts the executors keep, as a scrape
// comes: a run costs an addition. The executors' bean is found by what it answers, so that an app
// without `@thaw/thaw/tasks` loads none of it.
import type {
  Attributes,
  BatchObservableCallback,
  MeterProvider,
  Observable,
  ObservableCounter,
  ObservableGauge,
} from "@opentelemetry/api";
import type { TaskCounts } from "../tasks/task_executors.ts";
import { VERSION } from "../version.ts";
import { FollowedProviders } from "./followed_providers.ts";

interface ExecutorInstruments {
  readonly active: ObservableGauge;
  readonly queued: ObservableGauge;
  readonly completed: ObservableCounter;
  readonly rejected: ObservableCounter;
  readonly retries: ObservableCounter;
  readonly restarts: ObservableCounter;
  readonly unawaited: ObservableCounter;
}

type CountsSource = { "thaw.taskCounts"(): TaskCounts };

function countsSource(instance: unknown): CountsSource | undefined {
  const candidate = instance as Partial<CountsSource> | null;
  return typeof candidate?.["thaw.taskCounts"] === "function"
    ? candidate as CountsSource
    : undefined;
}

/**
 * Reports the counts of the task executors among `beans` on the providers `providers` gives,
 * until the returned function is called; nothing when the app has none.
 */
export function observeExecutors(
  beans: readonly { readonly instance: unknown }[],
  providers: () => readonly MeterProvider[],
): () => void {
  const source = beans.map(({ instance }) => countsSource(instance)).find((s) => s !== undefined);
  if (source === undefined) return () => {};
  const followed = new FollowedProviders(
    providers,
    (provider) => {
      const meter = provider.getMeter("thaw", VERSION);
      const instruments: ExecutorInstruments = {
        active: meter.createObservableGauge("executor.active", {
          unit: "{run}",
          description: "@Async runs of an executor running now.",
        }),
        queued: meter.createObservableGauge("executor.queued", {
          unit: "{run}",
          description: "@Async runs of an executor waiting for a slot.",
        }),
        completed: meter.createObservableCounter("executor.completed", {
          unit: "{run}",
          description: "@Async runs of an executor that ended.",
        }),
        rejected: meter.createObservableCounter("executor.rejected", {
          unit: "{run}",
          description: "@Async calls an executor refused: its queue full, or the app closing.",
        }),
        retries: meter.createObservableCounter("thaw.task.retries", {
          unit: "{retry}",
          description: "Attempts of @Retryable methods after one failed.",
        }),
        restarts: meter.createObservableCounter("thaw.task.daemon.restarts", {
          unit: "{restart}",
          description: "Runs of @Daemon beans started again after one failed or ended.",
        }),
        unawaited: meter.createObservableCounter("thaw.task.async.unawaited_failures", {
          unit: "{failure}",
          description: "@Async runs that failed while nobody awaited their promise (logged).",
        }),
      };
      const observables: Observable[] = Object.values(instruments);
      const callback: BatchObservableCallback = (result) => {
        const counts = source["thaw.taskCounts"]();
        for (const executor of counts.executors) {
          const attributes: Attributes = { name: executor.name };
          result.observe(instruments.active, executor.active, attributes);
          result.observe(instruments.queued, executor.queued, attributes);
          result.observe(instruments.completed, executor.completed, attributes);
          result.observe(instruments.rejected, executor.rejected, attributes);
        }
        result.observe(instruments.retries, counts.retries);
        result.observe(instruments.restarts, counts.daemonRestarts);
        result.observe(instruments.unawaited, counts.unawaitedFailures);
      };
      meter.addBatchObservableCallback(callback, observables);
      return () => meter.removeBatchObservableCallback(callback, observables);
    },
    (remove) => remove(),
  );
  followed.now();
  return () => followed.stop();
}
