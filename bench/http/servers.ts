/**
 * The servers of the HTTP benchmark and how one is loaded: what each runtime serves
 * (`serve.ts`, NestJS on Node), starting one pinned to the server core, checking that it answers
 * as the others do, and one wrk run against it with the server's CPU time from `/proc`. Shared by
 * `run.ts` (every server, in rounds) and `paired.ts` (Thaw against one baseline, pair by pair).
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { NEW_USER, user } from "./users.ts";

export type Runtime = "deno" | "bun" | "node";
export type Route = "GET /users/{id}" | "POST /users";
export const ROUTES: readonly Route[] = ["GET /users/{id}", "POST /users"];

export interface ServerSpec {
  readonly runtime: Runtime;
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly port: number;
  readonly env?: Readonly<Record<string, string>>;
  /** The routes it serves and is measured on. */
  readonly routes: readonly Route[];
}

export interface Sample {
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

export function servers(runtime: Runtime, firstPort: number): ServerSpec[] {
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
export const CHECKED = "Hono + Thaw's body checks";
export const CAREFUL = "Hono + bodyLimit + validator";
export const THAW_MIDDLEWARE = "Thaw + cors + secureHeaders";
export const HONO_MIDDLEWARE = "Hono + cors + secureHeaders";
export const WITH_MIDDLEWARE: readonly string[] = [THAW_MIDDLEWARE, HONO_MIDDLEWARE];
const BARE: Record<Runtime, string> = {
  deno: "Deno.serve",
  bun: "Bun.serve",
  node: "node:http",
};

export function portOf(spec: ServerSpec): number {
  return spec.port;
}

/** `Deno 2.9.6`, `Bun 1.4.5`, `Node 26.10.0`: the runtime on PATH that the servers run on. */
export function version(runtime: Runtime): string {
  const result = spawnSync(runtime, ["--version"], { encoding: "utf8" });
  const number = /\d+\.\d+\.\d+/.exec(result.stdout ?? "")?.[0];
  if (result.status !== 0 || number === undefined) {
    console.error(`bench: cannot run "${runtime} --version": is ${runtime} installed?`);
    process.exit(1);
  }
  return `${runtime[0].toUpperCase()}${runtime.slice(1)} ${number}`;
}

/** Starts a server pinned to the server core; resolves once it prints `ready`. */
export function start(spec: ServerSpec): Promise<ChildProcess> {
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

export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  child.removeAllListeners("exit");
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** The server answers its routes as the others do, or the benchmark stops. */
export async function check(spec: ServerSpec): Promise<void> {
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
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** One wrk run against one server and route. */
export function load(
  spec: ServerSpec,
  pid: number,
  route: Route,
  seconds: number,
  connections: number,
): Sample {
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

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function requireTools(): void {
  for (const tool of ["wrk", "taskset"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
      console.error(`bench: ${tool} not found (bench/run.sh installs wrk; taskset is util-linux)`);
      process.exit(1);
    }
  }
}

/**
 * Reads the command line of a bench script: every option a positive whole number (`defaults`
 * says which there are), and `--runtimes`, a comma-separated list of deno, bun and node. Exits
 * with 2, naming `script`, on anything else.
 */
export function benchOptions<K extends string>(
  script: string,
  defaults: Readonly<Record<K, number>>,
): Record<K, number> & { runtimes: Runtime[] } {
  const options = Object.fromEntries(
    [...Object.entries(defaults), ["runtimes", "deno,bun,node"]].map(([name, value]) => [
      name,
      { type: "string" as const, default: String(value) },
    ]),
  );
  const { values } = parseArgs({ options }) as { values: Record<string, string> };
  const usage = (why: string): never => {
    console.error(`${script}: ${why}`);
    process.exit(2);
  };
  const read = Object.fromEntries(
    Object.keys(defaults).map((name) => {
      const n = Number(values[name]);
      if (!Number.isInteger(n) || n < 1) {
        usage(`--${name} must be a positive whole number, got "${values[name]}"`);
      }
      return [name, n];
    }),
  ) as Record<K, number>;
  const runtimes = values.runtimes.split(",") as Runtime[];
  for (const r of runtimes) {
    if (!["deno", "bun", "node"].includes(r)) {
      usage(`--runtimes takes deno, bun and node, got "${r}"`);
    }
  }
  return { ...read, runtimes };
}

/** Prints a run's table (`header`: its column names; `align`: its separator row) and verdicts. */
export function printReport(
  header: string,
  align: string,
  rows: readonly string[],
  verdicts: readonly string[],
): void {
  console.log(`\n${header}`);
  console.log(align);
  for (const row of rows) console.log(row);
  console.log("");
  for (const verdict of verdicts) console.log(verdict);
}
