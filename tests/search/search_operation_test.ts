// The endpoint a request calls, from its method and path: the conventions' names for the APIs an
// app calls, and never a name or an id of the user's in it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { searchOperation } from "../../src/search/search_operation.ts";
import { propertyOptions } from "../property.ts";

describe("searchOperation", () => {
  it("names the APIs by the conventions' endpoint names", () => {
    const cases: [string, string, string, string?][] = [
      ["GET", "/", "info"],
      ["HEAD", "/", "ping"],
      ["PUT", "/shop/_doc/1", "index", "shop"],
      ["POST", "/shop/_doc", "index", "shop"],
      ["GET", "/shop/_doc/1", "get", "shop"],
      ["HEAD", "/shop/_doc/1", "exists", "shop"],
      ["DELETE", "/shop/_doc/1", "delete", "shop"],
      ["POST", "/shop/_update/1", "update", "shop"],
      ["POST", "/shop/_search", "search", "shop"],
      ["GET", "/_search", "search"],
      ["POST", "/_search/scroll", "scroll"],
      ["POST", "/shop/_search/template", "search_template", "shop"],
      ["POST", "/_msearch/template", "msearch_template"],
      ["POST", "/_bulk", "bulk"],
      ["POST", "/shop/_bulk", "bulk", "shop"],
      ["PUT", "/shop", "indices.create", "shop"],
      ["DELETE", "/shop", "indices.delete", "shop"],
      ["HEAD", "/shop", "indices.exists", "shop"],
      ["PUT", "/shop/_mapping", "indices.put_mapping", "shop"],
      ["GET", "/shop/_mapping", "indices.get_mapping", "shop"],
      ["POST", "/shop/_refresh", "indices.refresh", "shop"],
      ["GET", "/_cluster/health", "cluster.health"],
      ["GET", "/_cluster/health/shop", "cluster.health"],
      ["GET", "/_cat/indices/shop", "cat.indices"],
      ["GET", "/_nodes/n1/stats", "nodes"],
      ["POST", "/a%2Cb/_count", "count", "a,b"],
    ];
    for (const [method, path, operation, index] of cases) {
      const expected = index === undefined ? { operation } : { operation, index };
      assert.deepEqual(searchOperation(method, path), expected, `${method} ${path}`);
    }
  });

  it("names the same API alike whatever the index and the id, and gives the index back", () => {
    const name = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.startsWith("_"));
    fc.assert(
      fc.property(
        name,
        name,
        fc.constantFrom("GET", "PUT", "POST", "DELETE", "HEAD"),
        fc.constantFrom("_doc", "_update", "_create", "_source", "_search", "_alias"),
        (index, id, method, api) => {
          const path = `/${encodeURIComponent(index)}/${api}/${encodeURIComponent(id)}`;
          const { operation, index: read } = searchOperation(method, path);
          assert.equal(read, index);
          // The same name whatever the index and the id: neither is in it.
          assert.equal(operation, searchOperation(method, `/x/${api}/y`).operation);
        },
      ),
      propertyOptions(),
    );
  });
});
