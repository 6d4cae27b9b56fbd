// The dialect objects of src/sql are the one place that tells the databases apart: a module
// elsewhere asks its dialect (`DIALECTS[kind].transactionalDdl`) rather than comparing the kind
// with a database's name, so that what differs between them is written once, beside the rest.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";

// `kind === "mysql"`, `dialect !== "sqlite"`, `case "postgres":`, on any name that holds a kind.
const BRANCH =
  /\b(?:kind|dialect|Kind|Dialect)\s*[!=]==?\s*["'](?:postgres|mysql|sqlite)["']|case\s+["'](?:postgres|mysql|sqlite)["']\s*:/;

describe("only src/sql tells the databases apart", () => {
  it("finds no comparison of a database's kind with its name outside src/sql", async () => {
    const found: string[] = [];
    for (const entry of await readdir("src", { recursive: true })) {
      const path = `src/${String(entry).replaceAll("\\", "/")}`;
      if (!path.endsWith(".ts") || path.startsWith("src/sql/")) continue;
      const lines = (await readFile(path, "utf8")).split("\n");
      lines.forEach((line, i) => {
        if (BRANCH.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, []);
  });

  it("would find one", () => {
    for (
      const line of [
        'if (kind === "sqlite") {',
        "datasource.kind !== 'mysql'",
        'this.#locks.dialect === "postgres"',
        'case "mysql":',
      ]
    ) {
      assert.match(line, BRANCH, line);
    }
    assert.doesNotMatch('job.kind === "cron"', BRANCH);
  });
});
