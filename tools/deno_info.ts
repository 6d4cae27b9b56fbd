// Deno's own module graph, not a pattern over the text: its parser knows a string holding `/*`
// from a comment, an indented import from a doc example, `typeof import()` from a lazy import().
// The tools that read the imports of src/ (tools/import_cycles.ts, tools/check_layers.ts) share it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

/** Where a specifier stands in its module's text: line and character from 0. */
export interface InfoSpan {
  readonly start: { readonly line: number; readonly character: number };
}

/** One side (code or types) of a dependency, as `deno info --json` gives it. */
export interface InfoTarget {
  readonly specifier: string;
  readonly span?: InfoSpan;
}

/** What `deno info --json` says of one module (the fields read here). */
export interface InfoModule {
  readonly specifier: string;
  readonly error?: string;
  readonly dependencies?: readonly {
    readonly code?: InfoTarget;
    readonly type?: InfoTarget;
    readonly isDynamic?: boolean;
  }[];
}

/** Every module `file` (a path from `root`) reaches, as `deno info --json` lists them. */
export function denoInfo(root: string, file: string): readonly InfoModule[] {
  const args = ["info", "--json", file];
  if (typeof Deno === "object") {
    const run = new Deno.Command(Deno.execPath(), { args, cwd: root, stderr: "inherit" })
      .outputSync();
    if (!run.success) throw new Error(`${file}: deno info failed (its message is above)`);
    return (JSON.parse(new TextDecoder().decode(run.stdout)) as { modules: InfoModule[] }).modules;
  }
  const out = execFileSync(
    [join(here, "../node_modules/.bin/deno")].find((path) => existsSync(path)) ?? "deno",
    args,
    { cwd: root, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  return (JSON.parse(out) as { modules: InfoModule[] }).modules;
}
