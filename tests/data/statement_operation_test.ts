import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { operationName } from "../../src/data/statement_operation.ts";
import { propertyOptions } from "../property.ts";

describe("operationName", () => {
  it("is the first keyword, in capitals, past blanks and comments", () => {
    assert.equal(operationName("select 1"), "SELECT");
    assert.equal(
      operationName("\n  -- why\n/* a\nb */ WITH x AS (SELECT 1) SELECT * FROM x"),
      "WITH",
    );
    assert.equal(operationName("START TRANSACTION READ ONLY"), "START");
    assert.equal(operationName("-- only a comment"), undefined);
    assert.equal(operationName("(SELECT 1)"), undefined);
    assert.equal(operationName("/* never closed SELECT"), undefined);
    assert.equal(operationName(""), undefined);
  });

  it("finds the keyword after any mix of blanks and comments", () => {
    const blank = fc.constantFrom(" ", "\t", "\n", "\r\n");
    const lineComment = fc.string().filter((s) => !s.includes("\n")).map((s) => `--${s}\n`);
    const blockComment = fc.string().filter((s) => !s.includes("*/")).map((s) => `/*${s}*/`);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(blank, lineComment, blockComment), { maxLength: 6 }),
        fc.stringMatching(/^[A-Za-z]{1,12}$/),
        fc.constantFrom("", " 1", "(x)", ";", "\nFROM t"),
        (lead, keyword, rest) =>
          operationName(lead.join("") + keyword + rest) === keyword.toUpperCase(),
      ),
      propertyOptions(),
    );
  });

  it("gives capitals or nothing for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const name = operationName(text);
        return name === undefined || /^[A-Z]+$/.test(name);
      }),
      propertyOptions(),
    );
  });
});
