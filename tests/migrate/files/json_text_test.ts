import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  jsonValueProblem,
  MAX_SEARCH_DOCUMENT_DEPTH,
} from "../../../src/migrate/files/json_text.ts";
import { propertyOptions } from "../../property.ts";

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
    assert.equal(problem(deep(MAX_SEARCH_DOCUMENT_DEPTH)), undefined);
    assert.match(problem(deep(MAX_SEARCH_DOCUMENT_DEPTH + 1))!, /nests deeper than 1000 levels/);
    assert.match(problem(deep(200_000))!, /nests deeper than 1000 levels/);
  });

  // JSON.parse keeps the last of two equal keys, and OpenSearch refuses the document ("Duplicate
  // field"): a file whose first "path" is the one its author reads would be sent to the second.
  it("refuses a key written twice in one object, naming it and the line of the second", () => {
    assert.equal(
      problem('{\n  "path": "/bad-a",\n  "method": "PUT",\n  "path": "/_cluster/settings"\n}'),
      'line 4: the key "path" appears twice in one object (JSON.parse would keep the last one)',
    );
    // Equal once decoded, as JSON.parse compares them.
    assert.match(problem('{"path": 1, "p\\u0061th": 2}')!, /the key "path" appears twice/);
    // Nested, and after a sibling object that held the same key (each object has its own keys).
    assert.match(
      problem('{"a": {"k": 1}, "b": [{"k": 1}, {"k": 1, "x": {"y": 1, "y": 2}}]}')!,
      /^line 1: the key "y" appears twice/,
    );
    assert.equal(problem('{"a": {"k": 1}, "b": {"k": 1}, "k": [{"k": 1}]}'), undefined);
    assert.equal(problem('{"__proto__": 1, "constructor": 2, "toString": 3}'), undefined);
  });

  it("property: refuses a document exactly when some object repeats a key", () => {
    const key = fc.constantFrom("a", "b", "path", "__proto__");
    const json: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constantFrom("1", '"s"', "null"),
        fc.array(tie("node"), { maxLength: 3 }).map((xs) => `[${xs.join(",")}]`),
        fc.array(fc.tuple(key, tie("node")), { maxLength: 4 }).map((entries) =>
          `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`
        ),
      ),
    })).node;
    const repeats = (text: string): boolean => {
      // The model: every object literal's keys, found by a second reading with a reviver-free walk
      // of the text's own structure.
      let found = false;
      const walk = (at: number): number => {
        const c = text[at];
        if (c === "{" || c === "[") {
          const keys = new Set<string>();
          let i = at + 1;
          while (text[i] !== "}" && text[i] !== "]") {
            if (c === "{") {
              const end = text.indexOf('"', i + 1);
              const k = text.slice(i + 1, end);
              if (keys.has(k)) found = true;
              keys.add(k);
              i = end + 2; // past the closing quote and the colon
            }
            i = walk(i);
            if (text[i] === ",") i++;
          }
          return i + 1;
        }
        if (c === '"') return text.indexOf('"', at + 1) + 1;
        let i = at;
        while (i < text.length && !",]}".includes(text[i])) i++;
        return i;
      };
      walk(0);
      return found;
    };
    fc.assert(
      fc.property(json, (text) => {
        const refused = problem(text);
        assert.equal(refused !== undefined && /appears twice/.test(refused), repeats(text), text);
      }),
      propertyOptions(300),
    );
  });
});
