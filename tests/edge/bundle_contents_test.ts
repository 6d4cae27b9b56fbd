// What an app configured in code carries when a bundler splits what is only reached by `import()`
// into chunks of its own (Vite, Rollup, `esbuild --splitting`): the modules its entry loads before
// running must not include the YAML parser, component scanning or the server, which such an app
// never uses. The sizes themselves are a benchmark (`npm run bench:startup`), not a test.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";
import { bundleWorkers, loadedChunks } from "../../tools/bundle_worker.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The input files of the chunks an entry loads before it runs (its static imports, transitively). */
async function loadedInputs(
  entry: string,
): Promise<{ loaded: Set<string>; lazy: Set<string>; external: Set<string> }> {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["node:*", "@hono/node-server"],
    outdir: join(root, "dist", "bundle-contents"),
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const outputs = result.metafile.outputs;
  const chunks = loadedChunks(result.metafile);
  const loaded = new Set<string>();
  const lazy = new Set<string>();
  // What the bundle imports from outside (`node:*`), statically or by `import()`.
  const external = new Set<string>();
  for (const [path, output] of Object.entries(outputs)) {
    for (const input of Object.keys(output.inputs)) (chunks.has(path) ? loaded : lazy).add(input);
    for (const i of output.imports) if (i.external) external.add(i.path);
  }
  return { loaded, lazy, external };
}

const has = (inputs: Set<string>, part: string) => [...inputs].some((i) => i.includes(part));

describe("an edge worker with explicit class lists, bundled in chunks", () => {
  after(() => stop());

  it("loads no YAML parser, component scanner or server before it runs", async () => {
    const { loaded, lazy } = await loadedInputs("examples/users/worker_explicit.ts");
    for (const part of ["src/web/compile.ts", "node_modules/hono/"]) {
      assert.ok(has(loaded, part), `${part} should be in the entry's chunks`);
    }
    for (
      const part of [
        "node_modules/js-yaml/",
        "src/config/yaml_config.ts",
        "src/context/component_scan.ts",
        "src/runtime/serve.ts",
        // It serves no OpenAPI document: its keys, the generator and the page stay unloaded.
        "src/openapi/openapi_options.ts",
        "src/openapi/openapi_document.ts",
        "src/openapi/json_schema.ts",
        "src/openapi/openapi_routes.ts",
        "src/openapi/docs_page.ts",
        // Nor health: its settings, the checks' runner, the aggregation and the routes.
        "src/actuator/health_settings.ts",
        "src/actuator/health_check.ts",
        "src/actuator/health.ts",
        "src/actuator/health_routes.ts",
      ]
    ) {
      assert.ok(!has(loaded, part), `${part} is loaded by a worker that never uses it`);
    }
    // Still in the bundle, for the apps that take those paths.
    for (
      const part of [
        "node_modules/js-yaml/",
        "src/context/component_scan.ts",
        "src/openapi/openapi_document.ts",
        "src/actuator/health_routes.ts",
      ]
    ) {
      assert.ok(has(lazy, part), `${part} should be in a chunk of its own`);
    }
  });

  for (const entry of ["examples/users/worker.ts", "examples/users/worker_explicit.ts"]) {
    it(`${entry}: neither SQLite nor the migration runner is in the bundle, not even lazily`, async () => {
      const { loaded, lazy, external } = await loadedInputs(entry);
      const all = new Set([...loaded, ...lazy]);
      assert.ok(has(all, "examples/users/storage/memory_user_repository.ts"));
      // The runners (and the migrate.ts entry point): both loops, each runner, its drivers.
      const runner = [
        "src/migrate/migration_runner.ts",
        "src/migrate/run_migrations.ts",
        "src/migrate/sql/",
        "src/migrate/search/",
      ];
      assert.ok(![...all].some((i) => /(^|\/)migrate\.ts$/.test(i)), "migrate.ts is in the bundle");
      for (const part of [...runner, "examples/users/storage/sqlite_storage.ts"]) {
        assert.ok(!has(all, part), `${part} is in the worker's bundle`);
      }
      assert.ok(!external.has("node:sqlite"), `the worker imports node:sqlite: ${[...external]}`);
    });
  }

  it("the one-file worker bundles (as Wrangler builds) import no node: module at load", async () => {
    // Without splitting, esbuild inlines what `import()` reaches and hoists its static imports of
    // external modules to the top of the file: a `node:` import there is evaluated at load, and
    // fails on workerd without `nodejs_compat`, whether or not the app takes that path.
    const dir = await mkdtemp(join(tmpdir(), "thaw-bundle-"));
    try {
      await bundleWorkers(dir);
      for (const file of ["users.js", "users_explicit.js"]) {
        const code = await readFile(join(dir, file), "utf8");
        const hoisted = [...code.matchAll(/from\s*"(node:[^"]+)"/g)].map((m) => m[1]);
        assert.deepEqual(hoisted, [], `${file} imports ${hoisted.join(", ")} at load`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
