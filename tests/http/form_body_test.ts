import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { multipartBody, urlEncodedBody } from "../../src/http/form_body.ts";
import { formValues, queryValues } from "../../src/http/query_string.ts";
import { propertyOptions } from "../property.ts";

const encoder = new TextEncoder();
// A field of any text, `&`, `=`, `+`, `%` and `#` among it.
const text = fc.string({
  unit: fc.constantFrom("a", "&", "=", "+", "%", "%2", "%41", "#", "é", " "),
});

/** What a field reads as: its value, or the status it is refused with. */
function outcome(read: () => string | undefined): string | number | undefined {
  try {
    return read();
  } catch (error) {
    assert.ok(error instanceof HttpException, String(error));
    return error.status.getValue();
  }
}

describe("formValues (property)", () => {
  it("reads a text as queryValues reads it as a query, where a # is sent as %23", () => {
    fc.assert(
      fc.property(text, fc.constantFrom("a", "a b", "é", "#"), (body, name) => {
        const query = body.replaceAll("#", "%23");
        assert.deepEqual(
          outcome(() => formValues(body, name, true)[0]),
          outcome(() => queryValues(`/p?${query}`, name, true)[0]),
        );
      }),
      propertyOptions(300),
    );
  });
});

describe("urlEncodedBody (property)", () => {
  it("reads raw bytes past ASCII as their percent-encoding", () => {
    const bytes = fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom(...encoder.encode("v=&+%")),
      ),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(bytes, (list) => {
        const raw = Uint8Array.from([...encoder.encode("v="), ...list]);
        const encoded = [...raw].map((b) =>
          b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase()}`
        ).join("");
        assert.deepEqual(
          outcome(() => urlEncodedBody(raw).param("v")),
          outcome(() => formValues(encoded, "v", true)[0]),
        );
      }),
      propertyOptions(300),
    );
  });

  it("is no object: __proto__ and constructor are names like any other", () => {
    const body = urlEncodedBody(encoder.encode("__proto__=a&constructor=b&toString=c"));
    assert.equal(body.param("__proto__"), "a");
    assert.equal(body.param("constructor"), "b");
    assert.equal(body.param("toString"), "c");
    assert.equal(body.param("hasOwnProperty"), undefined);
    assert.equal(body.part("__proto__"), undefined);
  });
});

describe("multipartBody", () => {
  it("reads text parts as parameters, never a file part, and refuses bytes that are not UTF-8", () => {
    const part = (name: string, body: number[], filename?: string) => ({
      name,
      filename,
      contentType: undefined,
      body: Uint8Array.from(body),
    });
    const body = multipartBody([
      part("f", [0x61], "f.txt"),
      part("f", [0x62]),
      part("bad", [0xff]),
      part("__proto__", [0x63]),
    ]);
    assert.equal(body.param("f"), "b");
    assert.equal(body.part("f")?.filename, "f.txt");
    assert.equal(body.param("__proto__"), "c");
    assert.equal(body.param("constructor"), undefined);
    assert.throws(() => body.param("bad"), /Request parameter 'bad' is not valid UTF-8/);
  });
});
