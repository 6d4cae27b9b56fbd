// workerd (Cloudflare's runtime, from npm) for the edge tests: its binary, and a wait until a worker
// it serves answers.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createRequire } from "node:module";
import { build, type Plugin, stop } from "esbuild";
import { WORKER_BUILD } from "../../tools/bundle_worker.ts";
import { freePort } from "../helpers.ts";
import { tempDir } from "../temp_dir.ts";

/** The binary the workerd package installs for this platform. */
export const WORKERD: string = createRequire(import.meta.url)("workerd").default;

/** A workerd binary, and the compatibility date its workers get. */
export interface WorkerdBuild {
  readonly binary: string;
  readonly compatibilityDate: string;
}

/**
 * The workerd that `wrangler dev` 4.86 runs (`npm view wrangler@4.86 dependencies`), installed as
 * the `workerd-wrangler` alias: older than {@linkcode WORKERD}, and stricter at global scope (it
 * refuses `new AbortController()` there, which later builds allow). Looked up when asked for, so
 * that the other edge tests run without it.
 */
export function wranglerWorkerd(): WorkerdBuild {
  return {
    binary: createRequire(import.meta.url)("workerd-wrangler").default,
    // The newest date that build accepts: its own.
    compatibilityDate: "2026-04-26",
  };
}

/**
 * Resolves once `url` answers, whatever the status; rejects when workerd exits first (with its
 * output, `log()`) or when nothing answers within 60 s (a give-up only: a loaded machine may take
 * many seconds to start it).
 */
export async function until(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`workerd exited ${child.exitCode}: ${log()}`);
    try {
      await (await fetch(url)).body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`workerd did not answer at ${url} within 60 s: ${log()}`);
}

/** workerd started by {@linkcode startWorkerd}: the process, its ports and what it printed. */
export interface StartedWorkerd {
  readonly child: ChildProcess;
  readonly ports: readonly number[];
  output(): string;
}

/**
 * Starts workerd with the arguments `args` makes of `count` free ports, and resolves once
 * `ready(ports, child, output)` does. A port found free may be taken before workerd binds it: a
 * connection of another test (the lanes run side by side) picks its source port from the range
 * free ports come from. workerd then exits with "Address already in use", and is started again on
 * other ports, up to five times; any other failure is thrown at once. `pick` finds a port (a test
 * hands one that is taken).
 */
export async function startWorkerd(
  count: number,
  args: (ports: readonly number[]) => string[],
  ready: (ports: readonly number[], child: ChildProcess, output: () => string) => Promise<void>,
  pick: () => Promise<number> = freePort,
  binary: string = WORKERD,
): Promise<StartedWorkerd> {
  for (let attempt = 1;; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await pick();
      if (!ports.includes(port)) ports.push(port);
    }
    const child = spawn(binary, args(ports), { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout!.on("data", (chunk) => text += chunk);
    child.stderr!.on("data", (chunk) => text += chunk);
    const output = () => text;
    try {
      await ready(ports, child, output);
      return { child, ports, output };
    } catch (error) {
      child.kill();
      if (attempt >= 5 || !text.includes("Address already in use")) throw error;
    }
  }
}

/** A worker served by workerd, alone, for one test file. */
export interface ServedWorker {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** What workerd printed so far. */
  output(): string;
  /** Stops workerd and deletes the bundle. */
  close(): Promise<void>;
}

/** How {@linkcode serveWorker} serves a worker. */
export interface ServeOptions {
  /** Compatibility flags, such as `"nodejs_compat"`. */
  readonly flags?: readonly string[];
  /** The path whose answer, whatever its status, says the worker is up. `/` by default. */
  readonly readyPath?: string;
  /** Another workerd (such as {@linkcode wranglerWorkerd}'s) than {@linkcode WORKERD}. */
  readonly workerd?: WorkerdBuild;
  /**
   * Lets the worker's `fetch` reach loopback and private addresses (a test's node on 127.0.0.1),
   * which workerd's default outbound network refuses.
   */
  readonly loopbackOutbound?: boolean;
  /**
   * Bundles a package's `require("http")` and the like as Wrangler does under `nodejs_compat`:
   * each Node built-in named without `node:` becomes the runtime's `node:` module.
   */
  readonly nodeBuiltins?: boolean;
  /** Text bindings, the worker's `env`. */
  readonly bindings?: Readonly<Record<string, string>>;
}

// Node's built-ins named without `node:`, as CommonJS packages require them (a list of its own:
// Bun's `builtinModules` counts packages such as undici among them).
const BARE_BUILTIN = new RegExp(
  `^(?:${
    [
      "assert",
      "async_hooks",
      "buffer",
      "child_process",
      "crypto",
      "dns",
      "events",
      "fs",
      "fs/promises",
      "http",
      "http2",
      "https",
      "net",
      "os",
      "path",
      "perf_hooks",
      "process",
      "querystring",
      "stream",
      "stream/web",
      "string_decoder",
      "timers",
      "tls",
      "tty",
      "url",
      "util",
      "util/types",
      "v8",
      "zlib",
    ].join("|")
  })$`,
);

/** Wrangler's `nodejs_compat` bundling of bare built-ins, for {@linkcode ServeOptions.nodeBuiltins}. */
export const nodeBuiltins: Plugin = {
  name: "node-builtins",
  setup(build) {
    build.onResolve(
      { filter: BARE_BUILTIN },
      (args) => ({ path: args.path, namespace: "node-builtin" }),
    );
    // What Wrangler writes: the module itself, so that a package may call it (`assert(x)`).
    build.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({
      contents: `import m from "node:${args.path}";\nmodule.exports = m;\n`,
      loader: "js",
    }));
  },
};

