import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { decoratorLines } from "../../tools/jsdoc_examples.ts";
import { checkedFiles } from "../../tools/entry_points.ts";
import { tempDir } from "../temp_dir.ts";

const FENCE = "```";

describe("decorator lines in JSDoc examples", () => {
  it("finds each `@` that opens a line of a fenced block in a /** */ comment", () => {
    const source = [
      "/**",
      " * A service.",
      " *",
      " * @example",
      ` * ${FENCE}ts`,
      " * @Service()",
      " * class Greeter {",
      " *   @Autowired(Clock)",
      " *   private clock!: Clock;",
      ` * ${FENCE}`,
      " */",
      "export function Service() {}",
    ].join("\n");
    assert.deepEqual(decoratorLines(source), [
      { line: 6, text: "@Service()" },
      { line: 8, text: "@Autowired(Clock)" },
    ]);
  });

  it("leaves tags, an `@` inside a line, code outside comments and plain comments alone", () => {
    const source = [
      "/**",
      " * Maps `@GetMapping` routes; see docs/controllers.md#routes.",
      " *",
      " * @param path the route",
      " * @example",
      ` * ${FENCE}ts`,
      ' * const mail = "ada@example.com"; // an @ inside a line',
      ` * ${FENCE}`,
      " * @returns the decorator",
      " */",
      "@Service()",
      "class Real {}",
      "/* A plain comment",
      ` * ${FENCE}ts`,
      " * @Service()",
      ` * ${FENCE}`,
      " */",
      "// @Service()",
    ].join("\n");
    assert.deepEqual(decoratorLines(source), []);
  });

  it("ends a fence with its comment, so an unclosed block does not run into the next", () => {
    const source = [
      "/**",
      ` * ${FENCE}ts`,
      " * const a = 1;",
      " */",
      "/**",
      " * @deprecated use b",
      " */",
    ].join("\n");
    assert.deepEqual(decoratorLines(source), []);
  });

  it("reads the entry points deno.json exports and every module under src/", async () => {
    await using dir = await tempDir("thaw-jsdoc-");
    const root = dir.path;
    const files: Record<string, string> = {
      "deno.json": '{ "exports": { ".": "./mod.ts", "./types": "./types.ts" } }\n',
      "mod.ts": "export {};\n",
      // Not an entry point: deno.json does not export it.
      "scratch.ts": "export {};\n",
      "src/a.ts": "export {};\n",
      "src/web/b.ts": "export {};\n",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    assert.deepEqual(checkedFiles(root).sort(), ["mod.ts", "src/a.ts", "src/web/b.ts"]);
  });
});
