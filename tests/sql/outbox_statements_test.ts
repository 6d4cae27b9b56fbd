// The outbox's statements on each database: their placeholders the database's, and a time the
// database's own clock gives.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { outboxStatements, outboxTableStatements } from "../../src/sql/outbox_statements.ts";
import type { DatabaseKind } from "../../src/sql/sql_dialect.ts";
import { propertyOptions } from "../property.ts";

const KINDS: readonly DatabaseKind[] = ["postgres", "mysql", "sqlite"];

// The placeholders of `sql`, in order: `$n` or `?`.
const placeholders = (sql: string) => sql.match(/\$\d+|\?/g) ?? [];

describe("outbox statements", () => {
  it("number their parameters as each database does (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), fc.integer({ min: 1, max: 500 }), (kind, count) => {
        const statements = outboxStatements(kind, "thaw_outbox");
        const expected = (n: number) =>
          Array.from({ length: n }, (_, i) => kind === "postgres" ? `$${i + 1}` : "?");
        assert.deepEqual(placeholders(statements.markSent(count)), expected(count));
        assert.deepEqual(placeholders(statements.deleteSent(count)), expected(count));
        assert.deepEqual(placeholders(statements.insert), expected(5));
        assert.deepEqual(placeholders(statements.unsent), expected(2));
        assert.deepEqual(placeholders(statements.purge), expected(1));
        assert.deepEqual(placeholders(statements.backlog), []);
      }),
      propertyOptions(100),
    );
  });

  it("compare a row's sent_at with the database's clock, in milliseconds", () => {
    assert.match(
      outboxStatements("postgres", "t").purge,
      /sent_at < CURRENT_TIMESTAMP - \(\$1::float8 \* INTERVAL '1 millisecond'\)$/,
    );
    assert.match(
      outboxStatements("mysql", "t").purge,
      /sent_at < CURRENT_TIMESTAMP\(3\) - INTERVAL \(\? \* 1000\) MICROSECOND$/,
    );
    assert.match(outboxStatements("sqlite", "t").markSent(1), /SET sent_at = strftime\(/);
  });

  it("create the table and its index on each database, and refuse another", () => {
    for (const kind of KINDS) {
      const [table, index] = outboxTableStatements(kind, "box");
      assert.match(table, /^CREATE TABLE box \(\n {2}id /);
      assert.equal(index, "CREATE INDEX box_unsent ON box (sent_at, id)");
    }
    for (const other of ["oracle", "toString", "__proto__"]) {
      assert.throws(
        () => outboxTableStatements(other as DatabaseKind, "box"),
        /outbox: ".*" is none of postgres, mysql, sqlite/,
      );
    }
  });
});
