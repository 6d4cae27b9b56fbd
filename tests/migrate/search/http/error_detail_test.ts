import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { errorDetail } from "../../../../src/migrate/search/http/search_client.ts";
import { propertyOptions } from "../../../property.ts";
import { SHARDS_NOT_STARTED } from "../fault_server.ts";

// Bodies as OpenSearch 2.19 answers them (captured from the test node).
const TEXT_SORT =
  "Text fields are not optimised for operations that require per-document field data like " +
  "aggregations and sorting, so these operations are disabled by default.";
const textSort = {
  error: {
    root_cause: [{ type: "illegal_argument_exception", reason: TEXT_SORT }],
    type: "search_phase_execution_exception",
    reason: "all shards failed",
    phase: "query",
    grouped: true,
    failed_shards: [{
      shard: 0,
      index: "fm",
      reason: { type: "illegal_argument_exception", reason: TEXT_SORT },
    }],
    caused_by: { type: "illegal_argument_exception", reason: TEXT_SORT },
  },
  status: 400,
};
describe("errorDetail", () => {
  it("adds the root cause to a generic reason", () => {
    assert.equal(
      errorDetail(textSort),
      `search_phase_execution_exception: all shards failed ` +
        `(illegal_argument_exception: ${TEXT_SORT})`,
    );
  });

  it("takes the first failed shard's reason, then the deepest caused_by, when there is no root cause", () => {
    const { root_cause: _, ...shards } = textSort.error;
    assert.match(
      errorDetail({ error: shards }),
      /all shards failed \(illegal_argument_exception: Text/,
    );
    const caused = {
      type: "search_phase_execution_exception",
      reason: "all shards failed",
      caused_by: {
        type: "a_exception",
        reason: "outer",
        caused_by: { type: "b", reason: "inner" },
      },
    };
    assert.equal(
      errorDetail({ error: caused }),
      "search_phase_execution_exception: all shards failed (b: inner)",
    );
  });

  it("says that no shard answered when the cluster names no cause", () => {
    assert.equal(
      errorDetail(SHARDS_NOT_STARTED),
      "search_phase_execution_exception: all shards failed (no shard of the index was available)",
    );
  });

  it("adds nothing when the reason already says it", () => {
    const mapping = {
      error: {
        root_cause: [{
          type: "mapper_parsing_exception",
          reason: "No handler for type [nope] declared on field [a]",
        }],
        type: "mapper_parsing_exception",
        reason: "Failed to parse mapping [_doc]: No handler for type [nope] declared on field [a]",
        caused_by: {
          type: "mapper_parsing_exception",
          reason: "No handler for type [nope] declared on field [a]",
        },
      },
      status: 400,
    };
    assert.equal(
      errorDetail(mapping),
      "mapper_parsing_exception: Failed to parse mapping [_doc]: No handler for type [nope] " +
        "declared on field [a]",
    );
    assert.equal(
      errorDetail({ error: { type: "x_exception", reason: "why" } }),
      "x_exception: why",
    );
  });

  it("keeps plain answers short", () => {
    assert.equal(errorDetail({ error: "Incorrect HTTP method" }), "Incorrect HTTP method");
    assert.equal(errorDetail(undefined), "no body");
    assert.equal(errorDetail({ a: "x".repeat(1000) }).length, 300);
  });
});

describe("errorDetail (property)", () => {
  const text = fc.string({ minLength: 1, maxLength: 40 });

  it("never throws, whatever the body, and always says something", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), fc.record({ error: fc.jsonValue() }), fc.constant(undefined)),
        (body) => {
          const detail = errorDetail(body);
          assert.equal(typeof detail, "string");
          assert.ok(detail.length > 0);
        },
      ),
      propertyOptions(),
    );
  });

  it("names the top type and reason, and the root cause's reason when it is not in them", () => {
    fc.assert(
      fc.property(text, text, text, text, (type, reason, causeType, cause) => {
        const detail = errorDetail({
          error: { type, reason, root_cause: [{ type: causeType, reason: cause }] },
        });
        assert.ok(detail.startsWith(`${type}: ${reason}`), detail);
        assert.ok(detail.includes(cause), detail);
      }),
      propertyOptions(),
    );
  });
});

describe("errorDetail on hostile bodies", () => {
  it("gives a short text, never a stack overflow, for an error body nested 100,000 deep", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000));
    const detail = errorDetail(deep);
    assert.ok(detail.length <= 300, `${detail.length} characters`);
    assert.ok(detail.startsWith("[[["), detail.slice(0, 20));
    const wrapped = errorDetail({ error: { type: "x", reason: "y", caused_by: deep } });
    assert.equal(wrapped, "x: y");
  });
});
