import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { taskFailure } from "../../../../src/migrate/search/reindex/reindex_values.ts";

describe("taskFailure: a search failure that names no shard or index", () => {
  const finished = (failures: unknown[]) => ({ completed: true, response: { failures } });
  const reason = { type: "search_phase_execution_exception", reason: "all shards failed" };

  it("says the source could not be read, not shard -1 of undefined", () => {
    assert.equal(
      taskFailure(finished([{ shard: -1, node: "n2", reason }])),
      "the copy could not read the source index on node n2 (1 failure(s)): " +
        "search_phase_execution_exception: all shards failed",
    );
    assert.equal(
      taskFailure(finished([{ shard: null, index: null, reason }, { shard: -1 }])),
      "the copy could not read the source index (2 failure(s)): " +
        "search_phase_execution_exception: all shards failed",
    );
  });

  it("names the index without a shard, and the shard where both are known", () => {
    assert.equal(
      taskFailure(finished([{ shard: -1, index: "p-v1", reason }])),
      'the copy could not read "p-v1" (1 failure(s)): ' +
        "search_phase_execution_exception: all shards failed",
    );
    assert.equal(
      taskFailure(finished([{ shard: 2, index: "p-v1", reason }])),
      'the copy could not read shard 2 of "p-v1" (1 failure(s)): ' +
        "search_phase_execution_exception: all shards failed",
    );
  });
});
