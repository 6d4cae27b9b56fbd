import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Scheduled, Service } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { type ScheduledTasks, scheduledTasks } from "../../src/actuator/scheduled_tasks.ts";

class JobRefused extends Error {}

@Service()
class Reports {
  runs = 0;

  @Scheduled({ cron: "0 3 * * *" })
  nightly(): void {
    this.runs++;
    throw new JobRefused("the report store at postgres://app:s3cret@db/reports is read-only");
  }

  @Scheduled({ cron: "0 3 * * *" })
  tidy(): void {
    this.runs++;
  }

  @Scheduled({ fixedRate: "5m", initialDelay: "10s" })
  refresh(): void {}

  @Scheduled({ fixedDelay: 30_000 })
  sweep(): void {}
}

const exposing = (include: string) => ({
  management: { endpoints: { web: { exposure: { include } } } },
});

async function tasks(app: { fetch(r: Request): Response | Promise<Response> }) {
  const response = await app.fetch(new Request("http://localhost/actuator/scheduledtasks"));
  return { status: response.status, body: response.status === 200 ? await response.json() : null };
}

describe("GET /actuator/scheduledtasks", () => {
  it("answers 404 unless exposure names it", async () => {
    const app = await bootstrap({ components: [Reports], actuator: actuator() });
    assert.equal((await tasks(app)).status, 404);
    await app.close();
  });

  it("lists the jobs in Spring's shape: cron, fixedDelay, fixedRate and custom", async () => {
    const app = await bootstrap({
      components: [Reports],
      actuator: actuator(),
      config: exposing("scheduledtasks"),
    });
    const { status, body } = await tasks(app);
    assert.equal(status, 200);
    assert.deepEqual(body, {
      cron: [
        { runnable: { target: "Reports.nightly" }, expression: "0 3 * * *" },
        { runnable: { target: "Reports.tidy" }, expression: "0 3 * * *" },
      ],
      fixedDelay: [
        { runnable: { target: "Reports.sweep" }, initialDelay: 0, interval: 30_000 },
      ],
      fixedRate: [
        { runnable: { target: "Reports.refresh" }, initialDelay: 10_000, interval: 300_000 },
      ],
      custom: [],
    });
    await app.close();
  });

  it("gives each job's next run once started, and its last: SUCCESS, or ERROR with the exception", async () => {
    const failures: string[] = [];
    const app = await bootstrap({
      components: [Reports],
      actuator: actuator(),
      config: exposing("*"),
      logger: { error: (message) => void failures.push(message), warn: () => {} },
    });
    const before = Date.now();
    await assert.rejects(app.scheduled({ cron: "0 3 * * *" }), JobRefused);
    assert.deepEqual(failures, ["@Scheduled Reports.nightly failed; its schedule goes on"]);
    app.start();
    const { body } = await tasks(app);
    const [nightly, tidy] = body.cron;
    assert.equal(nightly.lastExecution.status, "ERROR");
    // The message is masked as every value the actuator shows: a URL's credentials are not shown.
    assert.deepEqual(nightly.lastExecution.exception, {
      type: "JobRefused",
      message: "the report store at postgres://***@db/reports is read-only",
    });
    assert.deepEqual(Object.keys(tidy.lastExecution).sort(), ["status", "time"]);
    assert.equal(tidy.lastExecution.status, "SUCCESS");
    const ran = Date.parse(tidy.lastExecution.time);
    assert.ok(ran >= before && ran <= Date.now(), tidy.lastExecution.time);
    // Next at 03:00 of a day to come, in the runtime's zone.
    const next = new Date(nightly.nextExecution.time);
    assert.ok(next.getTime() > before, nightly.nextExecution.time);
    assert.deepEqual([next.getHours(), next.getMinutes(), next.getSeconds()], [3, 0, 0]);
    assert.equal(typeof body.fixedRate[0].nextExecution.time, "string");
    assert.equal(body.fixedRate[0].lastExecution, undefined);
    await app.close();
  });

  it("answers empty lists for an app without a schedule", async () => {
    const app = await bootstrap({ actuator: actuator(), config: exposing("scheduledtasks") });
    assert.deepEqual((await tasks(app)).body, {
      cron: [],
      fixedDelay: [],
      fixedRate: [],
      custom: [],
    });
    await app.close();
  });
});

describe("scheduledTasks()", () => {
  const at = new Date("2026-11-27T03:00:00.000Z");
  const job = {
    bean: "jobs",
    method: "run",
    target: "Jobs.run",
    nextRun: undefined,
    kind: "cron",
    expression: "0 3 * * *",
    zone: undefined,
  } as const;
  const shown = (lastRun: unknown): ScheduledTasks["cron"][number]["lastExecution"] =>
    scheduledTasks([{ ...job, lastRun } as never], (text) => text).cron[0].lastExecution;

  it("says STARTED while a job runs", () => {
    assert.deepEqual(shown({ outcome: "running", at }), {
      time: "2026-11-27T03:00:00.000Z",
      status: "STARTED",
    });
  });

  it("says SUCCESS for a run another replica's lock skipped, as ShedLock's does under Spring", () => {
    assert.deepEqual(shown({ outcome: "skipped", at, reason: "held" }), {
      time: "2026-11-27T03:00:00.000Z",
      status: "SUCCESS",
    });
  });

  it("names what was thrown that is no Error by its type", () => {
    assert.deepEqual(shown({ outcome: "failed", at, durationMs: 1, error: "no disk" }), {
      time: "2026-11-27T03:00:00.000Z",
      status: "ERROR",
      exception: { type: "string", message: "no disk" },
    });
  });
});
