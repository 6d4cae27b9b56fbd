import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { format } from "node:util";
import fc from "fast-check";
import { loggable, loggableText, safeLogger } from "../../src/observe/loggable.ts";
import { propertyOptions } from "../property.ts";

// What no logged text may hold: every C0 and C1 control, DEL, the line and paragraph separators,
// the bidirectional marks and overrides, and lone surrogates.
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Any UTF-16 text: every code unit, lone surrogates included, and every byte value as a character.
const anyText = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)) }),
);

describe("loggableText", () => {
  it("leaves no unsafe character, and changes no safe text (property)", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const safe = loggableText(text);
        assert.ok(!UNSAFE.test(safe), JSON.stringify(safe));
        if (!UNSAFE.test(text)) assert.equal(safe, text);
        assert.equal(loggableText(safe), safe);
      }),
      propertyOptions(300),
    );
  });

  it("writes each unsafe character as JSON writes it", () => {
    assert.equal(loggableText("a\r\nb\u001b[31m\u2028"), "a\\u000d\\u000ab\\u001b[31m\\u2028");
    assert.equal(loggableText("\ud800x\udc00"), "\\ud800x\\udc00");
    assert.equal(loggableText("ok \u{1f600}"), "ok \u{1f600}");
  });
});

describe("loggable", () => {
  it("gives an error that holds nothing unsafe as it is", () => {
    const error = new TypeError("plain", { cause: new Error("also plain") });
    assert.equal(loggable(error), error);
    assert.equal(loggable(42), 42);
    const value = { a: "\n" };
    assert.equal(loggable(value), value);
  });

  it("copies an error whose message, stack or cause is unsafe, keeping its class (property)", () => {
    class NotFound extends Error {
      override name = "NotFound";
    }
    fc.assert(
      fc.property(anyText, anyText, (text, causeText) => {
        const error = new NotFound(`user ${text}\r\nFORGED`, { cause: new Error(causeText) });
        const safe = loggable(error) as NotFound;
        assert.ok(safe instanceof NotFound);
        assert.ok(safe instanceof Error);
        assert.equal(safe.name, "NotFound");
        assert.ok(!UNSAFE.test(safe.message));
        const [header, ...frames] = String(safe.stack).split("\n");
        assert.equal(header, `NotFound: ${safe.message}`);
        for (const frame of frames) {
          assert.match(frame, /^\s+at /);
          assert.ok(!UNSAFE.test(frame));
        }
        const cause = safe.cause as Error;
        assert.ok(!UNSAFE.test(cause.message));
        assert.ok(String(cause.stack).split("\n").every((line) => !UNSAFE.test(line)));
      }),
      propertyOptions(200),
    );
  });

  it("keeps a readable stack where it is an own, enumerable property (the Kafka client's)", () => {
    // As @platformatic/kafka's GenericError: message and stack defined enumerable on the error,
    // a cause with an unsafe message below.
    const cause = new Error("connection reset\u0000");
    const error = new Error("produce failed 3 times.", { cause });
    Reflect.defineProperty(error, "message", { enumerable: true });
    Reflect.defineProperty(error, "stack", { enumerable: true });
    Object.assign(error, { code: "PLT_KFK_MULTIPLE" });
    const safe = loggable(error) as Error;
    const lines = String(safe.stack).split("\n");
    assert.ok(lines.length > 1, "the stack keeps its lines");
    assert.equal(lines[0], "Error: produce failed 3 times.");
    assert.ok(lines.slice(1).every((line) => /^\s+at /.test(line)), lines.join("\n"));
    assert.doesNotMatch(String(safe.stack), /\\u000a/);
    assert.equal((safe as { code?: string }).code, "PLT_KFK_MULTIPLE");
    assert.equal((safe.cause as Error).message, "connection reset\\u0000");
  });

  it("keeps the frames of the stack, and drops lines a changed message left in it", () => {
    const error = new Error("first\nFORGED line");
    error.message = "second";
    const safe = loggable(error) as Error;
    const lines = String(safe.stack).split("\n");
    assert.equal(lines[0], "Error: second");
    assert.ok(lines.length > 1, "the frames are kept");
    assert.ok(lines.slice(1).every((line) => /^\s+at /.test(line)), safe.stack);
  });

  it("ends at a cycle of causes", () => {
    const a = new Error("a\n");
    const b = new Error("b", { cause: a });
    a.cause = b;
    const safe = loggable(a) as Error;
    let depth = 0;
    for (let e: unknown = safe; e instanceof Error; e = e.cause) depth++;
    assert.ok(depth < 20);
    assert.equal(safe.message, "a\\u000a");
  });

  it("reports an error whose message cannot be read, rather than throwing", () => {
    const error = new Error("x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("no");
      },
    });
    assert.match((loggable(error) as Error).message, /could not be read/);
  });
});

