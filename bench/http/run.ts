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
 * verdicts put Thaw with middleware against Hono with middleware, next to the ratio without. `deno`, `bun` and `node` are the ones on PATH (npm run puts the project's first).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { NEW_USER, user } from "./users.ts";

type Runtime = "deno" | "bun" | "node";
type Route = "GET /users/{id}" | "POST /users";
const ROUTES: readonly Route[] = ["GET /users/{id}", "POST /users"];

interface ServerSpec {
  readonly runtime: Runtime;
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly port: number;
  readonly env?: Readonly<Record<string, string>>;
  /** The routes it serves and is measured on. */
  readonly routes: readonly Route[];
}

interface Sample {
  readonly rps: number;
  /** The server's CPU time (user + system) per request, in µs. */
  readonly cpuUs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const SERVE = join(here, "serve.ts");
const NEST = join(here, "..", "nest", "main.ts");
const WRK_SCRIPT = join(here, "report.lua");
const SERVER_CPU = "1", LOAD_CPU = "0";

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`run.ts: --${name} must be a positive whole number, got "${text}"`);
    process.exit(2);
  }
  return n;
}

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
    runtimes: { type: "string", default: "deno,bun,node" },
  },
});
const duration = positive("duration", values.duration);
const rounds = positive("rounds", values.rounds);
const warmup = positive("warmup", values.warmup);
const connections = positive("connections", values.connections);
const runtimes = values.runtimes.split(",") as Runtime[];
for (const r of runtimes) {
  if (!["deno", "bun", "node"].includes(r)) {
    console.error(`run.ts: --runtimes takes deno, bun and node, got "${r}"`);
    process.exit(2);
  }
}

/** The servers each runtime runs: the app served.ts serves, its name, and whether `--middleware`. */
function apps(runtime: Runtime) {
  return [
    { app: "thaw", name: "Thaw", middleware: false },
    { app: "hono", name: "Hono", middleware: false },
    { app: "checked", name: CHECKED, middleware: false },
    { app: "careful", name: CAREFUL, middleware: false },
    { app: "bare", name: BARE[runtime], middleware: false },
    { app: "thaw", name: THAW_MIDDLEWARE, middleware: true },
    { app: "hono", name: HONO_MIDDLEWARE, middleware: true },
  ] as const;
}

function servers(runtime: Runtime, firstPort: number): ServerSpec[] {
  const list = apps(runtime);
  const specs: ServerSpec[] = list.map(({ app, name, middleware }, i) => {
    const port = firstPort + i;
    const served = [SERVE, app, String(port), ...(middleware ? ["--middleware"] : [])];
    // The checks concern a body: GET would measure bare Hono twice.
    const routes = app === "checked" || app === "careful"
      ? ROUTES.filter((r) => r.startsWith("POST"))
      : ROUTES;
    switch (runtime) {
      case "deno":
        return {
          runtime,
          name,
          routes,
          port,
          command: "deno",
          args: ["run", "--allow-net", "--allow-read", "--allow-env", ...served],
        };
      case "bun":
        return { runtime, name, routes, port, command: "bun", args: served };
      case "node":
        return {
          runtime,
          name,
          routes,
          port,
          command: "node",
          args: ["--import", "tsx", ...served],
        };
    }
  });
  if (runtime === "node") {
    for (const [i, platform] of ["express", "fastify"].entries()) {
      const port = firstPort + list.length + i;
      specs.push({
        runtime,
        name: `NestJS (${platform})`,
        command: "node",
        routes: ROUTES,
        port,
        args: ["--import", "tsx", NEST, platform, String(port)],
        // Nest needs TypeScript's legacy decorators: its folder's tsconfig turns them on.
        env: { TSX_TSCONFIG_PATH: join(here, "..", "nest", "tsconfig.json") },
      });
    }
  }
  return specs;
}
const CHECKED = "Hono + Thaw's body checks";
const CAREFUL = "Hono + bodyLimit + validator";
const THAW_MIDDLEWARE = "Thaw + cors + secureHeaders";
const HONO_MIDDLEWARE = "Hono + cors + secureHeaders";
const WITH_MIDDLEWARE: readonly string[] = [THAW_MIDDLEWARE, HONO_MIDDLEWARE];
const BARE: Record<Runtime, string> = {
  deno: "Deno.serve",
  bun: "Bun.serve",
  node: "node:http",
};

function portOf(spec: ServerSpec): number {
  return spec.port;
}

/** `Deno 2.9.6`, `Bun 1.4.5`, `Node 26.10.0`: the runtime on PATH that the servers run on. */
function version(runtime: Runtime): string {
  const result = spawnSync(runtime, ["--version"], { encoding: "utf8" });
  const number = /\d+\.\d+\.\d+/.exec(result.stdout ?? "")?.[0];
  if (result.status !== 0 || number === undefined) {
    console.error(`run.ts: cannot run "${runtime} --version": is ${runtime} installed?`);
    process.exit(1);
  }
  return `${runtime[0].toUpperCase()}${runtime.slice(1)} ${number}`;
}

