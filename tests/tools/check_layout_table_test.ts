import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { layoutProblems, layoutTablePaths, sourceFolders } from "../../tools/check_layout_table.ts";
import { type TempDir, tempDir } from "../temp_dir.ts";

async function tree(files: Record<string, string>): Promise<TempDir> {
  const root = await tempDir("thaw-layout-");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root.path, path)), { recursive: true });
    await writeFile(join(root.path, path), text);
  }
  return root;
}

const table = (...rows: string[]) =>
  "# Contributing\n\n## Layout\n\n| Path | Holds |\n| --- | --- |\n" +
  rows.map((row) => `| ${row} | what it holds |\n`).join("") +
  "\n## Dependencies\n\n| Package | Why |\n| --- | --- |\n| `src/not/a/row` | x |\n";

describe("the layout table check", () => {
  it("reads every path of the Path column, several in a cell, and no other table", () => {
    assert.deepEqual(
      layoutTablePaths(table("`mod.ts`", "`server.ts`, `config.ts`", "`docs/`", "`src/http`")),
      ["mod.ts", "server.ts", "config.ts", "docs", "src/http"],
    );
    assert.deepEqual(layoutTablePaths("# Contributing\n\nNo table.\n"), []);
  });

  it("lists the folders of src/ that hold a module, at any depth", async () => {
    await using root = await tree({
      "src/a.ts": "",
      "src/http/b.ts": "",
      "src/migrate/only_folders/code/c.ts": "",
      "src/assets/page.html": "",
    });
    assert.deepEqual(sourceFolders(root.path), ["src/http", "src/migrate/only_folders/code"]);
  });

  it("passes a table that names each such folder and only what exists", async () => {
    await using root = await tree({
      "CONTRIBUTING.md": table("`mod.ts`", "`src/http`", "`src/http/parse.ts`", "`tests/`"),
      "mod.ts": "",
      "src/http/parse.ts": "",
      "tests/x_test.ts": "",
    });
    assert.deepEqual(layoutProblems(root.path), []);
  });

  it("names a folder with no row, and a row that names nothing", async () => {
    await using root = await tree({
      "CONTRIBUTING.md": table("`src/http`", "`src/gone`", "`tools/gone.ts`"),
      "src/http/parse.ts": "",
      "src/observe/access_log.ts": "",
      "src/migrate/code/load_code.ts": "",
    });
    assert.deepEqual(layoutProblems(root.path), [
      "src/migrate/code: a folder of src/ with no row in the layout table",
      "src/observe: a folder of src/ with no row in the layout table",
      "src/gone: named in the layout table, but no such file or folder",
      "tools/gone.ts: named in the layout table, but no such file or folder",
    ]);
  });

  it("passes this repository's table", () => {
    assert.deepEqual(layoutProblems(fileURLToPath(new URL("../../", import.meta.url))), []);
  });
});
