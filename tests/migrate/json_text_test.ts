import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonValueProblem, MAX_JSON_DEPTH } from "../../src/migrate/json_text.ts";
import { propertyOptions } from "../property.ts";

const problem = (text: string) => jsonValueProblem(text, JSON.parse(text));

describe("jsonValueProblem", () => {
  it("property: never refuses a number a double holds exactly, however it is written", () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom("plain", "exponent", "zeros"),
        (x, form) => {
          const literal = form === "exponent"
            ? x.toExponential()
            : form === "zeros" && Number.isInteger(x) && Math.abs(x) < 1e21
            ? `${x}.000`
            : String(x);
          assert.equal(problem(`{"a": ${literal}}`), undefined, literal);
        },
      ),
      propertyOptions(300),
    );
  });

  // What JSON.stringify sends for a number, as an exact integer: "1e+30" is 10^30.
  const sentValue = (literal: string): bigint => {
    const [mantissa, exponent = "0"] = String(Number(literal)).split("e");
    const [whole, fraction = ""] = mantissa.split(".");
    const shift = Number(exponent) - fraction.length;
    const digits = BigInt(whole + fraction);
    return shift >= 0 ? digits * 10n ** BigInt(shift) : digits / 10n ** BigInt(-shift);
  };

  it("property: refuses every integer that would be sent as another number, naming it", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n }),
        fc.boolean(),
        (n, negative) => {
          const literal = `${negative ? "-" : ""}${n}`;
          const exact = sentValue(literal) === (negative ? -n : n);
          const found = problem(`[1, ${literal}]`);
          assert.equal(found === undefined, exact, literal);
          if (found !== undefined) {
            assert.match(
              found,
              new RegExp(`line 1: the number ${literal} `),
            );
          }
        },
      ),
      propertyOptions(300),
    );
  });

  it("refuses nesting deeper than OpenSearch reads, at any position, without overflowing", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    assert.equal(problem(deep(MAX_JSON_DEPTH)), undefined);
    assert.match(problem(deep(MAX_JSON_DEPTH + 1))!, /nests deeper than 1000 levels/);
    assert.match(problem(deep(200_000))!, /nests deeper than 1000 levels/);
  });
});
