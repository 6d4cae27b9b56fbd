/**
 * Thaw's command line (`npx thaw` from npm):
 * `deno run -A cli.ts [-m search] -c <config_dir> --migrations <migrations_root> [command]`: SQL
 * migrations by default, search-cluster migrations with `-m search`;
 * `deno run -A cli.ts manifest <dir>... --out <file>`: writes the module that lists the bean
 * classes for runtimes without a file system.
 * Run it with `--help` for every option; the exit codes are 0 (success), 1 (a migration failed),
 * 2 (usage or configuration error) and 3 (lock not acquired).
 *
 * @module
 */
import { realpathSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { runtimeEnv } from "./src/config/env.ts";
import { runManifestCommand } from "./src/context/manifest.ts";
import { runCli } from "./src/migrate/cli/cli_main.ts";
import { localIdentity } from "./src/migrate/local_process.ts";

/**
 * Whether this module is the program's entry point. Deno, Bun and Node 24.2+ say so in
 * `import.meta.main`; older Node is asked through `argv[1]`, resolved through the symlink npm
 * puts in `node_modules/.bin`.
 */
function isEntryPoint(): boolean {
  const main = (import.meta as ImportMeta & { main?: boolean }).main;
  if (typeof main === "boolean") return main;
  const entry = process.argv[1];
  return entry !== undefined && pathToFileURL(realpathSync(entry)).href === import.meta.url;
}

if (isEntryPoint()) {
  const interrupt = new AbortController();
  // The first Ctrl-C stops after the current file (a reindex at once, its write block lifted) and
  // releases the lock; the second one exits.
  const stop = () => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const args = process.argv.slice(2);
  const out = (line: string) => console.log(line);
  const err = (line: string) => console.error(line);
  if (args[0] === "manifest") {
    process.exit(
      await runManifestCommand(args.slice(1), {
        out,
        err,
        cwd: process.cwd(),
        ...(process.argv[1] === undefined ? {} : { script: process.argv[1] }),
      }),
    );
  }
  const code = await runCli(args, {
    out,
    err,
    env: runtimeEnv(),
    identity: localIdentity(),
    signal: interrupt.signal,
  });
  process.exit(code);
}
