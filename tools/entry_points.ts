// The package's entry points, as `deno.json` declares them in `exports`: the one list the tools
// that walk the code from its entry points read, so that a new entry point is checked by all of
// them once it is published.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The files of `deno.json`'s `exports` in `root` (`mod.ts`, `config.ts`, ...), relative to `root`;
 * none when `root` has no `deno.json`.
 */
export function entryPoints(root: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(root, "deno.json"), "utf8");
  } catch {
    return [];
  }
  const exports = (JSON.parse(text) as { exports?: string | Record<string, string> }).exports;
  const files = typeof exports === "string" ? [exports] : Object.values(exports ?? {});
  return files.map((file) => file.replace(/^\.\//, ""));
}

/**
 * The modules the checks read: the entry points of `root`'s `deno.json` present in `root`, and every `.ts`
 * under `src/`.
 */
export function checkedFiles(root: string): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? under(join(dir, entry.name))
        : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : []
    );
  const present = new Set(readdirSync(root));
  return [...entryPoints(root).filter((entry) => present.has(entry)), ...under("src")];
}
