// The code-shape lint rules, run by `deno lint` itself on a tree of their own: where a function's
// span crosses its folder's bound, and where a non-null assertion is refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { lineOf, lineStarts } from "../../../tools/lint/code_shape_plugin.ts";
import { propertyOptions } from "../../property.ts";
import { lintWith } from "./lint_plugin.ts";

/** A function of `lines` lines in all, its name `name`. */
function spanning(name: string, lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`);
  return [`export function ${name}(): void {`, ...body, "}"].join("\n") + "\n";
}

/** What `deno lint`, with the plugin alone, says of a tree of `files`: `rule file:line message`. */
async function lint(files: Record<string, string>): Promise<string[]> {
  return (await lintWith("code_shape_plugin.ts", files)).map((d) =>
    `${d.code} ${d.file}:${d.line} ${d.message}`
  ).sort();
}

describe("the code-shape lint rules", () => {
  it("find the line of an offset as a count of the newlines before it", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "\n", "é") }), fc.nat(), (text, n) => {
        const offset = text.length === 0 ? 0 : n % text.length;
        const expected = text.slice(0, offset).split("\n").length;
        assert.equal(lineOf(lineStarts(text), offset), expected);
      }),
      propertyOptions(),
    );
  });

  it("refuse a function past its folder's bound, and only past it", async () => {
    const found = await lint({
      "src/web/at_bound.ts": spanning("atBound", 120),
      "src/web/past_bound.ts": spanning("pastBound", 121),
      "src/scheduling/at_bound.ts": spanning("jobAtBound", 60),
      "src/scheduling/past_bound.ts": spanning("jobPastBound", 61),
      // Outside src/, no bound.
      "tools/long.ts": spanning("tool", 400),
    });
    assert.deepEqual(found, [
      "thaw/function-length src/scheduling/past_bound.ts:1 jobPastBound spans 61 lines, over the 60 of its folder",
      "thaw/function-length src/web/past_bound.ts:1 pastBound spans 121 lines, over the 120 of its folder",
    ]);
  });

  it("name methods and arrow functions as a reader looks them up", async () => {
    const method = spanning("m", 121).replace("export function m(): void {", "  run(): void {");
    const found = await lint({
      "src/a.ts": `export class Jobs {\n${method}}\n` +
        spanning("x", 121).replace("export function x(): void {", "export const step = () => {"),
    });
    assert.deepEqual(found.map((line) => line.split(" ")[2]).sort(), ["run", "step"]);
  });

  it("refuse a non-null assertion in the scheduler only", async () => {
    const code = "export const f = (x: string | undefined): string => x!;\n";
    const found = await lint({ "src/scheduling/job.ts": code, "src/web/job.ts": code });
    assert.deepEqual(found, [
      "thaw/no-non-null-in-scheduling src/scheduling/job.ts:1 A non-null assertion in the scheduler",
    ]);
  });
});
