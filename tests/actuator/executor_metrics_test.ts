// The task executors' series (`executor_active`, `executor_queued`, `executor_completed_total`,
// `executor_rejected_total` by executor name) at /actuator/prometheus, and the `tasks` health
// component, from real @Async calls.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { Async, Daemon, tasks } from "../../tasks.ts";
import { deferred } from "../deferred.ts";
import { RUNTIME } from "../runtime.ts";
import { samples, sampleValue, scrape } from "./prometheus_samples.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("the task executors at the actuator", () => {
  it("reports active, queued, completed and rejected runs by executor", async () => {
    // The registry behind /actuator/prometheus is the process's: an executor name of its own.
    const name = `h84_${RUNTIME.replace(/\W/g, "_")}`;
    @Service()
    class Worker {
      started = 0;
      gate = deferred<void>();
      @Async(name)
      async work(): Promise<void> {
        this.started++;
        await this.gate.promise;
      }
    }
    const app = await bootstrap({
      components: [Worker],
      config: {
        management: {
          endpoints: { web: { exposure: { include: "prometheus,health" } } },
          endpoint: { health: { "show-details": "always" } },
        },
        thaw: {
          task: { executors: { [name]: { pool: { "max-size": 1, "queue-capacity": 1 } } } },
        },
      },
      actuator: actuator(),
      tasks: tasks(),
    });
    const worker = app.getBean(Worker);
    const running = worker.work();
    const queued = worker.work();
    await until(() => worker.started === 1);
    await assert.rejects(worker.work(), /refused the run/);
    const during = samples(await scrape(app));
    assert.equal(sampleValue(during, "executor_active", { name }), 1);
    assert.equal(sampleValue(during, "executor_queued", { name }), 1);
    assert.equal(sampleValue(during, "executor_rejected_total", { name }), 1);
    assert.equal(sampleValue(during, "executor_completed_total", { name }), 0);
    worker.gate.resolve();
    await Promise.all([running, queued]);
    const after = samples(await scrape(app));
    assert.equal(sampleValue(after, "executor_completed_total", { name }), 2);
    assert.equal(sampleValue(after, "executor_active", { name }), 0);

    const health = await app.fetch(new Request("http://localhost/actuator/health"));
    const body = await health.json() as {
      components: Record<string, { status: string; details?: Record<string, unknown> }>;
    };
    assert.equal(body.components.tasks.status, "UP");
    assert.deepEqual((body.components.tasks.details!.executors as Record<string, unknown>)[name], {
      active: 0,
      queued: 0,
      completed: 2,
      rejected: 1,
    });
    await app.close();
  });

  it("the tasks component is DOWN while a daemon waits to be restarted", async () => {
    @Service()
    @Daemon({ name: "crashing" })
    class Crashing {
      runs = 0;
      async run(): Promise<void> {
        this.runs++;
        await Promise.resolve();
        throw new Error("crash");
      }
    }
    const app = await bootstrap({
      components: [Crashing],
      config: { management: { endpoint: { health: { "show-details": "always" } } } },
      actuator: actuator(),
      tasks: tasks(),
      logger: { error: () => {} },
    });
    const health = async () => {
      const res = await app.fetch(new Request("http://localhost/actuator/health"));
      return ((await res.json()) as { components: Record<string, { status: string }> })
        .components.tasks.status;
    };
    assert.equal(await health(), "UP");
    app.start();
    await until(() => app.getBean(Crashing).runs > 0);
    // A crashing daemon spends all but a few turns waiting to be restarted (1 s, then 2 s...).
    assert.equal(await health(), "DOWN");
    await app.close();
  });
});
