/**
 * Thaw against one baseline at a time, pair by pair (`npm run bench:paired`): the figure the
 * per-request targets are judged on. `run.ts` measures every server once per round and compares
 * medians, so a slow spell of a shared machine that falls on one server and not the other moves
 * its ratio by more than the few percent a target asks to resolve. Here Thaw and the baseline
 * run side by side and are loaded in turn, in short slices, A B then B A (the first of a pair
 * tends to measure a little faster whatever its code), and each pair gives its own ratio: drift
 * slower than a slice cancels inside the pair. Reported: the median of those ratios with their
 * range, for the server's CPU µs per request (`/proc`) and for requests/s.
 *
 *   deno run -A bench/http/paired.ts [--rounds 3] [--pairs 6] [--slice 2] [--warmup 2]
 *                                    [--connections 64] [--runtimes deno,bun,node]
 *
 * The comparisons and their targets: `GET /users/{id}` against bare Hono and `POST /users` against
 * "Hono + Thaw's body checks" (CPU per request at most 1.03x), and on Node `POST /users` against
 * NestJS on fastify (requests/s at least 1.2x). Each round starts both servers afresh, so that
 * one process's luck with the JIT and the memory layout averages out too.
 *
 * @module
 */
import type { ChildProcess } from "node:child_process";
import process from "node:process";
import {
  benchOptions,
  check,
  CHECKED,
  load,
  median,
  printReport,
  requireTools,
  type Route,
  type Runtime,
  type Sample,
  servers,
  start,
  stop,
  version,
} from "./servers.ts";

interface Comparison {
  readonly runtime: Runtime;
  readonly route: Route;
  readonly baseline: string;
  /** What is judged, and the bound: Thaw's CPU per request at most, or its req/s at least. */
  readonly target: { readonly of: "cpu"; readonly atMost: number } | {
    readonly of: "rps";
    readonly atLeast: number;
  };
}

function comparisons(runtime: Runtime): Comparison[] {
  const list: Comparison[] = [
    { runtime, route: "GET /users/{id}", baseline: "Hono", target: { of: "cpu", atMost: 1.03 } },
    { runtime, route: "POST /users", baseline: CHECKED, target: { of: "cpu", atMost: 1.03 } },
  ];
  if (runtime === "node") {
    list.push({
      runtime,
      route: "POST /users",
      baseline: "NestJS (fastify)",
      target: { of: "rps", atLeast: 1.2 },
    });
  }
  return list;
}

const { rounds, pairs, slice, warmup, connections, runtimes } = benchOptions("paired.ts", {
  rounds: 3,
  pairs: 6,
  slice: 2,
  warmup: 2,
  connections: 64,
});

requireTools();
const all = runtimes.flatMap(comparisons);
console.log(
  `HTTP, paired: ${all.length} comparisons, each ${rounds} rounds of fresh servers, ${pairs} ` +
    `pairs of ${slice} s slices a round after ${warmup} s of warm-up, wrk -t1 -c${connections}; ` +
    `about ${Math.ceil(all.length * rounds * (2 * warmup + 2 * pairs * slice + 3) / 60)} min`,
);

const rows: string[] = [];
const verdicts: string[] = [];
let port = 18_400;
for (const comparison of all) {
  const { runtime, route, baseline, target } = comparison;
  const cpuRatios: number[] = [];
  const rpsRatios: number[] = [];
  const thawSamples: Sample[] = [];
  const baseSamples: Sample[] = [];
  for (let round = 0; round < rounds; round++) {
    const specs = servers(runtime, port).filter((s) => s.name === "Thaw" || s.name === baseline);
    port += 20;
    const [thaw, base] = ["Thaw", baseline].map((name) => specs.find((s) => s.name === name)!);
    const children: ChildProcess[] = [];
    try {
      for (const spec of [thaw, base]) children.push(await start(spec));
      const [thawPid, basePid] = children.map((c) => c.pid!);
      for (const spec of [thaw, base]) await check(spec);
      load(thaw, thawPid, route, warmup, connections);
      load(base, basePid, route, warmup, connections);
      for (let pair = 0; pair < pairs; pair++) {
        // A B, then B A: whichever goes first in a pair is not always the same one.
        const thawFirst = (pair + round) % 2 === 0;
        const measure = (which: "thaw" | "base") =>
          which === "thaw"
            ? load(thaw, thawPid, route, slice, connections)
            : load(base, basePid, route, slice, connections);
        const first = measure(thawFirst ? "thaw" : "base");
        const second = measure(thawFirst ? "base" : "thaw");
        const [t, b] = thawFirst ? [first, second] : [second, first];
        if (t.errors > 0 || b.errors > 0) {
          throw new Error(
            `${runtime} ${route}: wrk saw ${t.errors} errors from Thaw and ${b.errors} from ` +
              `${baseline}`,
          );
        }
        thawSamples.push(t);
        baseSamples.push(b);
        cpuRatios.push(t.cpuUs / b.cpuUs);
        rpsRatios.push(t.rps / b.rps);
      }
    } finally {
      for (const child of children) await stop(child);
    }
  }
  const range = (xs: number[]) =>
    `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)})`;
  const who = `${version(runtime)} ${route}`;
  rows.push(
    `| ${who} | ${baseline} | ${median(thawSamples.map((s) => s.cpuUs)).toFixed(1)} / ${
      median(baseSamples.map((s) => s.cpuUs)).toFixed(1)
    } | ${range(cpuRatios)} | ${Math.round(median(thawSamples.map((s) => s.rps)))} / ${
      Math.round(median(baseSamples.map((s) => s.rps)))
    } | ${range(rpsRatios)} |`,
  );
  const [figure, ratio, met] = target.of === "cpu"
    ? ["CPU per request", median(cpuRatios), median(cpuRatios) <= target.atMost]
    : ["req/s", median(rpsRatios), median(rpsRatios) >= target.atLeast];
  const bound = target.of === "cpu" ? `at most ${target.atMost}x` : `at least ${target.atLeast}x`;
  verdicts.push(
    `${who}: Thaw ${ratio.toFixed(3)}x ${baseline}'s ${figure}, median of ` +
      `${cpuRatios.length} pairs (target ${bound}: ${met ? "met" : "NOT met"})`,
  );
  process.stdout.write(`  ${who} against ${baseline} done\n`);
}

printReport(
  "| runtime and route | baseline | CPU µs/req, Thaw / baseline (medians) | Thaw/baseline " +
    "CPU per pair: median (min-max) | req/s, Thaw / baseline | Thaw/baseline req/s per pair |",
  "| --- | --- | ---: | ---: | ---: | ---: |",
  rows,
  verdicts,
);
