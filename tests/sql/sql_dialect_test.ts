// Each database's dialect, as pure functions: its transaction statements, isolation levels and
// conflicts (what the transactions send is checked against the real servers in
// transactions_test), and its placeholders and quoting against the rules they replaced.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { checkIsolation, DIALECTS } from "../../src/sql/dialects.ts";
import { renderSql, SqlFragment, SqlIdentifier } from "../../src/data/sql_template.ts";
import { Isolation } from "../../src/data/transaction_options.ts";
import { DataError } from "../../src/sql/data_error.ts";
import { propertyOptions } from "../property.ts";

const KINDS = ["sqlite", "postgres", "mysql"] as const;
type Kind = (typeof KINDS)[number];

// The rules the dialects replaced, as renderSql wrote them per kind: `$n` on PostgreSQL and `?`
// elsewhere, a space between a placeholder and a digit, a name in backquotes on MySQL and in
// double quotes elsewhere, the quote doubled inside it.
const oldQuote = (kind: Kind, name: string) =>
  kind === "mysql" ? `\`${name.replaceAll("`", "``")}\`` : `"${name.replaceAll('"', '""')}"`;
function oldRender(kind: Kind, strings: readonly string[], values: readonly unknown[]) {
  const params: unknown[] = [];
  let text = "";
  let numbered = false;
  const add = (literal: string) => {
    if (numbered && /^[0-9]/.test(literal)) text += " ";
    if (literal !== "") numbered = false;
    text += literal;
  };
  const walk = (strings: readonly string[], values: readonly unknown[]) => {
    add(strings[0]);
    values.forEach((value, i) => {
      if (value instanceof SqlFragment) walk(value.strings, value.values);
      else if (value instanceof SqlIdentifier) {
        add(value.parts.map((name) => oldQuote(kind, name)).join("."));
      } else {
        params.push(value);
        add(kind === "postgres" ? `$${params.length}` : "?");
        numbered = true;
      }
      add(strings[i + 1]);
    });
  };
  walk(strings, values);
  return { text, params };
}

