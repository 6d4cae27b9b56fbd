// The scheduler's series as Spring Boot 3 names them (`tasks_scheduled_execution_seconds` by
// `code_namespace`, `code_function`, `outcome`, `exception`) and Thaw's count of runs skipped
// because another replica held the lock, from real runs of `@Scheduled` jobs (started by the
// edge trigger, `app.scheduled`, which resolves once they ended: nothing to wait for).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { Bean, bootstrap, Configuration, Scheduled, SchedulerLock, Service } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { observeScheduledRuns } from "../../src/actuator/scheduler_metrics.ts";
import { reportRun } from "../../src/scheduling/job_runs.ts";
import { CollectingReader } from "../metric_reader.ts";
import { readOpenMetrics } from "./openmetrics_check.ts";
import { RUNTIME } from "../runtime.ts";
import { PROMETHEUS, samples, sampleValue, scrape } from "./prometheus_samples.ts";
import { type HeldLock, LockManager, type LockRequest } from "../../tasks.ts";

class ArchiveFull extends Error {}

/** Locks of one process: a lock another replica holds is `held`. */
class MemoryLocks extends LockManager {
  held = false;
  acquire(_request: LockRequest): Promise<HeldLock | undefined> {
    return Promise.resolve(this.held ? undefined : { release: () => Promise.resolve() });
  }
}

const CRON = "0 3 * * *";

// The registry behind /actuator/prometheus is the process's: each runtime's run has jobs of a
// class of its own name.
function jobsClass() {
  @Service()
  class Jobs {
    okRuns = 0;
    @Scheduled({ cron: CRON })
    digest(): void {
      this.okRuns++;
    }
    @Scheduled({ cron: CRON })
    archive(): Promise<void> {
      return Promise.reject(new ArchiveFull("the archive is full"));
    }
    @Scheduled({ cron: CRON })
    @SchedulerLock({ name: "report", lockAtMostFor: "1m" })
    report(): void {}
  }
  Object.defineProperty(Jobs, "name", { value: `Jobs_${RUNTIME}` });
  return Jobs;
}

@Configuration()
class Locking {
  @Bean()
  lockManager(): LockManager {
    return new MemoryLocks();
  }
}

