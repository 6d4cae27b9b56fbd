import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isJsonMediaType } from "../../src/http/media_type.ts";

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
