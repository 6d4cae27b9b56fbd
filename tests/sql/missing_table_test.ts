// How each database's "no such table" is told from its other errors.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DataError } from "../../src/sql/data_error.ts";
import { isMissingTable } from "../../src/sql/missing_table.ts";

const error = (code: string, message: string) =>
  new DataError({ datasource: "main", reason: "statement", code, statement: "SELECT", message });

describe("isMissingTable", () => {
  it("knows each database's words for a table that does not exist", () => {
    assert.equal(isMissingTable(error("42P01", 'relation "thaw_jobs" does not exist')), true);
    assert.equal(
      isMissingTable(error("ER_NO_SUCH_TABLE", "Table 'd.thaw_jobs' doesn't exist")),
      true,
    );
    assert.equal(isMissingTable(error("SQLITE_ERROR", "no such table: thaw_jobs")), true);
  });

  it("is false for any other error, and for what is no DataError", () => {
    assert.equal(isMissingTable(error("42703", 'column "x" does not exist')), false);
    assert.equal(isMissingTable(error("SQLITE_ERROR", "no such column: x")), false);
    assert.equal(isMissingTable(new Error("no such table: thaw_jobs")), false);
    assert.equal(isMissingTable(undefined), false);
  });
});
