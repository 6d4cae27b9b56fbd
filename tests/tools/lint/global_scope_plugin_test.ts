// The global-scope lint rule, run by `deno lint` itself on a tree of its own: what workerd refuses
// at global scope is refused at a module's top level in src/, and allowed in a function.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lintWith } from "./lint_plugin.ts";

/** What `deno lint`, with the plugin alone, says of a tree of `files`: `file:line message`. */
async function lint(files: Record<string, string>): Promise<string[]> {
  return (await lintWith("global_scope_plugin.ts", files)).map((d) =>
    `${d.file}:${d.line} ${d.message}`
  ).sort();
}

describe("thaw-edge/no-global-scope-effects", () => {
  it("refuses timers, fetch, random values and AbortControllers at a module's top level in src/", async () => {
    const top = [
      "export const stop = new AbortController();",
      "export const late = AbortSignal.timeout(1000);",
      "setTimeout(() => {}, 1);",
      "export const tick = setInterval(() => {}, 1000);",
      "export const page = fetch('http://localhost/');",
      "export const id = crypto.randomUUID();",
      "export class Holder { static bytes = crypto.getRandomValues(new Uint8Array(4)); }",
    ].join("\n") + "\n";
    const inside = [
      "export function start(): AbortController { setTimeout(() => {}, 1); return new AbortController(); }",
      "export const later = () => fetch('http://localhost/');",
      "export class Job { readonly stop = new AbortController(); run() { crypto.randomUUID(); } }",
    ].join("\n") + "\n";
    const found = await lint({ "src/top.ts": top, "src/inside.ts": inside, "tools/top.ts": top });
    assert.deepEqual(
      found,
      [
        "src/top.ts:1 AbortController at a module's top level: workerd refuses it at global scope",
        "src/top.ts:2 AbortSignal.timeout at a module's top level: workerd refuses it at global scope",
        "src/top.ts:3 setTimeout at a module's top level: workerd refuses it at global scope",
        "src/top.ts:4 setInterval at a module's top level: workerd refuses it at global scope",
        "src/top.ts:5 fetch at a module's top level: workerd refuses it at global scope",
        "src/top.ts:6 crypto.randomUUID at a module's top level: workerd refuses it at global scope",
        "src/top.ts:7 crypto.getRandomValues at a module's top level: workerd refuses it at global scope",
      ].sort(),
    );
  });
});
