import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clusterFoundNothing } from "../../../src/migrate/search/found_nothing.ts";

// Bodies as the test node answers a DELETE of what is not there (captured), and as proxies do.
describe("clusterFoundNothing", () => {
  it("takes the cluster's own 404s", () => {
    for (
      const body of [
        {
          error: { type: "index_not_found_exception", reason: "no such index [x]" },
          status: 404,
        },
        { error: { type: "index_template_missing_exception" }, status: 404 },
        { _index: "x", _id: "1", result: "not_found" },
        { status: "NOT_FOUND", message: "Resource 'x' not found." },
      ]
    ) {
      assert.equal(clusterFoundNothing({ status: 404, body }), true, JSON.stringify(body));
    }
  });

  it("refuses a 404 in any other form, and any other status", () => {
    for (
      const response of [
        { status: 404, body: "<html><body>404 Not Found</body></html>" },
        { status: 404, body: { message: "Not Found" } },
        { status: 404, body: { error: "Not Found", status: 404 } },
        { status: 404, body: undefined },
        { status: 400, body: { error: { type: "index_not_found_exception" }, status: 400 } },
        { status: 200, body: { result: "not_found" } },
      ]
    ) {
      assert.equal(clusterFoundNothing(response), false, JSON.stringify(response));
    }
  });
});
