// A string's UTF-8 length, counted: the same as the runtime's encoder gives, for any string.
import { describe, it } from "node:test";
import fc from "fast-check";
import { utf8Length } from "../../src/http/body_length.ts";
import { propertyOptions } from "../property.ts";

describe("utf8Length", () => {
  it("is the length of TextEncoder's bytes, lone surrogates included", () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })),
        (text) => utf8Length(text) === encoder.encode(text).byteLength,
      ),
      propertyOptions(300),
    );
  });
});