/** Starts a server pinned to the server core; resolves once it prints `ready`. */
function start(spec: ServerSpec): Promise<ChildProcess> {
  const child = spawn("taskset", ["-c", SERVER_CPU, spec.command, ...spec.args], {
    cwd: root,
    env: { ...process.env, ...spec.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail("did not print `ready` within 60 s"), 60_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${spec.name} on ${spec.runtime} ${why}:\n${output}`));
    }
    child.stdout!.on("data", (chunk: Uint8Array) => {
      output += new TextDecoder().decode(chunk);
      if (/^ready$/m.test(output)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on("data", (chunk: Uint8Array) => output += new TextDecoder().decode(chunk));
    child.on("exit", (code) => fail(`exited (code ${code}) before it was ready`));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  child.removeAllListeners("exit");
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** The server answers its routes as the others do, or the benchmark stops. */
async function check(spec: ServerSpec): Promise<void> {
  const base = `http://127.0.0.1:${portOf(spec)}`;
  const cases: [Route, RequestInit, unknown][] = [
    ["GET /users/{id}", {}, user(42)],
    [
      "POST /users",
      {
        method: "POST",
        body: JSON.stringify(NEW_USER),
        headers: { "content-type": "application/json" },
      },
      { ...NEW_USER, id: 1 },
    ],
  ];
  for (const [route, init, expected] of cases) {
    if (!spec.routes.includes(route)) continue;
    const response = await fetch(
      `${base}${route.startsWith("GET") ? "/users/42" : "/users"}`,
      init,
    );
    const text = await response.text();
    const type = response.headers.get("content-type") ?? "";
    if (
      response.status !== 200 || !type.startsWith("application/json") ||
      JSON.stringify(JSON.parse(text)) !== JSON.stringify(expected)
    ) {
      throw new Error(
        `${spec.name} on ${spec.runtime}, ${route}: answered ${response.status} ${type} ${text}`,
      );
    }
    // The middleware servers must run both middlewares, and the others neither.
    const middleware = WITH_MIDDLEWARE.includes(spec.name);
    const cors = response.headers.get("access-control-allow-origin");
    const secure = response.headers.get("x-content-type-options");
    if (middleware ? cors !== "*" || secure !== "nosniff" : cors !== null || secure !== null) {
      throw new Error(
        `${spec.name} on ${spec.runtime}, ${route}: Access-Control-Allow-Origin ${cors}, ` +
          `X-Content-Type-Options ${secure}; expected ${middleware ? "* and nosniff" : "neither"}`,
      );
    }
  }
}

const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) ||
  100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** One wrk run against one server and route. */
function load(spec: ServerSpec, pid: number, route: Route, seconds: number): Sample {
  const cpuBefore = cpuSeconds(pid);
  const url = `http://127.0.0.1:${portOf(spec)}${route.startsWith("GET") ? "/users/42" : "/users"}`;
  const result = spawnSync(
    "taskset",
    [
      "-c",
      LOAD_CPU,
      "wrk",
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "--timeout",
      "2s",
      "-s",
      WRK_SCRIPT,
      url,
    ],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        BENCH_METHOD: route.startsWith("GET") ? "GET" : "POST",
        BENCH_BODY: route.startsWith("GET") ? "" : JSON.stringify(NEW_USER),
      },
    },
  );
  const cpu = cpuSeconds(pid) - cpuBefore;
  const line = result.stdout?.split("\n").find((l) => l.startsWith("RESULT "));
  if (result.status !== 0 || line === undefined) {
    throw new Error(`wrk failed on ${spec.name} (${spec.runtime}), ${route}:\n${result.stderr}`);
  }
  const r = JSON.parse(line.slice("RESULT ".length)) as {
    requests: number;
    duration_us: number;
    p50_us: number;
    p99_us: number;
    errors: Record<string, number>;
  };
  return {
    rps: r.requests / (r.duration_us / 1e6),
    cpuUs: (cpu * 1e6) / Math.max(r.requests, 1),
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function requireTools(): void {
  for (const tool of ["wrk", "taskset"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
      console.error(`run.ts: ${tool} not found (bench/run.sh installs wrk; taskset is util-linux)`);
      process.exit(1);
    }
  }
}

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
        for (const route of spec.routes) load(spec, children[i].pid!, route, warmup);
      }
      for (let i = 0; i < specs.length; i++) {
        const at = (i + round) % specs.length;
        const spec = specs[at];
        for (const route of spec.routes) {
          const key = `${spec.name}|${route}`;
          const sample = load(spec, children[at].pid!, route, duration);
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

console.log(
  "\n| runtime | route | server | req/s (median) | rounds min-max | p50 ms | p99 ms | errors " +
    "| CPU µs/req | req/s vs Hono | CPU vs Hono |",
);
console.log("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
console.log("");
for (const verdict of verdicts) console.log(verdict);
