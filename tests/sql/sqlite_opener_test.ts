import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sqliteMessage, sqliteOpener } from "../../src/sql/sqlite_opener.ts";
import { propertyOptions } from "../property.ts";
import { SQLITE } from "../sqlite.ts";

describe("sqlite_opener", () => {
  it("cuts the statement Deno appends to SQLite's message, and nothing else", () => {
    // A message with " in " of its own is cut there: SQLite's messages have none.
    const message = fc.string().filter((m) => !m.includes(" in "));
    fc.assert(
      fc.property(message, fc.string(), fc.nat(), (text, sql, offset) => {
        const error = new Error(`${text} in ${sql} at offset ${offset}`);
        assert.equal(sqliteMessage(error), text);
        assert.equal(sqliteMessage(new Error(text)), text || "Error");
      }),
      propertyOptions(),
    );
  });

  if (SQLITE === undefined) {
    it("says which runtimes have SQLite where this one has none", async () => {
      await assert.rejects(sqliteOpener(), /SQLite needs a runtime with node:sqlite/);
    });
    return;
  }

  it("runs every statement of a script with exec, a failing one stopping it", async () => {
    const handle = (await sqliteOpener())(":memory:");
    try {
      handle.exec(
        "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1); -- a comment\n" +
          "INSERT INTO t VALUES (2);",
      );
      assert.throws(
        () => handle.exec("INSERT INTO t VALUES (3); SELEC 1; INSERT INTO t VALUES (4);"),
        {
          message: /near "SELEC": syntax error/,
        },
      );
      assert.deepEqual(handle.run("SELECT x FROM t ORDER BY x", []).rows, [{ x: 1 }, { x: 2 }, {
        x: 3,
      }]);
    } finally {
      handle.close();
    }
  });
});
