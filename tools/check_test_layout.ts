// Checks that tests/ mirrors src/, so that a maintainer finds a module's tests by its path:
// 1. every folder of tests/ is the mirror of a folder of src/ (tests/migrate/search/reindex/ for
//    src/migrate/search/reindex/), but for the suites of one runtime or package listed below;
// 2. a test named after a module (tests/migrate/engine_test.ts) reaches that module;
// 3. every module of src/ with code is reached by the tests (and test helpers) of its mirrored
//    folder: imported directly, through another module of the same folder, or through the public
//    entry point that exports it (the web half is tested as users use it, through mod.ts). A
//    module tested from another folder is listed below, with the test that covers it.
// Reads files only: deno run --allow-read tools/check_test_layout.ts
import { dirname, join, normalize } from "node:path";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { entryPoints } from "./entry_points.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

// Suites about a runtime, a package or a worked example rather than one src/ folder.
const OWN_SUITES = [
  "tests/deno/",
  "tests/npm/",
  "tests/edge/",
  "tests/examples/",
  "tests/types/",
  "tests/tools/",
];
const HELPERS_ONLY = ["tests/fixtures/"];
const ENTRY_POINTS = entryPoints(ROOT);
// Modules no import of their folder's tests shows: the module, and the test that covers it.
const COVERED_ELSEWHERE: Record<string, string> = {
  // The settings every connection list shares, tested as each kind reads them.
  "src/migrate/config/connection_config.ts": "tests/migrate/sql/sql_config_test.ts",
  "src/config/connection_settings.ts": "tests/migrate/search/search_connection_test.ts",
  // Joins data access and the runner (`data({ migrate })`), as an app uses it.
  "src/migrate_at_start.ts": "tests/data/data_setup_test.ts",
  // The runner's one core run at start, with one driver: as apps use it, with each driver.
  "src/migrate/at_start.ts": "tests/search/search_migrate_test.ts",
  // What a folder given from code is: through migrate() and the runs at start that take one.
  "src/migrate/option_folder.ts": "tests/migrate/migrate_api_test.ts",
  // Reads the live cluster: driven end to end by the command line on the real node.
  "src/migrate/search/drift/live_resources.ts": "tests/migrate/search/drift/drift_cluster_test.ts",
};

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await tsFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const STATIC =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:([^;]*?)\s+from\s*)?["'](\.{1,2}\/[^"']+)["']/g;
const DYNAMIC = /\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
const COMMENTS = /\/\*[\s\S]*?\*\/|(?<![:"'])\/\/.*/g;

interface Imports {
  /** What the module runs at load: its imports, but type-only ones (they run nothing). */
  readonly static: string[];
  /** What it may load later, `import("./x.ts")`. */
  readonly dynamic: string[];
}

// `import type { A }` and `import { type A, type B }` run nothing of the module.
function typeOnly(keyword: string | undefined, names: string | undefined): boolean {
  if (keyword !== undefined) return true;
  const inBraces = names?.match(/^\{([\s\S]*)\}$/)?.[1];
  if (inBraces === undefined) return false;
  const parts = inBraces.split(",").map((p) => p.trim()).filter(Boolean);
  return parts.length > 0 && parts.every((p) => p.startsWith("type "));
}

const cache = new Map<string, Promise<Imports>>();
function importsIn(file: string): Promise<Imports> {
  let found = cache.get(file);
  if (found === undefined) {
    const at = (spec: string) => normalize(join(dirname(file), spec));
    // A source a test writes for a fixture may name a module that is not there: not an import.
    found = readFile(join(ROOT, file), "utf8").then((raw) => {
      const text = raw.replace(COMMENTS, "");
      return {
        static: [...text.matchAll(STATIC)].filter((m) => !typeOnly(m[1], m[2]?.trim()))
          .map((m) => at(m[3])),
        dynamic: [...text.matchAll(DYNAMIC)].map((m) => at(m[1])),
      };
    }, () => ({ static: [], dynamic: [] }));
    cache.set(file, found);
  }
  return found;
}

async function importsOf(file: string): Promise<string[]> {
  const { static: loaded, dynamic } = await importsIn(file);
  return [...loaded, ...dynamic];
}

async function reachable(from: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const next = [from];
  while (next.length > 0) {
    const file = next.pop()!;
    if (seen.has(file) || !file.endsWith(".ts")) continue;
    seen.add(file);
    // What an entry point loads with it: a lazy import (a driver) is tested where it lives.
    next.push(...(await importsIn(file)).static.filter((f) => f.startsWith("src/")));
  }
  return seen;
}

// Only types and constants: nothing to run, nothing to test on its own.
async function hasCode(module: string): Promise<boolean> {
  const text = (await readFile(join(ROOT, module), "utf8"))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*/g, "");
  const constant = /^\s*(export\s+)?const\s+\w+(:\s*[\w<>, ]+)?\s*=\s*(-?[\d_.]+|"[^"]*");?\s*$/gm;
  return /^\s*(export\s+)?(async\s+)?(function|class|const|let)\b/m.test(
    text.replace(constant, ""),
  );
}

const problems: string[] = [];
const sources = (await tsFiles("src")).sort();
const tests = (await tsFiles("tests")).filter((t) => !HELPERS_ONLY.some((h) => t.startsWith(h)));
const sourceFolders = new Set(sources.map((s) => dirname(s)));
const mirrorOf = (folder: string) => folder.replace(/^tests/, "src");

for (const folder of new Set(tests.map((t) => dirname(t)))) {
  if (folder === "tests" || OWN_SUITES.some((s) => `${folder}/`.startsWith(s))) continue;
  if (!sourceFolders.has(mirrorOf(folder))) {
    problems.push(`${folder}/: no folder ${mirrorOf(folder)}/ for it to mirror`);
  }
}

const entryReach = new Map<string, Set<string>>();
for (const entry of ENTRY_POINTS) entryReach.set(entry, await reachable(entry));

// What the tests and helpers of one folder reach of its mirrored src/ folder.
async function reachedFrom(files: readonly string[], folder: string): Promise<Set<string>> {
  const reached = new Set<string>();
  const next = (await Promise.all(files.map(importsOf))).flat();
  while (next.length > 0) {
    const file = next.pop()!;
    if (reached.has(file)) continue;
    const entry = entryReach.get(file);
    if (entry !== undefined) {
      // What the entry point loads of this folder, and what those modules load in turn (a
      // runtime's own listener, loaded when the tests run on that runtime).
      for (const m of entry) {
        reached.add(m);
        if (dirname(m) === folder) next.push(...await importsOf(m));
      }
    } else if (dirname(file) === folder) {
      reached.add(file);
      next.push(...await importsOf(file));
    } else if (file.startsWith("tests/") && !file.endsWith("_test.ts")) {
      // A test helper (a workspace, a CLI runner): what it drives, the test drives.
      reached.add(file);
      next.push(...await importsOf(file));
    }
  }
  return reached;
}

const testsByFolder = new Map<string, string[]>();
for (const test of tests) {
  testsByFolder.set(dirname(test), [...testsByFolder.get(dirname(test)) ?? [], test]);
}

for (const test of tests.filter((t) => t.endsWith("_test.ts"))) {
  const folder = mirrorOf(dirname(test));
  const module = join(folder, `${test.slice(test.lastIndexOf("/") + 1, -8)}.ts`);
  if (sources.includes(module) && !(await reachedFrom([test], folder)).has(module)) {
    problems.push(`${test}: named after ${module}, but does not reach it`);
  }
}

const reachedIn = new Map<string, Set<string>>();
for (const module of sources) {
  if (!(await hasCode(module))) continue;
  const folder = dirname(module);
  const covering = COVERED_ELSEWHERE[module];
  if (covering !== undefined) {
    if (!tests.includes(covering)) {
      problems.push(`${module}: listed as covered by ${covering}, which does not exist`);
    }
    continue;
  }
  let reached = reachedIn.get(folder);
  if (reached === undefined) {
    reached = await reachedFrom(testsByFolder.get(folder.replace(/^src/, "tests")) ?? [], folder);
    reachedIn.set(folder, reached);
  }
  if (!reached.has(module)) {
    problems.push(
      `${module}: no test or helper in ${folder.replace(/^src/, "tests")}/ reaches it`,
    );
  }
}

if (problems.length > 0) {
  console.error(
    `tests/ does not mirror src/ (tools/check_test_layout.ts says the rule):\n` +
      problems.map((p) => `  ${p}`).join("\n"),
  );
  Deno.exit(1);
}
console.log(`tests/ mirrors src/: ${sources.length} modules, ${tests.length} test files`);
