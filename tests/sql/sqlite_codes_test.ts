// SQLite's result codes by name: the table against sqlite3.h's numbers, and the code a refused
// statement's DataError carries, the same on every runtime (Bun's driver names it itself;
// node:sqlite gives the number).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sqliteCodeName } from "../../src/sql/sqlite_codes.ts";
import { SqlClient } from "../../src/data/sql_client.ts";
import { SQLITE } from "../sqlite.ts";
import { propertyOptions } from "../property.ts";
import { rejection, testPools } from "./pools.ts";

describe("sqliteCodeName", () => {
  it("names primary and extended codes as sqlite3.h does", () => {
    assert.equal(sqliteCodeName(1), "SQLITE_ERROR");
    assert.equal(sqliteCodeName(5), "SQLITE_BUSY");
    assert.equal(sqliteCodeName(19), "SQLITE_CONSTRAINT");
    assert.equal(sqliteCodeName(2067), "SQLITE_CONSTRAINT_UNIQUE");
    assert.equal(sqliteCodeName(1299), "SQLITE_CONSTRAINT_NOTNULL");
    assert.equal(sqliteCodeName(787), "SQLITE_CONSTRAINT_FOREIGNKEY");
    assert.equal(sqliteCodeName(1555), "SQLITE_CONSTRAINT_PRIMARYKEY");
    assert.equal(sqliteCodeName(275), "SQLITE_CONSTRAINT_CHECK");
    assert.equal(sqliteCodeName(3091), "SQLITE_CONSTRAINT_DATATYPE");
    assert.equal(sqliteCodeName(517), "SQLITE_BUSY_SNAPSHOT");
    assert.equal(sqliteCodeName(773), "SQLITE_BUSY_TIMEOUT");
    assert.equal(sqliteCodeName(1032), "SQLITE_READONLY_DBMOVED");
    assert.equal(sqliteCodeName(8458), "SQLITE_IOERR_CORRUPTFS");
    assert.equal(sqliteCodeName(795), "SQLITE_NOTICE_RBU");
  });

  it("names SQLITE_ABORT_ROLLBACK, which sqlite3.h numbers (SQLITE_ABORT | (2<<8))", () => {
    assert.equal(sqliteCodeName(516), "SQLITE_ABORT_ROLLBACK");
  });

  it("gives a name starting with its primary code's for any number, none for no error", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1 << 16 }), (code) => {
        const name = sqliteCodeName(code);
        const primary = sqliteCodeName(code & 0xff);
        if (code <= 0 || primary === undefined) return name === undefined;
        return name !== undefined && (name === primary || name.startsWith(`${primary}_`));
      }),
      propertyOptions(),
    );
    assert.equal(sqliteCodeName(0), undefined);
    assert.equal(sqliteCodeName(Number.NaN), undefined);
  });
});

if (SQLITE !== undefined) {
  describe("a refused SQLite statement's DataError", () => {
    const open = testPools();
    it("carries SQLite's code by name, as Bun's driver names it, on every runtime", async () => {
      const sql = new SqlClient((await open("sqlite")).pool);
      await sql.execute`PRAGMA foreign_keys = ON`;
      await sql.execute`CREATE TABLE parents (id INTEGER PRIMARY KEY)`;
      await sql.execute`CREATE TABLE kids (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        age INTEGER CHECK (age >= 0),
        parent INTEGER REFERENCES parents (id)
      )`;
      await sql.execute`INSERT INTO kids (id, email) VALUES (1, 'a@x')`;
      const cases: [() => Promise<unknown>, string][] = [
        [
          () => sql.execute`INSERT INTO kids (id, email) VALUES (2, 'a@x')`,
          "SQLITE_CONSTRAINT_UNIQUE",
        ],
        [
          () => sql.execute`INSERT INTO kids (id, email) VALUES (3, NULL)`,
          "SQLITE_CONSTRAINT_NOTNULL",
        ],
        [
          () => sql.execute`INSERT INTO kids (id, email, age) VALUES (4, 'b', -1)`,
          "SQLITE_CONSTRAINT_CHECK",
        ],
        [
          () => sql.execute`INSERT INTO kids (id, email) VALUES (1, 'c')`,
          "SQLITE_CONSTRAINT_PRIMARYKEY",
        ],
        [
          () => sql.execute`INSERT INTO kids (id, email, parent) VALUES (5, 'd', 9)`,
          "SQLITE_CONSTRAINT_FOREIGNKEY",
        ],
        [() => sql.query`SELECT * FROM no_such_table`, "SQLITE_ERROR"],
      ];
      for (const [statement, code] of cases) {
        const error = await rejection(statement());
        assert.equal(error.reason, "statement");
        assert.equal(error.code, code, error.message);
      }
    });
  });
}
