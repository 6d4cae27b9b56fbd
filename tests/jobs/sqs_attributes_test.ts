// The attributes of a job's SQS message: any text fits SQS's characters, one that fits is kept as
// it is, and a number attribute that is not one (a message Thaw did not send) reads as absent.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  attributeText,
  jobId,
  MAX_TIME,
  number,
  numberOf,
  text,
  thawState,
  timeOf,
} from "../../src/jobs/sqs_attributes.ts";
import { propertyOptions } from "../property.ts";

// SQS's characters for an attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-.
const ALLOWED = /^(?:[\t\n\r\u0020-\uD7FF\uE000-\uFFFD]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;

const message = (name: string, value: string) => ({
  MessageAttributes: { [name]: { DataType: "Number", StringValue: value } },
});

describe("SQS message attributes", () => {
  it("make any text one SQS takes, and keep one it takes as it is", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), (value) => {
        const made = attributeText(value);
        assert.match(made, ALLOWED);
        assert.equal(made.length, value.length);
        if (ALLOWED.test(value)) assert.equal(made, value);
      }),
      { numRuns: 500, verbose: true },
    );
    for (let unit = 0; unit <= 0xffff; unit++) {
      assert.match(attributeText(String.fromCharCode(unit)), ALLOWED, `U+${unit.toString(16)}`);
    }
  });

  it("read a number back, and what is not one as absent", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        assert.equal(numberOf({ MessageAttributes: { a: number(n) } }, "a"), n);
      }),
      { numRuns: 200 },
    );
    for (const raw of ["", " ", "abc", "1e999", "NaN"]) {
      assert.equal(numberOf(message("a", raw), "a"), undefined, JSON.stringify(raw));
    }
    assert.equal(numberOf({}, "a"), undefined);
    assert.deepEqual(text("x"), { DataType: "String", StringValue: "x" });
  });

  it("read a job's state as Thaw writes it, and name the attribute of one it never writes", () => {
    // The model: each attribute's range, and whether it holds only integers.
    const model = {
      "thaw-runs": { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true },
      "thaw-due": { min: 0, max: 8.64e15, integer: false },
      "thaw-attempts": { min: 1, max: 2 ** 31 - 1, integer: true },
      "thaw-enqueued": { min: 0, max: 8.64e15, integer: false },
    };
    const value = fc.oneof(
      fc.integer({ min: -5, max: 5 }).map(String),
      fc.constantFrom("2147483647", "2147483648", "8640000000000000", "8640000000000001", "1e120"),
      fc.constantFrom("-1e120", "1.5", "0.5", "-0", "", "abc", "NaN", "Infinity", "\u0000"),
      fc.double({ noNaN: true }).map(String),
      fc.string({ unit: "binary", maxLength: 60 }),
    );
    fc.assert(
      fc.property(
        fc.record(
          Object.fromEntries(Object.keys(model).map((name) => [name, value])),
          { requiredKeys: [] },
        ),
        (drawn) => {
          const values: Record<string, string> = {};
          for (const [name, v] of Object.entries(drawn)) if (v !== undefined) values[name] = v;
          const message = {
            MessageAttributes: Object.fromEntries(
              Object.entries(values).map((
                [name, v],
              ) => [name, { DataType: "Number", StringValue: v }]),
            ),
          };
          const bad = Object.entries(values).find(([name, v]) => {
            const { min, max, integer } = model[name as keyof typeof model];
            const n = Number(v);
            return v.trim() === "" || !Number.isFinite(n) || n < min || n > max ||
              (integer && !Number.isInteger(n));
          });
          const state = thawState(message);
          if (bad !== undefined) {
            assert.equal(typeof state, "string");
            assert.match(
              state as string,
              /^its attribute thaw-[a-z]+ \(.*\) is not one Thaw writes$/s,
            );
            const named = /thaw-[a-z]+/.exec(state as string)![0];
            assert.ok(named in values, named);
            assert.ok((state as string).length < 120);
          } else {
            const read = (name: string) => name in values ? Number(values[name]) : undefined;
            assert.deepEqual(state, {
              runs: read("thaw-runs") ?? 0,
              due: read("thaw-due"),
              attempts: read("thaw-attempts"),
              enqueued: read("thaw-enqueued"),
            });
          }
        },
      ),
      propertyOptions(1000),
    );
  });

  it("read a job's id only as a UUID, and a time only as one a Date holds", () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uuid().map((u) => u.toLowerCase()),
          fc.string({ unit: "binary", maxLength: 40 }),
        ),
        fc.oneof(fc.double().map(String), fc.integer().map(String), fc.string({ maxLength: 12 })),
        (id, time) => {
          const message = {
            MessageId: "m-1",
            MessageAttributes: {
              "thaw-id": { DataType: "String", StringValue: id },
              "thaw-died": { DataType: "Number", StringValue: time },
            },
          };
          assert.equal(jobId(message), uuid.test(id) ? id : "m-1");
          const n = Number(time);
          const held = time.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= MAX_TIME;
          assert.equal(timeOf(message, "thaw-died"), held ? n : undefined);
          if (held) assert.ok(!Number.isNaN(new Date(n).getTime()));
        },
      ),
      propertyOptions(500),
    );
    assert.equal(jobId({}), "");
  });
});
