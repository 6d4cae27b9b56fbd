// ShedLock's table as SQL: which names a row holds as they are, which table names are taken, and
// that a lock's name and holder travel as parameters, never in the statement's text.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  isSqlLockDialect,
  type SqlLockDialect,
  SqlLockTable,
} from "../../src/sql/sql_lock_table.ts";
import { propertyOptions } from "../property.ts";

const DIALECTS: readonly SqlLockDialect[] = ["postgres", "mysql", "sqlite"];

// A table whose statements are recorded, each answering `rows`.
function recorded(dialect: SqlLockDialect, rows: Record<string, unknown>[] = []) {
  const sent: { sql: string; params: readonly (string | number)[] }[] = [];
  const table = new SqlLockTable({
    who: "Test",
    dialect,
    query: (sql, params) => {
      sent.push({ sql, params });
      return Promise.resolve(rows);
    },
    table: "shedlock",
    lockedBy: "host-a",
  });
  return { table, sent };
}

describe("SqlLockTable", () => {
  it("names the three databases, and nothing else", () => {
    assert.deepEqual(DIALECTS.filter(isSqlLockDialect), DIALECTS);
    for (const other of ["mariadb", "SQLite", "", undefined, "constructor", "toString"]) {
      assert.equal(isSqlLockDialect(other), false, String(other));
    }
  });

  it("says why a name cannot be a row's name as it is", () => {
    assert.equal(SqlLockTable.unstorableName("digest"), undefined);
    assert.equal(SqlLockTable.unstorableName("x".repeat(64)), undefined);
    assert.match(SqlLockTable.unstorableName("x".repeat(65))!, /65 characters long/);
    assert.match(SqlLockTable.unstorableName("a\0b")!, /NUL/);
    assert.match(SqlLockTable.unstorableName("a\ud800")!, /lone UTF-16 surrogate/);
    assert.match(SqlLockTable.unstorableName("tick ")!, /ends with a space/);
    assert.match(SqlLockTable.unstorableName("")!, /is empty/);
    // Counted in code points: 64 emoji fit.
    assert.equal(SqlLockTable.unstorableName("🔒".repeat(64)), undefined);
  });

  it("takes a plain table name only, and a lockedBy the column holds", () => {
    for (const table of ["locks", "_t1", "A".repeat(63)]) {
      assert.match(SqlLockTable.createStatement("postgres", table, "Test"), /^CREATE TABLE /);
    }
    for (const table of ["1t", "a-b", "a;DROP TABLE x", "", "A".repeat(64), 5]) {
      assert.throws(
        () => SqlLockTable.createStatement("postgres", table, "Test"),
        /^TypeError: Test: table .* is not a plain table name/,
      );
    }
    assert.throws(
      () =>
        new SqlLockTable({
          who: "Test",
          dialect: "sqlite",
          query: () => Promise.resolve([]),
          table: "shedlock",
          lockedBy: "x".repeat(242),
        }),
      /Test: lockedBy "x{199}\.\.\. \(242 characters\) is 242 characters long/,
    );
  });

  it("sends every name and holder as a parameter, on each database (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...DIALECTS),
        fc.string({ unit: "binary", minLength: 1 }),
        fc.option(fc.nat({ max: 1000 }), { nil: undefined }),
        async (dialect, name, minHoldMs) => {
          // The statements' text is the same whatever the name: it travels as a parameter.
          const texts = [];
          for (const each of [name, "x"]) {
            const { table, sent } = recorded(dialect, [{ locked_by: "x" }]);
            const holder = (await table.take(each, 60_000))?.holder ?? "h";
            await table.renew(each, 60_000, holder);
            await table.release(each, minHoldMs, holder);
            assert.ok(sent.some(({ params }) => params.includes(each)));
            texts.push(sent.map(({ sql }) => sql));
          }
          assert.deepEqual(texts[0], texts[1]);
          // A release with a least hold (0 included) keeps the row; without one it deletes it.
          const release = texts[0][texts[0].length - 1];
          assert.match(
            release,
            minHoldMs !== undefined ? /^UPDATE shedlock SET lock_until/ : /^DELETE /,
          );
        },
      ),
      propertyOptions(200),
    );
  });

  it("on MySQL reads whose the lock is after its insert, there being no RETURNING", async () => {
    const { table, sent } = recorded("mysql", [{ locked_by: "someone else" }]);
    assert.equal(await table.take("digest", 1000), undefined);
    assert.deepEqual(sent.map(({ sql }) => sql.split(" ")[0]), ["INSERT", "SELECT"]);
  });
});
