// Cron triggers on real workerd: a worker whose beans have @Scheduled jobs
// (tests/fixtures/scheduled_worker.ts), bundled as tools/bundle_worker.ts bundles the sample app
// and exported as `export default app`, gets scheduled events and runs, once each, the cron jobs
// whose expression is the trigger's; its fixedRate job never runs there.
//
// workerd has no URL that fires a scheduled event (`/cdn-cgi/handler/scheduled` is Miniflare's, in
// `wrangler dev`; workerd passes it to the worker's fetch). It fires one through a service binding:
// `env.JOBS.scheduled({ cron, scheduledTime })`, which resolves to `{ outcome, noRetry }` once the
// worker's `scheduled` handler settles. That method exists only with the compatibility flag
// `service_binding_extra_handlers`, which is experimental: `workerd serve --experimental`. The flag
// is the trigger worker's alone; the worker under test has none, as deployed.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serveWithTrigger } from "./workerd.ts";
import { suiteTempDirs } from "../temp_dir.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/scheduled_worker.ts", import.meta.url));

// GET /?cron=<expression>: fires the worker's scheduled event, answers what workerd reports of it.
const TRIGGER = `export default {
  async fetch(request, env) {
    const cron = new URL(request.url).searchParams.get("cron");
    return Response.json(await env.JOBS.scheduled({ cron, scheduledTime: Date.now() }));
  },
};
`;

const CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "jobs", worker = .jobs), (name = "trigger", worker = .trigger)],
  sockets = [
    (name = "app", address = "127.0.0.1:0", http = (), service = "jobs"),
    (name = "trigger", address = "127.0.0.1:0", http = (), service = "trigger"),
  ],
);

const jobs :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "scheduled_worker.js")],
  compatibilityDate = "2026-10-23",
);

const trigger :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "trigger.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [(name = "JOBS", service = "jobs")],
);
`;

interface Runs {
  everyFiveMinutes: number;
  midnight: number;
  newYear: number;
  beat: number;
}

describe("@Scheduled cron jobs on workerd, through `export default app`", () => {
  let jobs: string;
  let trigger: string;
  let child: ChildProcess | undefined;
  let output: () => string = () => "";
  after(() => {
    child?.kill();
  });
  // Registered after workerd's stop, so that its folder goes after it.
  const suiteDir = suiteTempDirs();

  const runs = async (): Promise<Runs> => {
    const response = await fetch(`${jobs}/runs`);
    assert.equal(response.status, 200);
    return await response.json();
  };
  const logs = async (): Promise<string[]> => await (await fetch(`${jobs}/logs`)).json();
  const fire = async (cron: string): Promise<{ outcome: string; noRetry: boolean }> => {
    const response = await fetch(`${trigger}/?cron=${encodeURIComponent(cron)}`);
    const body = await response.text();
    assert.equal(response.status, 200, `the trigger worker failed: ${body}\n${output()}`);
    return JSON.parse(body);
  };

  before(async () => {
    const served = await serveWithTrigger({
      fixture: FIXTURE,
      name: "scheduled_worker",
      dir: await suiteDir("thaw-workerd-scheduled-"),
      trigger: TRIGGER,
      config: CONFIG,
      readyPath: "/runs",
    });
    ({ child, output, app: jobs, trigger } = served);
  });

  it("serves fetch, with no schedule started at load nor by requests", async () => {
    assert.deepEqual(await runs(), { everyFiveMinutes: 0, midnight: 0, newYear: 0, beat: 0 });
    assert.deepEqual(await runs(), { everyFiveMinutes: 0, midnight: 0, newYear: 0, beat: 0 });
    assert.deepEqual(await logs(), []);
  });

  it("runs the one cron job a trigger names, and resolves once it ended", async () => {
    const before = await runs();
    assert.deepEqual(await fire("*/5 * * * *"), { outcome: "ok", noRetry: false });
    assert.deepEqual(await runs(), { ...before, everyFiveMinutes: before.everyFiveMinutes + 1 });
    // The job's count is raised after a timer: seen here only if the handler waited for it.
    assert.deepEqual(await fire("0 0 * * *"), { outcome: "ok", noRetry: false });
    assert.deepEqual(await runs(), {
      ...before,
      everyFiveMinutes: before.everyFiveMinutes + 1,
      midnight: before.midnight + 1,
    });
  });

  it("matches the trigger whatever its spaces and letter case", async () => {
    const before = await runs();
    assert.deepEqual(await fire("  0  0 * *   * "), { outcome: "ok", noRetry: false });
    assert.deepEqual(await fire("*/5 * * * *"), { outcome: "ok", noRetry: false });
    assert.deepEqual(await runs(), {
      ...before,
      everyFiveMinutes: before.everyFiveMinutes + 1,
      midnight: before.midnight + 1,
    });
    const logged = (await logs()).length;
    assert.deepEqual(await fire("0 0 1 jan *"), { outcome: "exception", noRetry: false });
    assert.equal((await runs()).newYear, before.newYear + 1);
    // That job throws: its one error line, no warning that the trigger matched nothing.
    assert.deepEqual((await logs()).slice(logged), [
      "error @Scheduled Jobs.newYear failed; its schedule goes on: the archive is full",
    ]);
  });

  it("logs a job that throws, and rethrows it: workerd reports the run as an exception", async () => {
    const before = await runs();
    const logged = (await logs()).length;
    assert.deepEqual(await fire("0 0 1 JAN *"), { outcome: "exception", noRetry: false });
    assert.deepEqual(await runs(), { ...before, newYear: before.newYear + 1 });
    assert.deepEqual((await logs()).slice(logged), [
      "error @Scheduled Jobs.newYear failed; its schedule goes on: the archive is full",
    ]);
    // The run after it still succeeds: the failure was that run's alone.
    assert.deepEqual(await fire("*/5 * * * *"), { outcome: "ok", noRetry: false });
  });

  it("warns of a trigger no job matches, runs nothing and succeeds", async () => {
    const before = await runs();
    const logged = (await logs()).length;
    for (const cron of ["*/10 * * * *", "30 */5 * * * *", "0 0 * * MON"]) {
      assert.deepEqual(await fire(cron), { outcome: "ok", noRetry: false }, cron);
    }
    assert.deepEqual(await runs(), before);
    const crons = 'the cron jobs are Jobs.everyFiveMinutes "0 */5 * * * *", ' +
      'Jobs.midnight "0 0 * * *", Jobs.newYear "0 0 1 JAN *"';
    assert.deepEqual((await logs()).slice(logged), [
      `warn The cron trigger "*/10 * * * *" matches no @Scheduled job: ${crons}`,
      `warn The cron trigger "30 */5 * * * *" matches no @Scheduled job: ${crons}`,
      `warn The cron trigger "0 0 * * MON" matches no @Scheduled job: ${crons}`,
    ]);
  });

  it("never runs the fixedRate job: scheduled events run cron jobs alone", async () => {
    assert.equal((await runs()).beat, 0);
    assert.doesNotMatch(output(), /uncaught|error/i);
  });
});
