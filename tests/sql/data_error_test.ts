import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { DataError, firstLine, withoutValues } from "../../src/sql/data_error.ts";
import { propertyOptions } from "../property.ts";

describe("data_error", () => {
  it("names the datasource and the statement's first line that is not blank", () => {
    const error = new DataError({
      datasource: "main",
      reason: "statement",
      statement: "\n   SELECT *\n  FROM users WHERE password = $1",
      message: "permission denied",
      code: "42501",
    });
    assert.equal(error.message, 'datasource "main": SELECT *: permission denied');
    assert.equal(error.statement, "SELECT *");
    assert.equal(error.code, "42501");
    assert.equal(error.name, "DataError");
  });

  it("cuts a long first line", () => {
    const line = firstLine(`SELECT ${"x, ".repeat(100)}`);
    assert.equal(line.length, 120);
    assert.ok(line.endsWith("…"));
  });

  it("puts each bound value of 3 characters or more as …, however the message holds it", () => {
    const at = new Date("2024-01-02T03:04:05Z");
    assert.equal(
      withoutValues("Key (email)=(A@B.c) already exists; id 42, at 2024-01-02T03:04:05.000Z", [
        "a@b.C",
        42,
        at,
      ], "anywhere"),
      "Key (email)=(…) already exists; id 42, at …",
    );
    // Quoted: only where the value stands between quotes or brackets, the database's way.
    assert.equal(
      withoutValues('at "2024-01-02T03:04:05.000Z" or 2024-01-02T03:04:05.000Z', [at]),
      'at "…" or 2024-01-02T03:04:05.000Z',
    );
    // Bytes as hex, and the elements of an array.
    assert.equal(
      withoutValues("'0aff10' and (tok-123)", [new Uint8Array([10, 255, 16]), [["tok-123"]]]),
      "'…' and (…)",
    );
    fc.assert(
      fc.property(
        // A value holding the mask itself could be made of it; values that hold one are rare.
        fc.array(
          fc.string({ unit: "binary", minLength: 3, maxLength: 12 }).filter((v) =>
            !v.includes("…")
          ),
          { minLength: 1, maxLength: 4 },
        ),
        fc.array(fc.string({ unit: "binary", maxLength: 8 }), { maxLength: 6 }),
        fc.constantFrom(['"', '"'], ["'", "'"], ["(", ")"]),
        (values, pieces, [open, close]) => {
          // The values spread through the message, next to each other and to the text around.
          const message = pieces.map((p, i) => p + values[i % values.length]).join("") +
            values.join("");
          const anywhere = withoutValues(message, values, "anywhere");
          // Quoted, as PostgreSQL and MySQL quote a value.
          const quoted = withoutValues(
            pieces.map((p, i) => `${p}${open}${values[i % values.length]}${close}`).join(""),
            values,
          );
          const shown = (out: string) => values.some((v) => out.includes(v));
          // Quoted masks a value where it stands quoted: text around it that holds a value too
          // ("caller" beside the value "call") is the message's own, and stays.
          const unquoted = pieces.some((p) => values.some((v) => p.includes(v)));
          return !shown(anywhere) && (pieces.length === 0 || unquoted || !shown(quoted));
        },
      ),
      propertyOptions(),
    );
  });

  it("leaves shorter values and the message without values as it is", () => {
    assert.equal(
      withoutValues("id 42 not found", [42, "ab", null, undefined, {}]),
      "id 42 not found",
    );
    assert.equal(withoutValues("unchanged", ["elsewhere"]), "unchanged");
  });

  it("leaves the database's own words and the constraint's name when a value equals them", () => {
    // A user named "key" or "users" must not turn the message an app tells constraints apart by.
    const message = 'duplicate key value violates unique constraint "users_email_key"; ' +
      "detail: Key (email)=(a@b.c) already exists.";
    for (const value of ["key", "duplicate", "users", "email", "constraint"]) {
      const out = withoutValues(message, [value, "a@b.c"]);
      assert.ok(
        out.includes('duplicate key value violates unique constraint "users_email_key"'),
        `${JSON.stringify(value)}: ${out}`,
      );
    }
  });
});
