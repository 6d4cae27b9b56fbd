// Each database's transaction statements, its isolation levels and its conflicts, as pure
// functions: what the transactions send is checked against the real servers in transactions_test.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  beginStatements,
  checkIsolation,
  isConflict,
  resetStatements,
} from "../../src/sql/transaction_dialect.ts";
import { Isolation } from "../../src/data/transaction_options.ts";
import { propertyOptions } from "../property.ts";

const KINDS = ["sqlite", "postgres", "mysql"] as const;

describe("transaction dialect", () => {
  it("begins a transaction at the database's own level as it always did: no statement more", () => {
    for (const isolation of [undefined, Isolation.DEFAULT]) {
      assert.deepEqual(beginStatements("postgres", false, isolation), ["BEGIN"]);
      assert.deepEqual(beginStatements("postgres", true, isolation), ["BEGIN READ ONLY"]);
      assert.deepEqual(beginStatements("mysql", false, isolation), ["SET autocommit = 0"]);
      assert.deepEqual(beginStatements("mysql", true, isolation), [
        "SET autocommit = 0",
        "START TRANSACTION READ ONLY",
      ]);
      assert.deepEqual(beginStatements("sqlite", false, isolation), ["BEGIN IMMEDIATE"]);
      assert.deepEqual(beginStatements("sqlite", true, isolation), [
        "PRAGMA query_only = ON",
        "BEGIN",
      ]);
    }
    assert.deepEqual(resetStatements("mysql", false), ["SET autocommit = 1"]);
    assert.deepEqual(resetStatements("sqlite", true), ["PRAGMA query_only = OFF"]);
    assert.deepEqual(resetStatements("postgres", true), []);
  });

  it("begins at the level asked: in BEGIN on PostgreSQL, before it on MySQL", () => {
    assert.deepEqual(beginStatements("postgres", false, Isolation.SERIALIZABLE), [
      "BEGIN ISOLATION LEVEL SERIALIZABLE",
    ]);
    assert.deepEqual(beginStatements("postgres", true, Isolation.REPEATABLE_READ), [
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    ]);
    // SET TRANSACTION, without SESSION, is for the next transaction alone: the session's level
    // comes back at its end, with nothing to reset.
    assert.deepEqual(beginStatements("mysql", false, Isolation.READ_COMMITTED), [
      "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
      "SET autocommit = 0",
    ]);
    assert.deepEqual(beginStatements("mysql", true, Isolation.READ_UNCOMMITTED), [
      "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
      "SET autocommit = 0",
      "START TRANSACTION READ ONLY",
    ]);
    // SQLite's transactions are serializable: asked, it is what they are already.
    assert.deepEqual(beginStatements("sqlite", false, Isolation.SERIALIZABLE), ["BEGIN IMMEDIATE"]);
  });

  it("takes every level on PostgreSQL and MySQL, and on SQLite only what it has (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KINDS),
        fc.constantFrom(...Object.values(Isolation)),
        (kind, isolation) => {
          const where = "@Transactional on Billing.charge()";
          const has = kind !== "sqlite" || isolation === "DEFAULT" || isolation === "SERIALIZABLE";
          if (has) {
            checkIsolation(kind, "main", isolation, where);
            return;
          }
          assert.throws(() => checkIsolation(kind, "main", isolation, where), {
            name: "TypeError",
            message: new RegExp(
              `^@Transactional on Billing\\.charge\\(\\): isolation ${isolation} is not one ` +
                `datasource "main" \\(SQLite\\) has: its transactions are SERIALIZABLE`,
            ),
          });
        },
      ),
      propertyOptions(),
    );
  });

  it("names the conflicts a retry of the whole transaction may clear", () => {
    assert.equal(isConflict("postgres", "40001"), true, "serialization failure");
    assert.equal(isConflict("postgres", "40P01"), true, "deadlock");
    assert.equal(isConflict("postgres", "23505"), false);
    assert.equal(isConflict("postgres", undefined), false);
    assert.equal(isConflict("mysql", "ER_LOCK_DEADLOCK"), true);
    assert.equal(isConflict("mysql", "ER_DUP_ENTRY"), false);
    assert.equal(isConflict("sqlite", "SQLITE_BUSY"), false);
  });
});
