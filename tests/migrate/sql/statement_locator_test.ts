import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { locateStatement, statementStarts } from "../../../src/migrate/sql/statement_locator.ts";

describe("statement locator", () => {
  it("keeps dollar-quoted bodies, string literals and comments inside their statement (PostgreSQL)", () => {
    const text = [
      "-- header; with a semicolon",
      "CREATE TABLE a (v TEXT DEFAULT 'x;y');",
      "/* block; comment */",
      "CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END $$ LANGUAGE plpgsql;",
      "INSERT INTO a VALUES ($tag$;$tag$), ('it''s; fine');",
      "SELECT 1",
    ].join("\n");
    assert.deepEqual(statementStarts(text, "postgres").map((s) => s.line), [2, 4, 5, 6]);
    assert.equal(locateStatement(text, "postgres", { completed: 2 })?.excerpt, text.split("\n")[4]);
  });

  it("reads MySQL's backslash escapes", () => {
    const text = "-- note\nINSERT INTO a VALUES ('a\\';b');\n\nSELECT 2;";
    assert.deepEqual(statementStarts(text, "mysql").map((s) => s.line), [2, 4]);
  });

  it("maps a database's character position (in code points) to its line", () => {
    const text = "SELECT '😀';\nSELEC 2;";
    // PostgreSQL counts characters: "SELEC" starts at character 12 (1-based 13).
    const at = locateStatement(text, "postgres", { position: 13 });
    assert.deepEqual(at, { line: 2, excerpt: "SELEC 2;" });
  });

  it("says nothing rather than guessing when it has nothing to go on, or too little", () => {
    assert.equal(locateStatement("SELECT 1;", "sqlite", {}), undefined);
    assert.equal(locateStatement("SELECT 1;", "sqlite", { completed: 5 }), undefined);
    assert.equal(locateStatement("SELECT 1;", "postgres", { position: 0 }), undefined);
  });

  it("skips empty statements and trailing comments", () => {
    assert.deepEqual(
      statementStarts(";;\n  ;\nSELECT 1;\n-- end", "sqlite").map((s) => [s.line, s.excerpt]),
      [[3, "SELECT 1;"]],
    );
  });

  it("shortens a long first line for the message", () => {
    const long = `SELECT ${"x, ".repeat(100)}1`;
    const at = locateStatement(long, "sqlite", { completed: 0 })!;
    assert.equal(at.excerpt.length, 120);
    assert.ok(at.excerpt.endsWith("..."));
  });
});
