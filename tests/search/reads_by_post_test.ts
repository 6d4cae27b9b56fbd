import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { readsByPost } from "../../src/search/reads_by_post.ts";
import { propertyOptions } from "../property.ts";

// A segment the client may write: an index name, a document id, an endpoint.
const segment = fc.oneof(
  fc.constantFrom("products", "logs-*", "a,b", "_all", "_doc", "_create", "_update", "_search"),
  fc.constantFrom("_count", "_bulk", "_settings", "_mapping", "_alias", "_snapshot", "scroll"),
  fc.stringMatching(/^[a-z0-9_.-]{1,8}$/),
);

describe("readsByPost", () => {
  it("takes the reads a GET with a body stands for, with an index or none", () => {
    for (
      const path of [
        "/_search",
        "/products/_search",
        "/a,b/_count",
        "/_all/_msearch",
        "/products/_search/template",
        "/_search/scroll",
        "/_search/scroll/abc",
        "/_render/template/t1",
        "/products/_explain/7",
        "/products/_termvectors/7",
        "/products/_validate/query",
        "/_cluster/allocation/explain",
        "/_scripts/painless/_execute",
        "products/_mget",
      ]
    ) {
      assert.equal(readsByPost(path), true, path);
    }
  });

  it("leaves out a document (which POST would write), and what POST changes", () => {
    for (
      const path of [
        "/products/_doc/_search",
        "/products/_doc/1",
        "/products/_update/1",
        "/_snapshot/repo/snap",
        "/_cluster/health",
        "/products/_settings",
        "/_search/point_in_time",
        "/products/_search/extra",
      ]
    ) {
      assert.equal(readsByPost(path), false, path);
    }
  });

  it("property: a path with a document segment is never a read by POST", () => {
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 3 }),
        fc.constantFrom("_doc", "_create", "_update"),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        (before, kind, after) => {
          const path = `/${[...before, kind, ...after].join("/")}`;
          // `_doc` may only come after an index: no endpoint of a read has it in its path.
          assert.equal(readsByPost(path), false, path);
        },
      ),
      propertyOptions(),
    );
  });
});
