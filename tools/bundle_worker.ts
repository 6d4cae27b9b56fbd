/**
 * Bundles the sample users app for workerd / Cloudflare Workers with esbuild, into
 * `dist/workerd/` beside a copy of `examples/users/workerd/config.capnp`:
 * `npm run bundle:worker`, then `workerd serve dist/workerd/config.capnp`.
 *
 * @module
 */
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import type { Metafile } from "esbuild";

const root = fileURLToPath(new URL("../", import.meta.url));

/**
 * esbuild's options for a worker: one ES module per entry, in which esbuild lowers the TC39
 * decorators (workerd parses none) and drops nothing but what the worker cannot load. The
 * file-system paths of the library (component scanning, application.yml, the Node server) are
 * dynamic `node:` imports that an app configured in code never reaches, so they stay outside the
 * bundle.
 */
export const WORKER_BUILD = {
  bundle: true,
  format: "esm",
  // Wrangler's default. esbuild reads package.json's `browser` field on this platform alone:
  // through it, OpenTelemetry's packages swap their Node files (which import `os`, `util`, `fs`)
  // for ones that need nothing but the web's APIs, so that a worker can bundle them.
  platform: "browser",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["node:*", "@hono/node-server"],
} as const satisfies esbuild.BuildOptions;

/** Bundles both workers of the sample app into `outDir`, beside their workerd configuration. */
export async function bundleWorkers(outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  await esbuild.build({
    ...WORKER_BUILD,
    entryPoints: [
      { in: join(root, "examples/users/worker.ts"), out: "users" },
      { in: join(root, "examples/users/worker_explicit.ts"), out: "users_explicit" },
    ],
    outdir: outDir,
    minify: true,
    logLevel: "warning",
  });
  const config = join(outDir, "config.capnp");
  await copyFile(join(root, "examples/users/workerd/config.capnp"), config);
  return config;
}

/**
 * The output files an entry loads before it runs, in a build with `splitting`: the entry's chunk
 * and, transitively, the chunks it imports statically. Chunks reached only by `import()` are left
 * out: an app loads them only when it takes that path.
 */
export function loadedChunks(metafile: Metafile): Set<string> {
  const { outputs } = metafile;
  const chunks = new Set<string>();
  const visit = (path: string) => {
    if (chunks.has(path)) return;
    chunks.add(path);
    for (const i of outputs[path].imports) {
      if (i.kind === "import-statement" && outputs[i.path] !== undefined) visit(i.path);
    }
  };
  // esbuild names an `entryPoint` for the entry and for every module an `import()` reaches: the
  // entry is the one no output imports.
  const imported = new Set(
    Object.values(outputs).flatMap((output) => output.imports.map((i) => i.path)),
  );
  visit(
    Object.keys(outputs).find((path) =>
      outputs[path].entryPoint !== undefined && !imported.has(path)
    )!,
  );
  return chunks;
}

if (import.meta.main) {
  const config = await bundleWorkers(join(root, "dist", "workerd"));
  console.log(`wrote ${config} and its bundles: workerd serve ${config}`);
  await esbuild.stop();
  process.exit(0);
}
