/**
 * What observing requests costs in `app.fetch`, in-process, on the runtime that runs this file
 * (`npm run bench:observe` runs it on Deno, Bun and Node 26):
 *
 *   deno run -A bench/http/observe_cost.ts [--batches 30] [--batch 20000]
 *
 * The same controller bootstrapped four ways: without the actuator (the baseline); with
 * `actuator()` and no tracer or meter provider registered (what an app that serves health pays);
 * with the access log on (a logger that drops the line, so that only Thaw's work is counted); and
 * with `prometheus` exposed (every request recorded in the histogram), last. Batches of `batch`
 * `GET /users/{id}` and `POST /users` requests run through each variant and the baseline in turn
 * (A B, then B A), CPU time from `process.cpuUsage()`; per pair the difference in µs per request
 * and the ratio. Reported: their medians with the range of the middle half.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { type Application, bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { logging } from "../../logging.ts";
import { UserController } from "./thaw_app.ts";
import { getRequest, postRequest } from "./users.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "30" },
    batch: { type: "string", default: "20000" },
  },
});
const batches = Number(values.batches);
const batch = Number(values.batch);
if (!Number.isInteger(batches) || batches < 2 || !Number.isInteger(batch) || batch < 2) {
  console.error("observe_cost.ts: --batches and --batch must be whole numbers of at least 2");
  process.exit(2);
}

const quiet = { error: () => {}, info: () => {} };
const exposing = (include: string) => ({
  management: { endpoints: { web: { exposure: { include } } } },
});
// Made in turn, each once the one before was measured, in this order: exposing prometheus
// registers OpenTelemetry's global meter provider for the rest of the process, and an app with no
// provider registered must be measured before.
const variants: [string, () => Promise<Application>][] = [
  [
    "actuator(), no provider registered",
    () => bootstrap({ controllers: [UserController], actuator: actuator(), logger: quiet }),
  ],
  ["access log on", () =>
    bootstrap({
      controllers: [UserController],
      logging: logging(),
      config: { logging: { access: { enabled: true } } },
      logger: quiet,
    })],
  ["prometheus exposed", () =>
    bootstrap({
      controllers: [UserController],
      actuator: actuator(),
      config: exposing("health,prometheus"),
      logger: quiet,
    })],
];
const baseline = await bootstrap({ controllers: [UserController], logger: quiet });

const requests = { "GET /users/{id}": getRequest, "POST /users": postRequest };

async function cpuPerRequest(app: Application, make: () => Request): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < batch; i++) {
    const response = await app.fetch(make());
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
    await response.arrayBuffer();
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / batch;
}

const quartiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), low: at(0.25), high: at(0.75) };
};
const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node ${process.version}`;
console.log(`${runtime}: ${batches} pairs of ${batch} requests each, CPU µs per request`);
for (const [name, made] of variants) {
  const app = await made();
  for (const [route, make] of Object.entries(requests)) {
    // Warm both up first.
    await cpuPerRequest(app, make);
    await cpuPerRequest(baseline, make);
    const extra: number[] = [];
    const ratios: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < batches; i++) {
      const [a, b] = i % 2 === 0
        ? [await cpuPerRequest(app, make), await cpuPerRequest(baseline, make)]
        : [undefined, await cpuPerRequest(baseline, make)];
      const observed = a ?? await cpuPerRequest(app, make);
      extra.push(observed - b);
      ratios.push(observed / b);
      base.push(b);
    }
    const e = quartiles(extra);
    const r = quartiles(ratios);
    console.log(
      `${route} | ${name}: +${e.median.toFixed(2)} µs (${e.low.toFixed(2)} to ${
        e.high.toFixed(2)
      }), ratio ${r.median.toFixed(3)} (${r.low.toFixed(3)} to ${r.high.toFixed(3)}); ` +
        `baseline ${quartiles(base).median.toFixed(2)} µs`,
    );
  }
}
