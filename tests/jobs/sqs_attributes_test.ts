// The attributes of a job's SQS message: any text fits SQS's characters, one that fits is kept as
// it is, and a number attribute that is not one (a message Thaw did not send) reads as absent.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { attributeText, number, numberOf, text } from "../../src/jobs/sqs_attributes.ts";

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
});