describe("the scheduler's series at /actuator/prometheus", () => {
  it("counts runs by job and outcome, their durations, and the runs the lock skipped", async () => {
    const Jobs = jobsClass();
    const app = await bootstrap({
      components: [Jobs, Locking],
      config: PROMETHEUS,
      actuator: actuator(),
      logger: { error: () => {}, warn: () => {} },
    });
    const locks = app.getBean(LockManager) as MemoryLocks;
    await assert.rejects(app.scheduled({ cron: CRON }), ArchiveFull);
    await assert.rejects(app.scheduled({ cron: CRON }), ArchiveFull);
    locks.held = true;
    await assert.rejects(app.scheduled({ cron: CRON }), ArchiveFull);
    assert.equal(app.getBean(Jobs).okRuns, 3);

    const all = samples(await scrape(app));
    const ns = Jobs.name;
    const runs = (fn: string, outcome: string, exception: string) =>
      sampleValue(all, "tasks_scheduled_execution_seconds_count", {
        code_namespace: ns,
        code_function: fn,
        outcome,
        exception,
      });
    assert.equal(runs("digest", "SUCCESS", "none"), 3);
    assert.equal(runs("archive", "ERROR", "ArchiveFull"), 3);
    assert.equal(runs("report", "SUCCESS", "none"), 2);
    assert.equal(
      sampleValue(all, "thaw_scheduling_lock_not_acquired_total", {
        code_namespace: ns,
        code_function: "report",
      }),
      1,
    );
    const sum = sampleValue(all, "tasks_scheduled_execution_seconds_sum", {
      code_namespace: ns,
      code_function: "digest",
    });
    assert.ok(sum !== undefined && sum >= 0);
    const inf = sampleValue(all, "tasks_scheduled_execution_seconds_bucket", {
      code_namespace: ns,
      code_function: "archive",
      le: "+Inf",
    });
    assert.equal(inf, 3);

    const res = await app.fetch(
      new Request("http://localhost/actuator/prometheus", {
        headers: { accept: "application/openmetrics-text;version=1.0.0" },
      }),
    );
    const families = readOpenMetrics(await res.text());
    const runsFamily = families.find((f) => f.name === "tasks_scheduled_execution_seconds");
    assert.deepEqual([runsFamily?.type, runsFamily?.unit], ["histogram", "seconds"]);
    const skipped = families.find((f) => f.name === "thaw_scheduling_lock_not_acquired");
    assert.equal(skipped?.type, "counter");
    await app.close();
  });

  it("counts a lock that could not be taken as a run that failed", async () => {
    @Service()
    class Guarded {
      @Scheduled({ cron: CRON })
      @SchedulerLock({ name: "guarded", lockAtMostFor: "1m" })
      sweep(): void {}
    }
    Object.defineProperty(Guarded, "name", { value: `Guarded_${RUNTIME}` });
    class LockStoreDown extends Error {}
    @Configuration()
    class BrokenLocking {
      @Bean()
      lockManager(): LockManager {
        return new (class extends LockManager {
          acquire(): Promise<HeldLock | undefined> {
            return Promise.reject(new LockStoreDown("database down"));
          }
        })();
      }
    }
    const app = await bootstrap({
      components: [Guarded, BrokenLocking],
      config: PROMETHEUS,
      actuator: actuator(),
      logger: { error: () => {}, warn: () => {} },
    });
    await assert.rejects(app.scheduled({ cron: CRON }), LockStoreDown);
    const all = samples(await scrape(app));
    assert.equal(
      sampleValue(all, "tasks_scheduled_execution_seconds_count", {
        code_namespace: Guarded.name,
        code_function: "sweep",
        outcome: "ERROR",
        exception: "LockStoreDown",
      }),
      1,
    );
    await app.close();
  });
});

describe("observeScheduledRuns", () => {
  it("records on the providers given as each run ends, following a later one", async () => {
    const context = {};
    const reader = new CollectingReader();
    let provider = new MeterProvider();
    const stop = observeScheduledRuns(context, () => [provider]);
    const at = new Date();
    const ran = () =>
      reportRun(context, {
        className: "Jobs",
        method: "digest",
        last: { outcome: "ok", at, durationMs: 1500 },
      });
    ran();
    provider = new MeterProvider({ readers: [reader] });
    ran();
    reportRun(context, {
      className: "Jobs",
      method: "digest",
      last: { outcome: "skipped", at, reason: 'another replica holds "digest"' },
    });
    const [digest] = await reader.points("tasks.scheduled.execution");
    assert.deepEqual(digest.attributes, {
      "code.namespace": "Jobs",
      "code.function": "digest",
      outcome: "SUCCESS",
      exception: "none",
    });
    assert.equal((digest.value as { count: number; sum: number }).count, 1);
    assert.equal((digest.value as { count: number; sum: number }).sum, 1.5);
    const [skipped] = await reader.points("thaw.scheduling.lock.not_acquired");
    assert.equal(skipped.value, 1);
    stop();
    ran();
    const [after] = await reader.points("tasks.scheduled.execution");
    assert.equal((after.value as { count: number }).count, 1, "stopped: not recorded");
  });

  it("names what was thrown by its class, and a value thrown by its type", async () => {
    const context = {};
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const stop = observeScheduledRuns(context, () => [provider]);
    const at = new Date();
    for (const error of [new RangeError("x"), "text", null, Object.create(null)]) {
      reportRun(context, {
        className: "Jobs",
        method: "sweep",
        last: { outcome: "failed", at, durationMs: 0, error },
      });
    }
    const exceptions = (await reader.points("tasks.scheduled.execution"))
      .map((p) => p.attributes.exception).sort();
    assert.deepEqual(exceptions, ["Object", "RangeError", "object", "string"]);
    stop();
  });
});
