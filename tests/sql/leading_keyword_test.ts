import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isCursorQuery, leadingKeyword } from "../../src/sql/leading_keyword.ts";

describe("leading_keyword", () => {
  it("gives a statement's first word past blanks and comments", () => {
    assert.equal(leadingKeyword("  -- note\n/* more */ select 1"), "select");
    assert.equal(leadingKeyword("(SELECT 1)"), "");
    assert.equal(leadingKeyword(""), "");
  });

  it("tells the queries PostgreSQL's DECLARE ... CURSOR takes", () => {
    for (
      const query of [
        "SELECT 1",
        "/* c */ values (1), (2)",
        "TABLE items",
        "(SELECT 1) UNION (SELECT 2)",
        "-- c\n(SELECT 1)",
        "WITH r AS (SELECT 1 AS n) SELECT n FROM r",
        "WITH r AS (SELECT id FROM t) SELECT id FROM r FOR UPDATE",
        "WITH r AS (SELECT id FROM t) SELECT id FROM r FOR NO KEY UPDATE",
      ]
    ) {
      assert.equal(isCursorQuery(query), true, query);
    }
  });

  it("tells the statements it does not take: writes, a WITH that writes, the rest", () => {
    for (
      const statement of [
        "INSERT INTO t (v) VALUES (1) RETURNING v",
        "update t SET v = 2 RETURNING v",
        "DELETE FROM t RETURNING v",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING t.id",
        "WITH gone AS (DELETE FROM t RETURNING v) SELECT v FROM gone",
        "WITH r AS (SELECT 1 AS v) INSERT INTO t SELECT v FROM r RETURNING v",
        "WITH r AS (SELECT 1 AS v) UPDATE t SET v = r.v FROM r RETURNING t.v",
        "SHOW search_path",
        "EXPLAIN SELECT 1",
        "",
      ]
    ) {
      assert.equal(isCursorQuery(statement), false, statement);
    }
  });
});