/**
 * Bundles `fixture` as tools/bundle_worker.ts bundles the sample app, serves it alone on workerd
 * (with `flags`, such as `"nodejs_compat"`) on a free port, and resolves once `readyPath` answers.
 */
export async function serveWorker(
  fixture: string,
  name: string,
  options: ServeOptions = {},
): Promise<ServedWorker> {
  // Removed by close(), or at once when workerd does not start.
  const folder = await tempDir(`thaw-workerd-${name}-`);
  const dir = folder.path;
  await build({
    ...WORKER_BUILD,
    entryPoints: [{ in: fixture, out: name }],
    outdir: dir,
    minify: true,
    logLevel: "warning",
    ...(options.nodeBuiltins ? { plugins: [nodeBuiltins] } : {}),
  });
  await stop();
  const outbound = options.loopbackOutbound ? `,\n  globalOutbound = "loopback"` : "";
  const loopback = options.loopbackOutbound
    ? `,\n    (name = "loopback", network = (allow = ["public", "private", "local"]))`
    : "";
  const flags = (options.flags ?? []).map((flag) => JSON.stringify(flag)).join(", ");
  const bindings = Object.entries(options.bindings ?? {}).map(([name, text]) =>
    `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(text)})`
  ).join(", ");
  await writeFile(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .main)${loopback}],
  sockets = [(name = "main", address = "127.0.0.1:0", http = (), service = "main")],
);

const main :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "${name}.js")],
  compatibilityDate = "${options.workerd?.compatibilityDate ?? "2026-10-23"}",
  compatibilityFlags = [${flags}]${outbound},
  bindings = [${bindings}],
);
`,
  );
  const { child, ports, output } = await startWorkerd(
    1,
    ([port]) => ["serve", join(dir, "config.capnp"), "--socket-addr", `main=127.0.0.1:${port}`],
    ([port], child, output) =>
      until(`http://127.0.0.1:${port}${options.readyPath ?? "/"}`, child, output),
    freePort,
    options.workerd?.binary,
  ).catch(async (error) => {
    await folder[Symbol.asyncDispose]();
    throw error;
  });
  const origin = `http://127.0.0.1:${ports[0]}`;
  const close = async () => {
    child.kill();
    await folder[Symbol.asyncDispose]();
  };
  return { origin, output, close };
}

/** A worker served beside a trigger worker, which calls the worker's other handlers for a test. */
export interface TriggeredWorker {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` of the worker under test. */
  readonly app: string;
  /** `http://127.0.0.1:<port>` of the trigger worker. */
  readonly trigger: string;
  /** What workerd printed so far. */
  output(): string;
}

/** What {@linkcode serveWithTrigger} serves. */
export interface TriggerSetup {
  /** The worker under test, bundled into `dir` as `<name>.js`. */
  readonly fixture: string;
  readonly name: string;
  /** Its folder, removed by the test's own cleanup. */
  readonly dir: string;
  /** The trigger worker's module, written as `trigger.js`. */
  readonly trigger: string;
  /** The config, written as `config.capnp`: its sockets are `app` and `trigger`. */
  readonly config: string;
  /** The worker's path whose answer, whatever its status, says it is up. */
  readonly readyPath: string;
}

/**
 * Bundles the worker as tools/bundle_worker.ts bundles the sample app, writes the trigger's module
 * and the config, and serves both with `workerd serve --experimental`: the trigger reaches the
 * worker's `scheduled` and `queue` handlers through a service binding, which the compatibility
 * flag `service_binding_extra_handlers` allows, an experimental one (the trigger's alone).
 */
export async function serveWithTrigger(setup: TriggerSetup): Promise<TriggeredWorker> {
  const { dir } = setup;
  await build({
    ...WORKER_BUILD,
    entryPoints: [{ in: setup.fixture, out: setup.name }],
    outdir: dir,
    minify: true,
    logLevel: "warning",
  });
  await stop();
  await writeFile(join(dir, "trigger.js"), setup.trigger);
  await writeFile(join(dir, "config.capnp"), setup.config);
  const { child, ports, output } = await startWorkerd(2, ([appPort, triggerPort]) => [
    "serve",
    "--experimental",
    join(dir, "config.capnp"),
    "--socket-addr",
    `app=127.0.0.1:${appPort}`,
    "--socket-addr",
    `trigger=127.0.0.1:${triggerPort}`,
  ], ([appPort], child, log) => until(`http://127.0.0.1:${appPort}${setup.readyPath}`, child, log));
  return {
    child,
    app: `http://127.0.0.1:${ports[0]}`,
    trigger: `http://127.0.0.1:${ports[1]}`,
    output,
  };
}
