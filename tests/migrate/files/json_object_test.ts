import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isJsonObject } from "../../../src/migrate/files/json_object.ts";
import { propertyOptions } from "../../property.ts";

describe("isJsonObject", () => {
  it("property: holds for a parsed object, and for no array, null, string, number or boolean", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed: unknown = JSON.parse(JSON.stringify(value));
        const model = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
        assert.equal(isJsonObject(parsed), model);
      }),
      propertyOptions(200),
    );
  });
});
