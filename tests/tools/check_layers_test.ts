import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { LAYER_RULES, layerViolations } from "../../tools/check_layers.ts";
import { checkedFiles } from "../../tools/entry_points.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

async function tree(files: Record<string, string>): Promise<string> {
  const root = await suiteDir("thaw-layers-");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const ruleOf = (from: string): string => {
  const rule = LAYER_RULES.find((rule) => rule.from === from);
  assert.ok(rule, `no rule for ${from}`);
  return rule.text;
};

describe("layer check", () => {
  it("passes a tree whose imports keep to the layers", async () => {
    const root = await tree({
      "deno.json": '{ "exports": { ".": "./mod.ts" } }\n',
      // The entry point and the root of src/ may join any layers.
      "mod.ts": 'export * from "./src/web/w.ts";\nexport * from "./src/migrate_at_start.ts";\n',
      "src/migrate_at_start.ts": 'import "./data/d.ts";\nimport "./migrate/m.ts";\n',
      "src/web/w.ts": 'import "../http/h.ts";\nimport "../context/c.ts";\nexport const w = 1;\n',
      "src/http/h.ts": 'import "../context/c.ts";\n',
      "src/context/c.ts": "export const c = 1;\n",
      "src/data/d.ts": 'import "../sql/s.ts";\nimport "../context/c.ts";\n',
      "src/migrate/m.ts": 'import "../sql/s.ts";\nimport "../http/h.ts";\n',
      "src/sql/s.ts": 'import "../context/c.ts";\n',
      // A name that only starts like a layer's is not in it.
      "src/database/x.ts": 'import "../web/w.ts";\n',
      "src/sqlite/y.ts": 'import "../data/d.ts";\n',
    });
    assert.deepEqual(layerViolations(root, checkedFiles(root)), []);
  });

  it("names the importing file, its line and the rule of each import that breaks one", async () => {
    const root = await tree({
      "src/web/w.ts": "export const w = 1;\nexport type W = number;\n",
      "src/http/h.ts": "export const h = 1;\n",
      "src/data/d.ts": "export const d = 1;\n",
      "src/migrate/m.ts": "export const m = 1;\n",
      "src/sql/s.ts": "export const s = 1;\n",
      // Static, type-only, re-export, dynamic and `typeof import()`: each counts.
      "src/context/deep/c.ts": [
        "// The container.",
        'import { h } from "../../http/h.ts";',
        'import type { W } from "../../web/w.ts";',
        'export const c = (): Promise<unknown> => import("../../web/w.ts");',
        "export type C = W | typeof h;",
      ].join("\n"),
      "src/http/sub/h2.ts": 'export { w } from "../../web/w.ts";\n',
      "src/migrate/sql/m2.ts":
        '\n\nlet lazy: typeof import("../../data/d.ts");\nexport { lazy };\n',
      "src/migrate/m3.ts": 'export const m3 = () => import("../web/w.ts");\n',
      "src/data/d2.ts": 'import { type m } from "../migrate/m.ts";\nexport type D = typeof m;\n',
      "src/sql/s2.ts": [
        'import "../data/d.ts";',
        'import "../migrate/m.ts";',
        'import "../web/w.ts";',
        'import "./s.ts";',
      ].join("\n"),
    });
    const found = layerViolations(root, checkedFiles(root))
      .map(({ file, line, target, rule }) => ({ file, line, target, rule }));
    assert.deepEqual(found, [
      {
        file: "src/context/deep/c.ts",
        line: 2,
        target: "src/http/h.ts",
        rule: ruleOf("src/context"),
      },
      {
        file: "src/context/deep/c.ts",
        line: 3,
        target: "src/web/w.ts",
        rule: ruleOf("src/context"),
      },
      {
        file: "src/context/deep/c.ts",
        line: 4,
        target: "src/web/w.ts",
        rule: ruleOf("src/context"),
      },
      { file: "src/data/d2.ts", line: 1, target: "src/migrate/m.ts", rule: ruleOf("src/data") },
      { file: "src/http/sub/h2.ts", line: 1, target: "src/web/w.ts", rule: ruleOf("src/http") },
      { file: "src/migrate/m3.ts", line: 1, target: "src/web/w.ts", rule: ruleOf("src/migrate") },
      {
        file: "src/migrate/sql/m2.ts",
        line: 3,
        target: "src/data/d.ts",
        rule: ruleOf("src/migrate"),
      },
      { file: "src/sql/s2.ts", line: 1, target: "src/data/d.ts", rule: ruleOf("src/sql") },
      { file: "src/sql/s2.ts", line: 2, target: "src/migrate/m.ts", rule: ruleOf("src/sql") },
      { file: "src/sql/s2.ts", line: 3, target: "src/web/w.ts", rule: ruleOf("src/sql") },
    ]);
  });

  it("lets src/security import the seams src/web hands it, and no other module of src/web", async () => {
    const root = await tree({
      "src/web/guard_host.ts": "export type GuardHost = { earlyAnswer(): void };\n",
      "src/web/route_table.ts": "export const routeTable = 1;\n",
      "src/security/route_guard.ts": [
        'import type { GuardHost } from "../web/guard_host.ts";',
        'import { routeTable } from "../web/route_table.ts";',
        "export const g = (host: GuardHost) => [host, routeTable];",
      ].join("\n"),
    });
    const found = layerViolations(root, checkedFiles(root))
      .map(({ file, line, target }) => ({ file, line, target }));
    assert.deepEqual(found, [
      { file: "src/security/route_guard.ts", line: 2, target: "src/web/route_table.ts" },
    ]);
    assert.match(
      ruleOf("src/security"),
      /src\/security imports nothing of src\/web but src\/web\/guard_host\.ts/,
    );
  });

  it("says each violation as file:line, what it imports and the rule", async () => {
    const root = await tree({
      "src/web/w.ts": "export const w = 1;\n",
      "src/context/c.ts": '\nimport { w } from "../web/w.ts";\nexport const c = w;\n',
    });
    const [violation] = layerViolations(root, checkedFiles(root));
    assert.equal(
      violation.message,
      `src/context/c.ts:2 imports src/web/w.ts: ${ruleOf("src/context")}`,
    );
    assert.match(ruleOf("src/context"), /src\/context .*src\/http.*src\/web/);
  });

  it("ignores imports in comments, strings and doc examples", async () => {
    const root = await tree({
      "src/web/w.ts": "export const w = 1;\n",
      "src/http/h.ts": [
        "/**",
        ' * import { w } from "../web/w.ts";',
        " */",
        '// import "../web/w.ts";',
        'export const h = "import \\"../web/w.ts\\"";',
      ].join("\n"),
    });
    assert.deepEqual(layerViolations(root, checkedFiles(root)), []);
  });
});
