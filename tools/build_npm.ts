/**
 * Builds the npm package into `dist/npm` and packs it into `dist/`: ESM JavaScript with `.d.ts`
 * files that Node 20+ imports without a loader, the migration CLI as the `thaw` bin, and the
 * runners from code as `@thaw/thaw/migrate`.
 * TypeScript does both the JavaScript (lowering the TC39 decorators no engine runs yet) and the
 * declarations, from the same sources JSR publishes.
 *
 * Run: `npm run pack` (on Node through tsx, or `deno run -A tools/build_npm.ts`). Prints the
 * tarball's path.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { chmod, copyFile, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../", import.meta.url));
const out = join(root, "dist", "npm");

interface PackageJson {
  name: string;
  version: string;
  description: string;
  license: string;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/**
 * TypeScript rewrites `.ts` specifiers in the JavaScript it emits but keeps them in declarations,
 * which a consumer without `allowImportingTsExtensions` then cannot resolve.
 */
async function rewriteDeclarationImports(optionalPeers: readonly string[]): Promise<void> {
  // A declaration that names an optional peer dependency's types (the OpenSearch client's, for
  // `@thaw/thaw/search`): an install without that package must still type-check, the type then
  // empty; with it, the type is the package's.
  const names = optionalPeers.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .join("|");
  const peer = new RegExp(`^(import type [^\\n]* from ["'](?:${names})(?:/[^"']*)?["'];)$`, "gm");
  // A type written `typeof import("peer")` (OpenTelemetry's, for the actuator): the line it is on.
  const inline = new RegExp(
    `^([^\\n]*\\bimport\\(["'](?:${names})(?:/[^"']*)?["']\\)[^\\n]*)$`,
    "gm",
  );
  for (const file of await filesUnder(out)) {
    if (!file.endsWith(".d.ts")) continue;
    const text = await readFile(file, "utf8");
    let fixed = text.replace(
      /((?:from|import)\s*\(?\s*["']\.{1,2}\/[^"']*)\.ts(["'])/g,
      "$1.js$2",
    );
    if (optionalPeers.length > 0) {
      fixed = fixed.replace(peer, "// @ts-ignore: an optional peer dependency, maybe absent\n$1")
        .replace(inline, "// @ts-ignore: an optional peer dependency, maybe absent\n$1");
    }
    if (fixed !== text) await writeFile(file, fixed);
  }
}

async function main(): Promise<void> {
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as PackageJson;
  const deno = JSON.parse(await readFile(join(root, "deno.json"), "utf8")) as {
    exports: Record<string, string>;
  };
  await rm(out, { recursive: true, force: true });
  const tsc = join(root, "node_modules", ".bin", "tsc");
  await run(tsc, ["-p", join(root, "tsconfig.build.json")], { cwd: root }).catch((error) => {
    throw new Error(`tsc failed:\n${error.stdout}${error.stderr}`);
  });
  await rewriteDeclarationImports(
    Object.entries(pkg.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional === true)
      .map(([name]) => name),
  );
  const cli = join(out, "cli.js");
  await writeFile(cli, `#!/usr/bin/env node\n${await readFile(cli, "utf8")}`);
  await chmod(cli, 0o755);
  const manifest = {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    type: "module",
    // The entry points JSR publishes, each with its declarations.
    exports: Object.fromEntries(
      Object.entries(deno.exports).map(([name, file]) => {
        const js = file.replace(/\.ts$/, ".js");
        return [name, { types: js.replace(/\.js$/, ".d.ts"), default: js }];
      }),
    ),
    bin: { thaw: "./cli.js" },
    engines: { node: ">=20" },
    sideEffects: ["./mod.js", "./src/context/symbol_metadata.js"],
    dependencies: pkg.dependencies,
    // The database drivers, undici and the Redis client: loaded only by a datasource of their kind
    // (or a proxy on Node, or a RedisCacheManager), so a web-only install brings none of them. In
    // the repository they are dev dependencies too, for the tests.
    ...(pkg.peerDependencies ? { peerDependencies: pkg.peerDependencies } : {}),
    ...(pkg.peerDependenciesMeta ? { peerDependenciesMeta: pkg.peerDependenciesMeta } : {}),
  };
  await writeFile(join(out, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await copyFile(join(root, "README.md"), join(out, "README.md"));
  await copyFile(join(root, "LICENSE"), join(out, "LICENSE"));
  const packed = await run(
    "npm",
    ["pack", out, "--pack-destination", join(root, "dist"), "--json"],
    {
      cwd: root,
    },
  );
  const [{ filename }] = JSON.parse(packed.stdout) as { filename: string }[];
  console.log(join(root, "dist", filename));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
