/**
 * The HTTP benchmark: `GET /users/{id}` and `POST /users` served by Thaw, by the same handlers in
 * bare Hono and by the runtime's bare server, on Deno, Bun and Node, plus NestJS on express and on
 * fastify on Node, each loaded over real sockets by wrk. `POST /users` is also served by bare Hono
 * reading its body with the checks of Thaw's `RequestBody()` (checked_app.ts), which splits
 * Thaw's distance to Hono into what those checks cost and what the controller layer costs, and
 * by bare Hono with its own `bodyLimit` and `validator("json")` (careful_app.ts), what a careful
 * Hono user writes, so that what body checks cost in Hono itself shows beside it. Thaw and
 * Hono are served a second time with the same two Hono middlewares, `cors()` and `secureHeaders()`
 * (middleware.ts: `bootstrap({ middleware })` and `app.use("*", ...)`), so that what Thaw's
 * middleware path costs shows as the ratio of those two next to the ratio without.
 *
 *   deno run -A bench/http/run.ts [--duration 3] [--rounds 3] [--warmup 2] [--connections 64]
 *                                 [--runtimes deno,bun,node]
 *
 * Per runtime, the measure goes in rounds. Each round starts every server afresh, checks that it
 * answers both routes correctly, warms each server and route up, then measures each in turn (each
 * round in another order), so that a slow spell of the machine, or a lucky process, is spread over
 * all of them. The server runs on one core and wrk on the other (taskset). Reported per server and
 * route: the median requests/s of the rounds with their range, the median p50 and p99 latency,
 * every error wrk saw (sockets, timeouts, non-2xx answers), the server's CPU time per request
 * (from /proc: unlike requests/s, it does not move when the virtual machine's host takes the CPU
 * away), and the ratio of requests/s to bare Hono (without middleware) on the same runtime; the
 * verdicts put Thaw with middleware against Hono with middleware, next to the ratio without.
 * `deno`, `bun` and `node` are the ones on PATH (npm run puts the project's first). Its ratios
 * are of medians taken minutes apart; `paired.ts` measures Thaw and one baseline pair by pair, for
 * a ratio of a few percent.
 */
import process from "node:process";
import {
  benchOptions,
  CAREFUL,
  check,
  CHECKED,
  HONO_MIDDLEWARE,
  load,
  median,
  printReport,
  requireTools,
  ROUTES,
  type Sample,
  servers,
  type ServerSpec,
  start,
  stop,
  THAW_MIDDLEWARE,
  version,
  WITH_MIDDLEWARE,
} from "./servers.ts";
import type { ChildProcess } from "node:child_process";

const { duration, rounds, warmup, connections, runtimes } = benchOptions("run.ts", {
  duration: 3,
  rounds: 3,
  warmup: 2,
  connections: 64,
});

