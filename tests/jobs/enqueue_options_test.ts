// What an enqueue is given, checked before anything is written: JSON payloads kept exactly, what
// JSON would change or drop refused naming where it is, queue names, keys and options in range.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { checkEnqueue, checkQueueName, jsonOf } from "../../src/jobs/enqueue_options.ts";
import { propertyOptions } from "../property.ts";

// JSON writes -0 as 0: the one number it changes, and one a payload may well hold.
const normalized = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (_, v) => Object.is(v, -0) ? 0 : v));

describe("jsonOf", () => {
  it("keeps any JSON value as the handler will read it (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assert.deepEqual(JSON.parse(jsonOf(value, "here")), normalized(value));
      }),
      propertyOptions(300),
    );
  });

  it("refuses a value JSON would change or drop, wherever it is, naming the path (property)", () => {
    const bad = fc.constantFrom<[unknown, RegExp]>(
      [undefined, /is undefined, which is not JSON/],
      [() => 1, /is a function, which is not JSON/],
      [10n, /is a bigint, which is not JSON/],
      [Symbol("s"), /is a symbol, which is not JSON/],
      [NaN, /is NaN, which JSON has no number for/],
      [Infinity, /is Infinity/],
      [new Date(0), /is a Date, which JSON would not give back as it is/],
      [new Map(), /is a Map/],
      [new (class Order {})(), /is a Order/],
    );
    fc.assert(
      fc.property(
        bad,
        fc.array(fc.oneof(fc.string(), fc.nat({ max: 3 })), { maxLength: 4 }),
        ([value, message], path) => {
          let payload: unknown = value;
          let shown = "";
          for (const step of [...path].reverse()) {
            if (typeof step === "number") {
              const list: unknown[] = Array(step + 1).fill(0);
              list[step] = payload;
              payload = list;
            } else {
              payload = { [step]: payload };
            }
          }
          for (const step of path) {
            shown += typeof step === "number" ? `[${step}]` : `[${JSON.stringify(step)}]`;
          }
          assert.throws(() => jsonOf(payload, 'JobQueue.enqueue("mail")'), (error: Error) => {
            assert.ok(error instanceof TypeError);
            assert.ok(
              error.message.startsWith(
                `JobQueue.enqueue("mail"): the payload must be JSON: payload${shown} is `,
              ),
              error.message,
            );
            assert.match(error.message, message);
            return true;
          });
        },
      ),
      propertyOptions(200),
    );
  });

  it("refuses a cycle, and takes an object met twice without one", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.throws(() => jsonOf({ a: [loop] }, "w"), /payload\["a"\]\[0\]\["self"\] is the object/);
    const shared = { n: 1 };
    assert.equal(jsonOf([shared, shared], "w"), '[{"n":1},{"n":1}]');
    assert.equal(jsonOf(Object.assign(Object.create(null), { n: 1 }), "w"), '{"n":1}');
  });

  it("refuses a payload nested deeper than the stack, as a TypeError", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.throws(() => jsonOf(deep, 'JobQueue.enqueue("mail")'), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /^JobQueue\.enqueue\("mail"\): the payload is nested too deep/);
      return true;
    });
  });

  it("keeps a __proto__ key a key", () => {
    const payload = JSON.parse('{"__proto__": {"admin": true}}');
    assert.deepEqual(JSON.parse(jsonOf(payload, "w")), payload);
  });
});

describe("checkQueueName", () => {
  it("takes letters, digits, _ and -, 1 to 75 of them (property)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,75}$/), (name) => {
        assert.equal(checkQueueName(name, "w"), name);
      }),
      propertyOptions(200),
    );
  });

  it("refuses anything else, showing it on one line (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 80 }).filter((s) =>
          !/^[A-Za-z0-9_-]{1,75}$/.test(s)
        ),
        (name) => {
          assert.throws(() => checkQueueName(name, "@JobHandler(queue)"), (error: Error) => {
            assert.match(error.message, /^@JobHandler\(queue\): a queue's name is 1 to 75/);
            assert.doesNotMatch(error.message, /[\n\r\u2028\u2029]/);
            return true;
          });
        },
      ),
      propertyOptions(200),
    );
  });
});

describe("checkEnqueue", () => {
  const now = Date.UTC(2026, 0, 1);

  it("reads the options, with their defaults", () => {
    assert.deepEqual(checkEnqueue("mail", { to: "a" }, undefined, now), {
      queue: "mail",
      payload: '{"to":"a"}',
      delayMs: 0,
      key: undefined,
      priority: 0,
      attempts: undefined,
    });
    const checked = checkEnqueue(
      "mail",
      1,
      { delay: "5m", key: "k", priority: -3, attempts: 7 },
      now,
    );
    assert.equal(checked.delayMs, 300_000);
    assert.equal(checked.key, "k");
    assert.equal(checked.priority, -3);
    assert.equal(checked.attempts, 7);
    assert.equal(checkEnqueue("mail", 1, { runAt: new Date(now + 1500) }, now).delayMs, 1500);
    // A time past stays past: the earliest due runs first.
    assert.equal(checkEnqueue("mail", 1, { runAt: new Date(now - 1500) }, now).delayMs, -1500);
  });

  it("refuses wrong options, naming the queue", () => {
    const refusals: [unknown, RegExp][] = [
      [{ delay: 1, runAt: new Date() }, /give delay or runAt, not both/],
      [{ delay: "soon" }, /delay: give milliseconds/],
      [{ delay: -1 }, /delay: give milliseconds/],
      [{ runAt: "2026-01-01" }, /runAt is a valid Date, got "2026-01-01"/],
      [{ runAt: new Date(NaN) }, /runAt is a valid Date/],
      [{ priority: 1.5 }, /priority is an integer from -2147483647 to 2147483647, got 1.5/],
      [{ priority: 2 ** 31 }, /priority is an integer/],
      [{ attempts: 0 }, /attempts is an integer from 1/],
      [{ key: "" }, /key is text of 1 to 255 characters/],
      [{ key: "x".repeat(256) }, /key is text of 1 to 255/],
      [{ key: "a\0b" }, /without NUL or lone surrogates, got "a\\u0000b"/],
      [{ key: "a\uD800" }, /without NUL or lone surrogates, got "a\\ud800"/],
      [{ key: 5 }, /key is text/],
      [{ retries: 2 }, /unknown option "retries"; the options are delay, runAt, key, priority/],
      [null, /the options must be an object, got null/],
    ];
    for (const [options, message] of refusals) {
      assert.throws(() => checkEnqueue("mail", {}, options, now), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /^JobQueue\.enqueue\("mail"\)/);
        assert.match(error.message, message);
        return true;
      }, JSON.stringify(options));
    }
    assert.throws(() => checkEnqueue("bad name", {}, {}, now), /enqueue\(queue\): a queue's name/);
    // A key of 255 characters, a pair counting two, is taken.
    assert.equal(
      checkEnqueue("mail", 1, { key: "\uD83D\uDE00".repeat(127) + "x" }, now).key?.length,
      255,
    );
  });
});
