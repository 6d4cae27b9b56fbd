import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { refusedStatement, sqlContext } from "../../../src/migrate/sql/sql_code_context.ts";
import type { MigrationContext } from "../../../src/migrate/code/code_context.ts";
import { propertyOptions } from "../../property.ts";

const KINDS = ["sqlite", "postgres", "mysql"] as const;

describe("refusedStatement", () => {
  it("takes one statement, comments and a final ; included", () => {
    for (const kind of KINDS) {
      for (
        const text of [
          "SELECT 1",
          "SELECT 1;",
          "-- why\nINSERT INTO t VALUES (1);\n",
          "SELECT 'a;b'",
          "SAVEPOINT a",
          "ROLLBACK TO SAVEPOINT a",
          "rollback to a",
          "RELEASE SAVEPOINT a",
          "SELECT committed_at, ending FROM t",
          "",
        ]
      ) assert.equal(refusedStatement(text, kind), undefined, `${kind}: ${text}`);
    }
  });

  it("refuses several statements, saying how many", () => {
    for (const kind of KINDS) {
      assert.match(
        refusedStatement("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)", kind)!,
        /runs one statement, and this text holds 2: call it once for each/,
      );
    }
  });

  it("refuses what ends or starts the runner's transaction, where it holds one", () => {
    for (
      const text of [
        "COMMIT",
        "commit;",
        "/* done */ COMMIT",
        "END",
        "ROLLBACK",
        "BEGIN",
        "START TRANSACTION",
        "ABORT",
      ]
    ) {
      for (const kind of ["sqlite", "postgres"] as const) {
        assert.match(refusedStatement(text, kind)!, /does not take `.*`: the runner holds/, text);
      }
      // MySQL and MariaDB run a file in no transaction: the code may hold its own.
      assert.equal(refusedStatement(text, "mysql"), undefined, text);
    }
  });

  it("never refuses a single SELECT of any literal", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...KINDS), (value, kind) => {
        const literal = kind === "mysql"
          ? value.replaceAll("\\", "\\\\").replaceAll("'", "''")
          : value.replaceAll("'", "''");
        assert.equal(refusedStatement(`SELECT '${literal}'`, kind), undefined);
      }),
      propertyOptions(),
    );
  });
});

describe("sqlContext", () => {
  const base: MigrationContext = {
    connection: "main",
    path: "V1__x.ts",
    placeholders: {},
    log: () => {},
    signal: new AbortController().signal,
  };

  it("sends what it takes to the session, and refuses the rest without sending", async () => {
    const sent: string[] = [];
    const ctx = sqlContext(base, "sqlite", {
      query: (text) => {
        sent.push(text);
        return Promise.resolve([{ n: 1 }]);
      },
    });
    assert.deepEqual(await ctx.query("SELECT 1 AS n"), [{ n: 1 }]);
    await assert.rejects(ctx.query("COMMIT"), TypeError);
    await assert.rejects(ctx.query("SELECT 1; SELECT 2"), TypeError);
    await assert.rejects(ctx.query(3 as never), /takes the statement's text first/);
    await assert.rejects(ctx.query("SELECT ?", "x" as never), /parameters as an array/);
    assert.deepEqual(sent, ["SELECT 1 AS n"]);
    assert.equal(ctx.kind, "sqlite");
    assert.equal(ctx.connection, "main");
  });
});
