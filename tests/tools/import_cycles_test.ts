import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { importCycles, moduleImports } from "../../tools/import_cycles.ts";
import { checkedFiles } from "../../tools/entry_points.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

async function tree(files: Record<string, string>): Promise<string> {
  const root = await suiteDir("thaw-cycles-");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe("import cycles", () => {
  it("finds none in a tree whose imports go one way", async () => {
    const root = await tree({
      "deno.json": '{ "exports": { ".": "./mod.ts", "./cli": "./cli.ts" } }\n',
      "mod.ts": 'export { a } from "./src/a.ts";\n',
      // Not an entry point: deno.json does not export it.
      "scratch.ts": 'import "./src/a.ts";\n',
      "src/a.ts": 'import { b } from "./b/b.ts";\nexport const a = b;\n',
      "src/b/b.ts": 'import { join } from "node:path";\nexport const b = join("x");\n',
    });
    assert.deepEqual(checkedFiles(root).sort(), ["mod.ts", "src/a.ts", "src/b/b.ts"]);
    assert.deepEqual(importCycles(root, checkedFiles(root)), []);
  });

  it("counts type-only imports and re-exports, and prints each knot once as a chain", async () => {
    const root = await tree({
      "src/a.ts": 'import type { B } from "./b.ts";\nexport interface A { b?: B }\n',
      "src/b.ts": 'export type { C as B } from "./sub/c.ts";\n',
      "src/sub/c.ts": 'import { type A } from "../a.ts";\nexport interface C { a?: A }\n',
      "src/d.ts": 'import * as e from "./e.ts";\nexport const d = e;\n',
      "src/e.ts": 'export type D = typeof import("./d.ts");\n',
      "src/f.ts": 'import "./a.ts";\n',
    });
    assert.deepEqual(importCycles(root, checkedFiles(root)), [
      { chain: ["src/a.ts", "src/b.ts", "src/sub/c.ts", "src/a.ts"], others: [] },
      { chain: ["src/d.ts", "src/e.ts", "src/d.ts"], others: [] },
    ]);
  });

  it("reports no cycle that only a dynamic import() closes", async () => {
    const root = await tree({
      "src/d.ts": 'import * as e from "./e.ts";\nexport const d = e;\n',
      "src/e.ts": 'export const e = () => import("./d.ts");\n',
    });
    assert.deepEqual(importCycles(root, checkedFiles(root)), []);
  });

  it("names the group's modules the shortest chain leaves out", async () => {
    const root = await tree({
      "src/a.ts": 'import "./b.ts";\nimport "./c.ts";\n',
      "src/b.ts": 'import "./a.ts";\n',
      "src/c.ts": 'import "./b.ts";\n',
    });
    assert.deepEqual(importCycles(root, checkedFiles(root)), [
      { chain: ["src/a.ts", "src/b.ts", "src/a.ts"], others: ["src/c.ts"] },
    ]);
  });

  it("reads statements as Deno parses them, not comments, strings or doc examples", async () => {
    const text = [
      "/**",
      ' * import { x } from "./doc_example.ts";',
      " */",
      '// import { y } from "./commented.ts";',
      'export function f() { return "from \\"./not_an_import.ts\\" /*"; }',
      'export * from "./all.ts";',
      'import Default, { named } from "./both.ts";',
      'const url = "http://example.com/*"; import { z } from "../up.ts";',
      '  import "./indented.ts";',
      'const lazy = () => import("./lazy.ts"); let typed: typeof import("./typed.ts");',
      "export { Default, lazy, named, typed, url, z };",
    ].join("\n");
    const names = [
      "doc_example",
      "commented",
      "not_an_import",
      "all",
      "both",
      "indented",
      "lazy",
      "typed",
    ];
    const root = await tree({
      "src/sub/a.ts": text,
      "src/up.ts": "export const z = 1;\n",
      ...Object.fromEntries(
        names.map((name) => [`src/sub/${name}.ts`, "export default 1;\nexport const named = 1;\n"]),
      ),
    });
    assert.deepEqual(moduleImports(root, checkedFiles(root)).get("src/sub/a.ts"), [
      "src/sub/all.ts",
      "src/sub/both.ts",
      "src/sub/indented.ts",
      "src/sub/typed.ts",
      "src/up.ts",
    ]);
  });

  it("follows both the code and the types of one import (@ts-types)", async () => {
    const root = await tree({
      "src/e.ts":
        '// @ts-types="./f_types.d.ts"\nimport { f } from "./f.js";\nexport const e = f;\n',
      "src/f.js": 'import { e } from "./e.ts";\nexport const f = () => e;\n',
      "src/f_types.d.ts": "export declare const f: () => unknown;\n",
    });
    assert.deepEqual(
      moduleImports(root, ["src/e.ts", "src/f.js", "src/f_types.d.ts"]).get("src/e.ts"),
      ["src/f.js", "src/f_types.d.ts"],
    );
    assert.deepEqual(importCycles(root, ["src/e.ts", "src/f.js", "src/f_types.d.ts"]), [
      { chain: ["src/e.ts", "src/f.js", "src/e.ts"], others: [] },
    ]);
  });

  it("names a module Deno cannot parse", async () => {
    const root = await tree({ "src/a.ts": "export const a = 1; */\n" });
    assert.throws(
      () => moduleImports(root, checkedFiles(root)),
      /^Error: src\/a\.ts: .*SyntaxError/s,
    );
  });
});
