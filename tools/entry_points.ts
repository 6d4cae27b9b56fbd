// The package's entry points, as `deno.json` declares them in `exports`: the one list the tools
// that walk the code from its entry points read, so that a new entry point is checked by all of
// them once it is published.
import { readFileSync } from "node:fs";
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
