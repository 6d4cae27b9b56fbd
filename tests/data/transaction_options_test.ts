import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  checkTransactionOptions,
  type ErrorClass,
  Isolation,
  Propagation,
  rollsBack,
} from "../../src/data/transaction_options.ts";
import { propertyOptions } from "../property.ts";

describe("checkTransactionOptions", () => {
  it("takes Spring's options, and the propagations by name", () => {
    const options = {
      propagation: Propagation.REQUIRES_NEW,
      readOnly: true,
      isolation: Isolation.SERIALIZABLE,
      timeout: 2.5,
      rollbackFor: [TypeError],
      noRollbackFor: [RangeError],
    };
    assert.equal(checkTransactionOptions(options, "here"), options);
    assert.deepEqual(checkTransactionOptions(undefined, "here"), {});
    assert.deepEqual(Object.values(Propagation), [
      "REQUIRED",
      "REQUIRES_NEW",
      "MANDATORY",
      "NEVER",
      "SUPPORTS",
      "NOT_SUPPORTED",
      "NESTED",
    ]);
    // Spring's names, DEFAULT first: the database's own level.
    assert.deepEqual(Object.values(Isolation), [
      "DEFAULT",
      "READ_UNCOMMITTED",
      "READ_COMMITTED",
      "REPEATABLE_READ",
      "SERIALIZABLE",
    ]);
  });

  it("refuses a wrong option, naming where it is written and the option", () => {
    const cases: [unknown, RegExp][] = [
      [
        { propagation: "required" },
        /^@Transactional on save: propagation "required" is none of REQUIRED, REQUIRES_NEW/,
      ],
      [{ readOnly: "yes" }, /readOnly must be true or false, got "yes"/],
      [{ timeout: 0 }, /timeout is in seconds, above 0; got 0/],
      [{ timeout: Number.NaN }, /timeout is in seconds, above 0/],
      [{ timeout: "5s" }, /timeout is in seconds/],
      [{ rollbackFor: TypeError }, /rollbackFor must be a list of error classes/],
      [{ noRollbackFor: ["TypeError"] }, /noRollbackFor must be a list of error classes/],
      [
        { isolation: "serializable" },
        /isolation "serializable" is none of DEFAULT, READ_UNCOMMITTED, READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE/,
      ],
      [
        { isolation: "SNAPSHOT" },
        /^@Transactional on save: isolation "SNAPSHOT" is none of DEFAULT/,
      ],
      [
        { isolated: true },
        /unknown option "isolated"; the options are propagation, readOnly, isolation, timeout/,
      ],
      [null, /the options must be an object, got null/],
      [[], /the options must be an object, got an array$/],
    ];
    for (const [options, message] of cases) {
      assert.throws(() => checkTransactionOptions(options, "@Transactional on save"), {
        name: "TypeError",
        message,
      });
    }
  });
});

describe("rollsBack", () => {
  // A chain of error classes, each extending the one before: E0 extends Error, E1 extends E0...
  const chain: ErrorClass[] = [];
  let parent: ErrorClass = Error;
  for (let i = 0; i < 5; i++) {
    const cls = class extends (parent as typeof Error) {};
    chain.push(cls);
    parent = cls;
  }
  // The model: a rule names class k; the error is of class e (it is an instance of 0..e). The
  // nearest named ancestor wins, rollbackFor on a tie; nothing named: rollback.
  const model = (e: number, rollback: number[], commit: number[]): boolean => {
    const near = (rules: number[]) => {
      const hits = rules.filter((k) => k <= e).map((k) => e - k);
      return hits.length === 0 ? undefined : Math.min(...hits);
    };
    const c = near(commit);
    if (c === undefined) return true;
    const r = near(rollback);
    return r !== undefined && r <= c;
  };

  it("the nearest rule wins, rollbackFor on a tie, and an error no rule names rolls back (property)", () => {
    const index = fc.integer({ min: 0, max: chain.length - 1 });
    fc.assert(
      fc.property(
        index,
        fc.uniqueArray(index, { maxLength: 3 }),
        fc.uniqueArray(index, { maxLength: 3 }),
        (e, rollback, commit) => {
          const error = new (chain[e] as typeof Error)("x");
          const options = {
            rollbackFor: rollback.map((k) => chain[k]),
            noRollbackFor: commit.map((k) => chain[k]),
          };
          assert.equal(rollsBack(options, error), model(e, rollback, commit));
        },
      ),
      propertyOptions(),
    );
  });

  it("rolls back on anything thrown that is not an error, unless Error itself is no rollback", () => {
    assert.equal(rollsBack({ noRollbackFor: [Error] }, "a string"), true);
    assert.equal(rollsBack({ noRollbackFor: [Error] }, new TypeError("x")), false);
    assert.equal(rollsBack({}, undefined), true);
  });
});