describe("safeLogger", () => {
  it("escapes messages and details, calls the logger's own methods, and adds no level", () => {
    const calls: unknown[][] = [];
    const logger = {
      prefix: "p",
      error(this: { prefix: string }, ...args: unknown[]) {
        calls.push([this.prefix, "error", ...args]);
      },
      warn(this: { prefix: string }, ...args: unknown[]) {
        calls.push([this.prefix, "warn", ...args]);
      },
    };
    const safe = safeLogger(logger);
    assert.equal(safe.info, undefined);
    safe.error("GET /a\nb failed:", "x\ry", 3);
    safe.warn?.("w\u0085");
    assert.deepEqual(calls, [
      ["p", "error", "GET /a\\u000ab failed:", "x\\u000dy", 3],
      ["p", "warn", "w\\u0085"],
    ]);
  });

  it("calls the logger's method as it is at each call: a level changed later is heard", () => {
    // pino changes its level by replacing the methods on the instance; a test swaps in a spy.
    const calls: string[] = [];
    const logger: { error(m: string): void; warn(m: string): void } = {
      error: (m) => calls.push(`error ${m}`),
      warn: () => {},
    };
    const safe = safeLogger(logger);
    safe.warn?.("before");
    logger.warn = (m) => calls.push(`warn ${m}`);
    logger.error = (m) => calls.push(`new error ${m}`);
    safe.warn?.("after");
    safe.error("e");
    assert.deepEqual(calls, ["warn after", "new error e"]);
  });
});

describe("loggable, what a console prints beside the stack", () => {
  const FORGED = "x\r\nFORGED";
  const unforged = (text: string) =>
    assert.ok(!/\nFORGED/.test(text) && !UNSAFE.test(text.replaceAll("\n", "")), text);

  it("escapes an AggregateError's errors, an array cause and an error in an own property", () => {
    const aggregate = new AggregateError([new Error(FORGED), "plain"], "several");
    const safe = loggable(aggregate) as AggregateError;
    assert.ok(safe instanceof AggregateError);
    unforged(format(safe));
    assert.equal(safe.errors[1], "plain");

    const arrayCause = new Error("outer", { cause: [new Error(FORGED)] });
    unforged(format(loggable(arrayCause)));

    const detailed = Object.assign(new Error("outer"), { detail: new Error(FORGED), code: 7 });
    const copy = loggable(detailed) as Error & { code: number };
    unforged(format(copy));
    assert.equal(copy.code, 7);
    assert.ok(Object.keys(copy).includes("detail"), "an own value keeps its enumerability");
  });

  it("never throws: a Proxy or a getter that throws is logged as a note", () => {
    const trap = new Proxy(new Error("x"), {
      getPrototypeOf() {
        throw new Error("trap");
      },
    });
    assert.match(String((loggable(trap) as Error).message), /could not be read/);
    const getter = new Error("x");
    Object.defineProperty(getter, "stack", {
      get() {
        throw new Error("no");
      },
    });
    const note = loggable(getter) as Error;
    assert.match(note.message, /could not be read/);
    assert.ok(!String(note.stack).includes("loggable"), "no frames of the logger's own");
  });
});
