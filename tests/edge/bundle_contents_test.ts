// What an app configured in code carries when a bundler splits what is only reached by `import()`
// into chunks of its own (Vite, Rollup, `esbuild --splitting`): the modules its entry loads before
// running must not include the YAML parser, component scanning or the server, which such an app
// never uses. The sizes themselves are a benchmark (`npm run bench:startup`), not a test.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";
import { loadedChunks } from "../../tools/bundle_worker.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The input files of the chunks an entry loads before it runs (its static imports, transitively). */
async function loadedInputs(entry: string): Promise<{ loaded: Set<string>; lazy: Set<string> }> {
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
  for (const [path, output] of Object.entries(outputs)) {
    for (const input of Object.keys(output.inputs)) (chunks.has(path) ? loaded : lazy).add(input);
  }
  return { loaded, lazy };
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
      ]
    ) {
      assert.ok(!has(loaded, part), `${part} is loaded by a worker that never uses it`);
    }
    // Still in the bundle, for the apps that take those paths.
    for (const part of ["node_modules/js-yaml/", "src/context/component_scan.ts"]) {
      assert.ok(has(lazy, part), `${part} should be in a chunk of its own`);
    }
  });
});