requireTools();
const versions = Object.fromEntries(runtimes.map((r) => [r, version(r)]));
// Server-routes: Thaw, Hono, the bare server and the two middleware servers serve both routes,
// the checked and the careful Hono POST only.
const cells = runtimes.length * 12 + (runtimes.includes("node") ? 4 : 0);
console.log(
  `HTTP: ${rounds} rounds, each of fresh servers, ${warmup} s warm-up and ${duration} s measured ` +
    `per server and route, ` +
    `wrk -t1 -c${connections}; ${cells} server-routes, about ` +
    `${Math.ceil((cells * rounds * (warmup + duration)) / 60)} min`,
);
const rows: string[] = [];
const verdicts: string[] = [];
let port = 18_100;
for (const runtime of runtimes) {
  const samples = new Map<string, Sample[]>();
  let specs: ServerSpec[] = [];
  for (let round = 0; round < rounds; round++) {
    // Fresh processes each round: one process can be luckier than another in what the JIT and
    // the memory layout give it, and that luck must average out like the machine's.
    specs = servers(runtime, port);
    port += 10;
    const children: ChildProcess[] = [];
    try {
      for (const spec of specs) children.push(await start(spec));
      for (const spec of specs) await check(spec);
      for (const [i, spec] of specs.entries()) {
        for (const route of spec.routes) load(spec, children[i].pid!, route, warmup, connections);
      }
      for (let i = 0; i < specs.length; i++) {
        const at = (i + round) % specs.length;
        const spec = specs[at];
        for (const route of spec.routes) {
          const key = `${spec.name}|${route}`;
          const sample = load(spec, children[at].pid!, route, duration, connections);
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
      }
    } finally {
      for (const child of children) await stop(child);
    }
    process.stdout.write(`  ${runtime}: round ${round + 1}/${rounds} done\n`);
  }
  for (const route of ROUTES) {
    const rpsOf = (name: string) => median(samples.get(`${name}|${route}`)!.map((s) => s.rps));
    const cpuOf = (name: string) => median(samples.get(`${name}|${route}`)!.map((s) => s.cpuUs));
    const hono = rpsOf("Hono");
    for (const spec of specs) {
      if (!spec.routes.includes(route)) continue;
      const s = samples.get(`${spec.name}|${route}`)!;
      const rps = s.map((x) => x.rps);
      rows.push(
        `| ${versions[runtime]} | ${route} | ${spec.name} | ${Math.round(median(rps))} | ` +
          `${Math.round(Math.min(...rps))}-${Math.round(Math.max(...rps))} | ` +
          `${median(s.map((x) => x.p50Ms)).toFixed(2)} | ${
            median(s.map((x) => x.p99Ms)).toFixed(2)
          } | ${s.reduce((a, x) => a + x.errors, 0)} | ${
            median(s.map((x) => x.cpuUs)).toFixed(1)
          } | ${(median(rps) / hono).toFixed(3)} | ${
            (median(s.map((x) => x.cpuUs)) / cpuOf("Hono")).toFixed(3)
          } |`,
      );
    }
    const thaw = rpsOf("Thaw");
    const errors = samples.get(`Thaw|${route}`)!.reduce((a, x) => a + x.errors, 0);
    verdicts.push(
      `${runtime} ${route}: Thaw at ${(100 * thaw / hono).toFixed(1)}% of Hono's req/s ` +
        `(target 97%: ${
          thaw / hono >= 0.97 && errors === 0 ? "met" : "NOT met"
        }), ${errors} errors; ` +
        `${(cpuOf("Thaw") / cpuOf("Hono")).toFixed(3)}x Hono's CPU per request`,
    );
    const thawWith = rpsOf(THAW_MIDDLEWARE);
    const honoWith = rpsOf(HONO_MIDDLEWARE);
    const errorsWith = WITH_MIDDLEWARE.map((name) =>
      samples.get(`${name}|${route}`)!.reduce((a, x) => a + x.errors, 0)
    );
    verdicts.push(
      `${runtime} ${route}: with cors() and secureHeaders(), Thaw at ` +
        `${(100 * thawWith / honoWith).toFixed(1)}% of Hono's req/s (without: ` +
        `${(100 * thaw / hono).toFixed(1)}%), ` +
        `${(cpuOf(THAW_MIDDLEWARE) / cpuOf(HONO_MIDDLEWARE)).toFixed(3)}x its CPU per request ` +
        `(without: ${(cpuOf("Thaw") / cpuOf("Hono")).toFixed(3)}x); the middleware costs Thaw ` +
        `${(100 * (1 - thawWith / thaw)).toFixed(1)}% of its req/s and Hono ` +
        `${(100 * (1 - honoWith / hono)).toFixed(1)}%; ${errorsWith[0]} and ${
          errorsWith[1]
        } errors`,
    );
    // The two POST baselines with checks: Thaw's checks in bare Hono, and Hono's own.
    for (const baseline of [CHECKED, CAREFUL]) {
      if (!samples.has(`${baseline}|${route}`)) continue;
      const other = rpsOf(baseline);
      verdicts.push(
        `${runtime} ${route}: ${baseline} at ${(100 * other / hono).toFixed(1)}% of Hono's ` +
          `req/s, ${(cpuOf(baseline) / cpuOf("Hono")).toFixed(3)}x its CPU per request; Thaw at ` +
          `${(100 * thaw / other).toFixed(1)}% of this server's req/s, ` +
          `${(cpuOf("Thaw") / cpuOf(baseline)).toFixed(3)}x its CPU per request`,
      );
    }
    if (runtime === "node") {
      for (const nest of ["NestJS (express)", "NestJS (fastify)"]) {
        const other = rpsOf(nest);
        verdicts.push(
          `node ${route}: Thaw ${(thaw / other).toFixed(2)}x ${nest} (target: ahead, ${
            thaw > other ? "met" : "NOT met"
          })`,
        );
      }
    }
  }
}

printReport(
  "| runtime | route | server | req/s (median) | rounds min-max | p50 ms | p99 ms | errors " +
    "| CPU µs/req | req/s vs Hono | CPU vs Hono |",
  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  rows,
  verdicts,
);