// Literals full of what a placeholder or a quote is made of, names that hold quotes.
const literal = fc.stringMatching(/^[0-9a-z $?"`.,()]{0,6}$/);
const name = fc.stringMatching(/^[a-z0-9"`$? ]{1,5}$/);
const { template } = fc.letrec<{ template: SqlFragment; part: unknown }>((tie) => ({
  part: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(null)),
    fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => new SqlIdentifier(parts)),
    tie("template"),
  ),
  template: fc.array(tie("part"), { maxLength: 4 }).chain((values) =>
    fc.array(literal, { minLength: values.length + 1, maxLength: values.length + 1 }).map(
      (strings) => new SqlFragment(strings, values),
    )
  ) as fc.Arbitrary<SqlFragment>,
}));

describe("sql_dialect", () => {
  it("begins a transaction at the database's own level as it always did: no statement more", () => {
    for (const isolation of [undefined, Isolation.DEFAULT]) {
      assert.deepEqual(DIALECTS.postgres.begin(false, isolation), ["BEGIN"]);
      assert.deepEqual(DIALECTS.postgres.begin(true, isolation), ["BEGIN READ ONLY"]);
      assert.deepEqual(DIALECTS.mysql.begin(false, isolation), ["SET autocommit = 0"]);
      assert.deepEqual(DIALECTS.mysql.begin(true, isolation), [
        "SET autocommit = 0",
        "START TRANSACTION READ ONLY",
      ]);
      assert.deepEqual(DIALECTS.sqlite.begin(false, isolation), ["BEGIN IMMEDIATE"]);
      assert.deepEqual(DIALECTS.sqlite.begin(true, isolation), [
        "PRAGMA query_only = ON",
        "BEGIN",
      ]);
    }
    assert.deepEqual(DIALECTS.mysql.reset(false), ["SET autocommit = 1"]);
    assert.deepEqual(DIALECTS.sqlite.reset(true), ["PRAGMA query_only = OFF"]);
    assert.deepEqual(DIALECTS.postgres.reset(true), []);
  });

  it("begins at the level asked: in BEGIN on PostgreSQL, before it on MySQL", () => {
    assert.deepEqual(DIALECTS.postgres.begin(false, Isolation.SERIALIZABLE), [
      "BEGIN ISOLATION LEVEL SERIALIZABLE",
    ]);
    assert.deepEqual(DIALECTS.postgres.begin(true, Isolation.REPEATABLE_READ), [
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    ]);
    // SET TRANSACTION, without SESSION, is for the next transaction alone: the session's level
    // comes back at its end, with nothing to reset.
    assert.deepEqual(DIALECTS.mysql.begin(false, Isolation.READ_COMMITTED), [
      "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
      "SET autocommit = 0",
    ]);
    assert.deepEqual(DIALECTS.mysql.begin(true, Isolation.READ_UNCOMMITTED), [
      "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
      "SET autocommit = 0",
      "START TRANSACTION READ ONLY",
    ]);
    // SQLite's transactions are serializable: asked, it is what they are already.
    assert.deepEqual(DIALECTS.sqlite.begin(false, Isolation.SERIALIZABLE), ["BEGIN IMMEDIATE"]);
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
            checkIsolation({ kind, name: "main" }, isolation, where);
            return;
          }
          assert.throws(() => checkIsolation({ kind, name: "main" }, isolation, where), {
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

  it("renders placeholders and quotes names as the per-kind rules did (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), template, name, (kind, { strings, values }, one) => {
        const dialect = DIALECTS[kind];
        assert.equal(dialect.quote(one), oldQuote(kind, one));
        assert.deepEqual(renderSql(dialect, strings, values), oldRender(kind, strings, values));
      }),
      propertyOptions(),
    );
  });

  it("says which failures ended the transaction: aborted on PostgreSQL, whole on InnoDB", async () => {
    const failed = (reason: "statement" | "timeout", code?: string) =>
      new DataError({ datasource: "main", reason, message: "failed", ...(code && { code }) });
    const asked: string[] = [];
    const ask = (whole: number) => (text: string) => {
      asked.push(text);
      return Promise.resolve([{ whole }]);
    };
    assert.equal(await DIALECTS.postgres.endedAt(failed("statement", "23505"), ask(1)), false);
    assert.equal(await DIALECTS.postgres.endedAt(failed("timeout", "57014"), ask(1)), false);
    assert.equal(await DIALECTS.postgres.endedAt(failed("timeout"), ask(1)), undefined);
    assert.equal(await DIALECTS.sqlite.endedAt(failed("statement"), ask(1)), undefined);
    assert.equal(
      await DIALECTS.mysql.endedAt(failed("statement", "ER_DUP_ENTRY"), ask(1)),
      undefined,
    );
    assert.equal(
      await DIALECTS.mysql.endedAt(failed("statement", "ER_LOCK_DEADLOCK"), ask(0)),
      true,
    );
    assert.deepEqual(asked, []);
    const timedOut = failed("statement", "ER_LOCK_WAIT_TIMEOUT");
    assert.equal(await DIALECTS.mysql.endedAt(timedOut, ask(1)), true);
    assert.equal(await DIALECTS.mysql.endedAt(timedOut, ask(0)), undefined);
    assert.equal(await DIALECTS.mysql.endedAt(timedOut, () => Promise.reject(new Error())), true);
    assert.deepEqual(asked, Array(2).fill("SELECT @@innodb_rollback_on_timeout AS whole"));
  });

  it("names the conflicts a retry of the whole transaction may clear", () => {
    assert.equal(DIALECTS.postgres.isConflict("40001"), true, "serialization failure");
    assert.equal(DIALECTS.postgres.isConflict("40P01"), true, "deadlock");
    assert.equal(DIALECTS.postgres.isConflict("23505"), false);
    assert.equal(DIALECTS.postgres.isConflict(undefined), false);
    assert.equal(DIALECTS.mysql.isConflict("ER_LOCK_DEADLOCK"), true);
    assert.equal(DIALECTS.mysql.isConflict("ER_DUP_ENTRY"), false);
    assert.equal(DIALECTS.sqlite.isConflict("SQLITE_BUSY"), false);
  });
});
