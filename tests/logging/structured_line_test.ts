import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { composeMasks, maskUrls, noMask, secretsMask } from "../../src/config/secrets_mask.ts";
import { type LogRecord, structuredLine } from "../../src/logging/structured_line.ts";

// What may not stand raw in a line: anything a log viewer takes for a line break or hides.
// deno-lint-ignore no-control-regex
const UNSAFE_RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const time = new Date("2026-11-27T10:00:00.123Z");
const record = (over: Partial<LogRecord> = {}): LogRecord => ({
  time,
  level: "INFO",
  logger: "UserService",
  message: "saved",
  details: [],
  ...over,
});
const pid = typeof process.pid === "number" ? { "process.pid": process.pid } : {};

describe("structuredLine", () => {
  it("writes Elastic's shape", () => {
    assert.deepEqual(JSON.parse(structuredLine("ecs", record(), noMask)), {
      "@timestamp": "2026-11-27T10:00:00.123Z",
      "log.level": "INFO",
      ...pid,
      "log.logger": "UserService",
      message: "saved",
      "ecs.version": "8.11",
    });
  });

  it("writes Logstash's shape, with Logback's level values", () => {
    assert.deepEqual(JSON.parse(structuredLine("logstash", record({ level: "WARN" }), noMask)), {
      "@timestamp": "2026-11-27T10:00:00.123Z",
      "@version": "1",
      message: "saved",
      logger_name: "UserService",
      level: "WARN",
      level_value: 30000,
    });
    const levels = (["ERROR", "INFO", "DEBUG", "TRACE"] as const).map((level) =>
      JSON.parse(structuredLine("logstash", record({ level }), noMask)).level_value
    );
    assert.deepEqual(levels, [40000, 20000, 10000, 5000]);
  });

  it("writes an error's type, message and stack, its cause's too", () => {
    const error = new RangeError("too far", { cause: new Error("root cause") });
    const ecs = JSON.parse(
      structuredLine("ecs", record({ level: "ERROR", details: [error] }), noMask),
    );
    assert.equal(ecs["error.type"], "RangeError");
    assert.equal(ecs["error.message"], "too far");
    assert.match(
      ecs["error.stack_trace"],
      /^RangeError: too far\n[\s\S]*\nCaused by: Error: root cause/,
    );
    const logstash = JSON.parse(structuredLine("logstash", record({ details: [error] }), noMask));
    assert.match(logstash.stack_trace, /^RangeError: too far/);
  });

  it("merges the fields of plain objects, never over the fixed ones", () => {
    const fields = JSON.parse(structuredLine(
      "ecs",
      record({
        details: [
          { user: 7, message: "forged", "log.level": "ERROR", nested: { a: [1] } },
          JSON.parse('{"__proto__": {"polluted": true}}'),
          { user: 8 },
          "and text",
          3n,
        ],
      }),
      noMask,
    ));
    assert.equal(fields.user, 7);
    assert.equal(fields.message, "saved and text 3");
    assert.equal(fields["log.level"], "INFO");
    assert.deepEqual(fields.nested, { a: [1] });
    assert.deepEqual(Object.getOwnPropertyDescriptor(fields, "__proto__")?.value, {
      polluted: true,
    });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("writes a value JSON cannot hold as its text, and one that cannot be read as a note", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const hostile = new Proxy({}, {
      getPrototypeOf: () => {
        throw new Error("no");
      },
    });
    const line = JSON.parse(structuredLine(
      "logstash",
      record({ details: [{ cycle, big: 2n, fn: () => 1 }, hostile] }),
      noMask,
    ));
    assert.equal(line.cycle, "[object Object]");
    assert.equal(line.big, "2");
    assert.equal(typeof line.fn, "string");
    assert.match(line.message, /could not be read/);
  });

  it("masks secrets and URL credentials in the message, the error and the fields", () => {
    const mask = composeMasks(maskUrls, secretsMask(["hunter2-secret"]));
    const line = structuredLine(
      "ecs",
      record({
        message: "connecting to postgres://app:pw@db:5432/x with hunter2-secret",
        details: [new Error("auth hunter2-secret refused"), { token: "x hunter2-secret" }],
      }),
      mask,
    );
    assert.doesNotMatch(line, /hunter2-secret|app:pw/);
    const parsed = JSON.parse(line);
    assert.equal(parsed.message, "connecting to postgres://***@db:5432/x with ***");
    assert.equal(parsed.token, "x ***");
  });

  it("gives one line of valid JSON for every character below U+0100 and every lone surrogate", () => {
    const hostile: string[] = [];
    for (let code = 0; code < 0x100; code++) hostile.push(String.fromCharCode(code));
    hostile.push("\ud800", "\udfff", "\udbff\u0041", "\u2028", "\u2029", "\u202e", "\ufeff");
    for (const format of ["ecs", "logstash"] as const) {
      for (const c of hostile) {
        const message = `a${c}b`;
        const line = structuredLine(
          format,
          record({ message, details: [{ [`k${c}`]: c }] }),
          noMask,
        );
        assert.doesNotMatch(
          line,
          UNSAFE_RAW,
          JSON.stringify(c),
        );
        const parsed = JSON.parse(line);
        assert.equal(parsed.message, message);
        assert.equal(parsed[`k${c}`], c);
      }
    }
  });
});
