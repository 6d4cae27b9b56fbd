import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isJsonMediaType, mediaTypeParameter } from "../../src/http/media_type.ts";
import { propertyOptions } from "../property.ts";

// The parameters of a media type as the reader took them before it kept its place: each `;` then
// looked for the next `=` from where it stood. Plain, and quadratic on a run of `;`.
function referenceParameter(type: string, wanted: string): string | undefined {
  const found: [string, string][] = [];
  let i = type.indexOf(";");
  while (i !== -1) {
    const equals = type.indexOf("=", i + 1);
    const next = type.indexOf(";", i + 1);
    if (equals === -1 || (next !== -1 && next < equals)) {
      i = next;
      continue;
    }
    const name = type.slice(i + 1, equals).trim().toLowerCase();
    let j = equals + 1;
    while (type[j] === " " || type[j] === "\t") j++;
    if (type[j] === '"') {
      let value = "";
      for (j++; j < type.length && type[j] !== '"'; j++) {
        if (type[j] === "\\") j++;
        value += type[j] ?? "";
      }
      found.push([name, value]);
      i = type.indexOf(";", j);
    } else {
      const end = type.indexOf(";", j);
      found.push([name, type.slice(j, end === -1 ? undefined : end).trim()]);
      i = end;
    }
  }
  return found.find(([key]) => key === wanted.toLowerCase())?.[1];
}

describe("mediaTypeParameter", () => {
  it("reads what the plain reader reads, from any text (property)", () => {
    const text = fc.array(fc.constantFrom(";", "=", '"', "\\", " ", "q", "Q", "v", "1", ","), {
      maxLength: 40,
    }).map((chars) => `a/b${chars.join("")}`);
    fc.assert(
      fc.property(text, fc.constantFrom("q", "v", "qv"), (type, name) => {
        assert.equal(mediaTypeParameter(type, name), referenceParameter(type, name));
      }),
      propertyOptions(2000),
    );
  });

  it("reads a run of many `;` and still finds the parameter after it", () => {
    const type = `application/openmetrics-text${";".repeat(200_000)}q=0.5`;
    assert.equal(mediaTypeParameter(type, "q"), "0.5");
    assert.equal(mediaTypeParameter(type, "version"), undefined);
  });
});

describe("isJsonMediaType", () => {
  it("is application/json or application/*+json, in any case, with any parameters", () => {
    for (
      const yes of [
        "application/json",
        "Application/JSON; charset=utf-8",
        "application/problem+json",
      ]
    ) {
      assert.ok(isJsonMediaType(yes), yes);
    }
    for (const no of ["text/json", "application/jsonp", "application/json-seq", "text/plain"]) {
      assert.equal(isJsonMediaType(no), false, no);
    }
  });
});
