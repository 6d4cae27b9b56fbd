// The jobs table's statements on each database: as many placeholders as the store binds, numbered
// as the database numbers them, and every time read from the database's own clock.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { jobStatements, jobTableStatements } from "../../src/sql/job_statements.ts";
import type { DatabaseKind } from "../../src/sql/sql_dialect.ts";
import { propertyOptions } from "../property.ts";

const KINDS: readonly DatabaseKind[] = ["postgres", "mysql", "sqlite"];

// The placeholders of `sql`, in order: `$n` or `?`.
const placeholders = (sql: string) => sql.match(/\$\d+|\?/g) ?? [];

// How many parameters the store binds to each statement (sql_job_store.ts).
const BOUND: Readonly<Record<string, number>> = {
  insert: 7,
  holder: 2,
  take: 4,
  due: 2,
  done: 2,
  doneDeleted: 2,
  retry: 4,
  dead: 3,
  release: 2,
  reclaim: 4,
  prune: 1,
  counts: 0,
  now: 0,
  deadList: 1,
  deadQueue: 1,
  revive: 1,
  remove: 1,
};

describe("job statements", () => {
  it("bind as many parameters as the store gives, numbered as each database does (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), fc.integer({ min: 1, max: 1000 }), (kind, count) => {
        const statements = jobStatements(kind);
        const expected = (n: number) =>
          Array.from({ length: n }, (_, i) => kind === "postgres" ? `$${i + 1}` : "?");
        for (const [name, n] of Object.entries(BOUND)) {
          const text = statements[name as keyof typeof statements];
          if (text === undefined) continue;
          assert.deepEqual(placeholders(text as string), expected(n), `${kind} ${name}`);
        }
        assert.deepEqual(placeholders(statements.lease(count)), expected(count + 2));
      }),
      propertyOptions(100),
    );
  });

  it("take with one statement where the database can, and lock the rows it takes", () => {
    assert.match(
      jobStatements("postgres").take!,
      /^WITH due AS MATERIALIZED \(SELECT id .* FOR UPDATE SKIP LOCKED\) UPDATE/,
    );
    assert.doesNotMatch(jobStatements("sqlite").take!, /FOR UPDATE/);
    assert.equal(jobStatements("mysql").take, undefined);
    assert.match(jobStatements("mysql").due!, /FOR UPDATE SKIP LOCKED$/);
    for (const kind of KINDS) {
      const take = jobStatements(kind).take ?? jobStatements(kind).due!;
      assert.match(take, /ORDER BY priority DESC, run_at, id LIMIT/);
    }
  });

  it("read every time from the database's clock, never the process's", () => {
    const clocks: Record<DatabaseKind, RegExp> = {
      postgres: /clock_timestamp\(\)/,
      mysql: /UTC_TIMESTAMP\(6\)/,
      sqlite: /julianday\('now'\)/,
    };
    for (const kind of KINDS) {
      const s = jobStatements(kind);
      for (const text of [s.insert, s.retry, s.done, s.dead, s.reclaim, s.prune, s.now]) {
        assert.match(text, clocks[kind]);
        assert.doesNotMatch(text, /\{now\}|\bNOW\(/, `${kind}: ${text}`);
      }
    }
  });

  it("make one table whose active keys are unique per queue, on each database", () => {
    for (const kind of KINDS) {
      const text = jobTableStatements(kind).join(";\n");
      assert.match(text, /CREATE TABLE thaw_jobs/);
      assert.match(text, /thaw_jobs_active_key/);
    }
    assert.match(jobTableStatements("postgres")[1], /WHERE state IN \('waiting', 'running'\)$/);
    // MariaDB/MySQL: a key is bytes, so that no collation pads or folds it.
    assert.match(jobTableStatements("mysql")[0], /active_key VARBINARY\(1020\) AS/);
    assert.throws(() => jobTableStatements("oracle" as DatabaseKind), /"oracle" is none of/);
  });
});
