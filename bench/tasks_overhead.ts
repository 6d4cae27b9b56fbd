/**
 * What `@Async` and `@Lockable` cost per call, in-process, on the runtime that runs this file
 * (`npm run bench:tasks` runs it on Deno, Bun and Node 26):
 *
 *   deno run -A bench/tasks_overhead.ts [--batches 30] [--batch 20000]
 *
 * One bean, bootstrapped once with `tasks()`, with three methods that do the same nothing: a plain
 * `async` method (the baseline), the same with `@Async()` (the hand-off to the default executor
 * and back), and the same with `@Lockable` on the in-process lock manager, uncontended (one key
 * per call of a batch, the calls one after another). Batches of `batch` awaited calls of each run
 * against the baseline in turn (A B, then B A), wall time; per pair the cost in µs per call and
 * the ratio to the baseline. Reported: their medians with the range of the middle half.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { bootstrap, Service } from "../mod.ts";
import { Async, Lockable, tasks } from "../tasks.ts";
import { quartiles, runtimeName } from "./measure.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "30" },
    batch: { type: "string", default: "20000" },
  },
});
const BATCHES = Number(values.batches);
const BATCH = Number(values.batch);

@Service()
class Work {
  async plain(n: number): Promise<number> {
    return await Promise.resolve(n);
  }

  @Async()
  async handedOff(n: number): Promise<number> {
    return await Promise.resolve(n);
  }

  @Lockable({ key: (n: number) => `k${n}` })
  async locked(n: number): Promise<number> {
    return await Promise.resolve(n);
  }
}

const app = await bootstrap({
  components: [Work],
  tasks: tasks(),
  config: { thaw: { task: { execution: { pool: { "queue-capacity": 0 } } } } },
});
const work = app.getBean(Work);

async function batch(method: "plain" | "handedOff" | "locked"): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < BATCH; i++) await work[method](i);
  return (performance.now() - start) * 1000 / BATCH;
}

const runtime = runtimeName();

// Warm up each path first.
for (const method of ["plain", "handedOff", "locked"] as const) await batch(method);
const base: number[] = [];
console.log(`${runtime}: ${BATCHES} batches of ${BATCH} awaited calls`);
for (const variant of ["handedOff", "locked"] as const) {
  const costs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < BATCHES; i++) {
    let a: number;
    let b: number;
    if (i % 2 === 0) {
      a = await batch("plain");
      b = await batch(variant);
    } else {
      b = await batch(variant);
      a = await batch("plain");
    }
    base.push(a);
    costs.push(b - a);
    ratios.push(b / a);
  }
  const [c1, c2, c3] = quartiles(costs);
  const [r1, r2, r3] = quartiles(ratios);
  const label = variant === "handedOff" ? "@Async hand-off" : "@Lockable (in-process, uncontended)";
  console.log(
    `${label}: +${c2.toFixed(2)} µs per call (${c1.toFixed(2)}..${c3.toFixed(2)}), ` +
      `${r2.toFixed(2)}x the plain call (${r1.toFixed(2)}..${r3.toFixed(2)})`,
  );
}
const [, b2] = quartiles(base);
console.log(`plain async call (baseline): ${b2.toFixed(3)} µs`);
await app.close();
