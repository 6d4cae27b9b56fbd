import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DataError, firstLine } from "../../src/data/data_error.ts";

describe("data_error", () => {
  it("names the datasource and the statement's first line that is not blank", () => {
    const error = new DataError({
      datasource: "main",
      reason: "statement",
      statement: "\n   SELECT *\n  FROM users WHERE password = $1",
      message: "permission denied",
      code: "42501",
    });
    assert.equal(error.message, 'datasource "main": SELECT *: permission denied');
    assert.equal(error.statement, "SELECT *");
    assert.equal(error.code, "42501");
    assert.equal(error.name, "DataError");
  });

  it("cuts a long first line", () => {
    const line = firstLine(`SELECT ${"x, ".repeat(100)}`);
    assert.equal(line.length, 120);
    assert.ok(line.endsWith("…"));
  });
});
