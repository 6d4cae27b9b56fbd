import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { answerHealth, runCheck } from "../../src/actuator/health_check.ts";
import type { ComponentHealth } from "../../src/actuator/health.ts";
import { propertyOptions } from "../property.ts";

const REASON = "; answer nothing or a plain object for UP, false for DOWN";

function reasonOf(health: ComponentHealth): unknown {
  return health.details?.error;
}

describe("what an answer of check() means", () => {
  it("nothing is UP, false is DOWN, both without details", () => {
    assert.deepEqual(answerHealth(undefined), { status: "UP" });
    assert.deepEqual(answerHealth(false), { status: "DOWN" });
  });

  it("a plain object is UP with its details as JSON writes them; an empty one has none", () => {
    assert.deepEqual(answerHealth({}), { status: "UP" });
    const bare = Object.assign(Object.create(null), { pool: 3 });
    assert.deepEqual(answerHealth(bare), { status: "UP", details: { pool: 3 } });
    const at = new Date(Date.UTC(2026, 0, 2));
    assert.deepEqual(answerHealth({ at, skipped: undefined, nested: { ok: true } }), {
      status: "UP",
      details: { at: "2026-01-02T00:00:00.000Z", nested: { ok: true } },
    });
  });

  it("any JSON object is UP with exactly what JSON writes of it (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (details) => {
        const written = JSON.parse(JSON.stringify(details));
        const health = answerHealth(details);
        assert.equal(health.status, "UP");
        if (Object.keys(written).length === 0) assert.deepEqual(health, { status: "UP" });
        else assert.deepEqual(health.details, written);
        // A copy: what the check changes later does not change what was answered.
        assert.notEqual(health.details, details);
      }),
      propertyOptions(),
    );
  });

  it("anything else is DOWN, with a reason naming what it was", () => {
    class Stats {}
    const cases: [unknown, string][] = [
      [42, "42"],
      [true, "true"],
      [null, "null"],
      ["fine", 'a string ("fine")'],
      ["x".repeat(50), `a string ("${"x".repeat(40)}...")`],
      [[1, 2], "an array"],
      [new Map(), "an instance of Map"],
      [new Stats(), "an instance of Stats"],
      [10n, "10n"],
      [Symbol("s"), "a symbol"],
      [() => ({}), "a function"],
    ];
    for (const [answer, named] of cases) {
      assert.deepEqual(
        answerHealth(answer),
        { status: "DOWN", details: { error: `check() answered ${named}${REASON}` } },
        named,
      );
    }
  });

  it("every value that is not nothing, false or a plain object is DOWN (property)", () => {
    const notAnAnswer = fc.oneof(
      fc.double(),
      fc.string(),
      fc.bigInt(),
      fc.constant(true),
      fc.constant(null),
      fc.array(fc.anything(), { maxLength: 3 }),
      fc.date(),
      fc.anything().map((value) => new Map([["value", value]])),
    );
    fc.assert(
      fc.property(notAnAnswer, (answer) => {
        const health = answerHealth(answer);
        assert.equal(health.status, "DOWN");
        assert.match(String(reasonOf(health)), /^check\(\) answered .+; answer nothing/);
      }),
      propertyOptions(),
    );
  });

  it("details JSON cannot write are DOWN, named", () => {
    const big = answerHealth({ rows: 10n });
    assert.equal(big.status, "DOWN");
    assert.match(String(reasonOf(big)), /^check\(\) answered details that JSON cannot write: /);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.match(String(reasonOf(answerHealth(cycle))), /JSON cannot write/);
    assert.deepEqual(answerHealth({ toJSON: () => 5 }), {
      status: "DOWN",
      details: { error: "check() answered details that JSON writes as 5" },
    });
    assert.deepEqual(answerHealth({ toJSON: () => undefined }), {
      status: "DOWN",
      details: { error: "check() answered details that JSON writes as nothing" },
    });
    const getter = answerHealth({
      get broken(): never {
        throw new Error("no value");
      },
    });
    assert.deepEqual(getter, {
      status: "DOWN",
      details: { error: "check() answered details that JSON cannot write: no value" },
    });
  });
});

describe("asking one check", () => {
  it("takes a synchronous answer as it is, without a promise", () => {
    const health = runCheck(() => ({ pool: 2 }), 5000);
    assert.ok(!(health instanceof Promise));
    assert.deepEqual(health, { status: "UP", details: { pool: 2 } });
  });

  it("is DOWN with the message of what check() throws or rejects with", async () => {
    assert.deepEqual(
      runCheck(() => {
        throw new Error("connection refused");
      }, 5000),
      { status: "DOWN", details: { error: "connection refused" } },
    );
    assert.deepEqual(
      runCheck(() => {
        throw "plain text";
      }, 5000),
      { status: "DOWN", details: { error: "plain text" } },
    );
    assert.deepEqual(
      runCheck(() => {
        throw Object.create(null);
      }, 5000),
      { status: "DOWN", details: { error: "a thrown value that cannot be shown as text" } },
    );
    assert.deepEqual(await runCheck(() => Promise.reject(new TypeError("bad reply")), 5000), {
      status: "DOWN",
      details: { error: "bad reply" },
    });
  });

  it("waits for a promise, and takes any thenable", async () => {
    assert.deepEqual(await runCheck(() => Promise.resolve({ ok: 1 }), 5000), {
      status: "UP",
      details: { ok: 1 },
    });
    assert.deepEqual(await runCheck(() => Promise.resolve(false), 5000), { status: "DOWN" });
    const thenable = { then: (resolve: (v: unknown) => void) => resolve(undefined) };
    assert.deepEqual(await runCheck(() => thenable, 5000), { status: "UP" });
    const throwingThen = {
      then() {
        throw new Error("then failed");
      },
    };
    assert.deepEqual(await runCheck(() => throwingThen, 5000), {
      status: "DOWN",
      details: { error: "then failed" },
    });
    // A promise whose `constructor` getter throws: `Promise.resolve` reads it before adopting.
    const odd = new Promise<void>(() => {});
    Object.defineProperty(odd, "constructor", {
      get() {
        throw new Error("no constructor");
      },
    });
    assert.deepEqual(await runCheck(() => odd, 5000), {
      status: "DOWN",
      details: { error: "no constructor" },
    });
  });

  it("is DOWN once the timeout passes, naming it, when the check never settles", async () => {
    assert.deepEqual(await runCheck(() => new Promise(() => {}), 1), {
      status: "DOWN",
      details: { error: "check() did not answer within 1 ms" },
    });
  });
});
