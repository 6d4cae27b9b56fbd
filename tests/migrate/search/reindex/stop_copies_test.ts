import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { copiesInto } from "../../../../src/migrate/search/reindex/stop_copies.ts";
import { propertyOptions } from "../../../property.ts";

describe("copiesInto: a _reindex task's description names its destination", () => {
  it("reads OpenSearch's form, and Elasticsearch 7's, which adds the type", () => {
    const script = "updated with Script{type=inline, lang='painless', idOrCode='x', params={}}";
    // As OpenSearch 2 and Elasticsearch 7.10.2 describe the same copy (captured from each node).
    assert.equal(copiesInto("reindex from [p-v1] to [p-v2]", "p-v2", false), true);
    assert.equal(copiesInto(`reindex from [p-v1] ${script} to [p-v2][_doc]`, "p-v2", true), true);
    assert.equal(copiesInto("reindex from [p-v1] to [p-v2]", "p-v2", true), true);
    assert.equal(copiesInto("reindex from [p-v1] to [p-v2][_doc]", "p-v1", true), false);
    assert.equal(copiesInto("reindex from [p-v1] to [p-v22]", "p-v2", false), false);
    assert.equal(copiesInto("reindex from [p-v1] to [xp-v2]", "p-v2", false), false);
    assert.equal(copiesInto(undefined, "p-v2", true), false);
  });

  it("on OpenSearch, a copy into an index named foo][bar is not one into foo", () => {
    // Brackets are legal in index names; only Elasticsearch 7 writes a type after the index.
    assert.equal(copiesInto("reindex from [src] to [foo][bar]", "foo", false), false);
    assert.equal(copiesInto("reindex from [src] to [foo][bar]", "foo][bar", false), true);
  });

  it("matches exactly the destination written, whatever its name and type (property)", () => {
    const name = fc.string({ minLength: 1, maxLength: 12, unit: "binary" });
    const type = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/);
    fc.assert(
      fc.property(name, name, fc.option(type, { nil: undefined }), (dest, other, t) => {
        const typed = t !== undefined;
        const description = `reindex from [src] to [${dest}]${typed ? `[${t}]` : ""}`;
        assert.equal(copiesInto(description, dest, typed), true);
        // Brackets in both names could spell each other's ending: the cluster refuses none.
        if (other !== dest && !/[[\]]/.test(dest + other)) {
          assert.equal(copiesInto(description, other, typed), false, `${description} / ${other}`);
        }
        if (!typed) assert.equal(copiesInto(description, dest, false), true);
      }),
      propertyOptions(),
    );
  });
});
