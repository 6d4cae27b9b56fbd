import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { reindexUndoRefusal } from "../../../../src/migrate/search/reindex/reindex_undo.ts";
import type { ReindexSpec } from "../../../../src/migrate/search/plan/search_request.ts";
import { propertyOptions } from "../../../property.ts";

// The pure check of an undo file against its reindex file, before anything runs. Its server
// cases are in reindex_undo_test.ts.

const forward = (extra: Partial<ReindexSpec> = {}): ReindexSpec => ({
  alias: "people",
  index: "users-v2",
  deleteSource: false,
  unblockSource: false,
  ...extra,
});

const undo = (extra: Partial<ReindexSpec> = {}): ReindexSpec => ({
  alias: "people",
  index: "users",
  deleteSource: false,
  unblockSource: false,
  ...extra,
});

describe("reindexUndoRefusal", () => {
  it("accepts an undo back into the previous index, named or not, with a script", () => {
    assert.equal(reindexUndoRefusal(forward(), undo(), {}), undefined);
    assert.equal(
      reindexUndoRefusal(
        forward({ source: "users", unblockSource: true }),
        undo({ source: "users-v2", script: { source: "ctx._source.x = 1" } }),
        {},
      ),
      undefined,
    );
  });

  it("refuses when the reindex file deletes its source, naming the setting that keeps it", () => {
    const reason = reindexUndoRefusal(forward({ deleteSource: true }), undo(), {});
    assert.match(reason ?? "", /"delete_source": true/);
    assert.match(reason ?? "", /keep the previous index with "delete_source": false/);
  });

  it("refuses another alias, the forward's own index, another previous index or source", () => {
    assert.match(reindexUndoRefusal(forward(), undo({ alias: "staff" }), {}) ?? "", /"staff"/);
    assert.match(
      reindexUndoRefusal(forward(), undo({ index: "users-v2" }), {}) ?? "",
      /the index the reindex file made/,
    );
    assert.match(
      reindexUndoRefusal(forward({ source: "users-v1" }), undo(), {}) ?? "",
      /copied from "users-v1"/,
    );
    assert.match(
      reindexUndoRefusal(forward(), undo({ source: "users-v3" }), {}) ?? "",
      /"source" is "users-v3"/,
    );
  });

  it("refuses settings or mappings, and delete_source or unblock_source, in the undo file", () => {
    assert.match(
      reindexUndoRefusal(forward(), undo(), { settings: {}, mappings: {} }) ?? "",
      /"settings" and "mappings"/,
    );
    assert.match(reindexUndoRefusal(forward(), undo(), { mappings: {} }) ?? "", /"mappings"/);
    assert.match(
      reindexUndoRefusal(forward(), undo({ deleteSource: true }), {}) ?? "",
      /"delete_source"/,
    );
    assert.match(
      reindexUndoRefusal(forward(), undo({ unblockSource: true }), {}) ?? "",
      /"unblock_source"/,
    );
  });

  it("accepts exactly the undo files that point the alias back at the reindex's source", () => {
    const name = fc.constantFrom("users", "users-v2", "users-v3", "people", "staff");
    fc.assert(
      fc.property(
        fc.record({
          alias: name,
          index: name,
          source: fc.option(name, { nil: undefined }),
          deleteSource: fc.boolean(),
          unblockSource: fc.boolean(),
        }),
        fc.record({
          alias: name,
          index: name,
          source: fc.option(name, { nil: undefined }),
          deleteSource: fc.boolean(),
          unblockSource: fc.boolean(),
        }),
        fc.subarray(["settings", "mappings", "aliases"]),
        (f, u, keys) => {
          const strip = (s: typeof f): ReindexSpec => {
            const { source, ...rest } = s;
            return source === undefined ? rest : { ...rest, source };
          };
          const body = Object.fromEntries(keys.map((k) => [k, {}]));
          const reason = reindexUndoRefusal(strip(f), strip(u), body);
          const fine = !f.deleteSource && u.alias === f.alias && u.index !== f.index &&
            (f.source === undefined || u.index === f.source) &&
            (u.source === undefined || u.source === f.index) &&
            !keys.includes("settings") && !keys.includes("mappings") &&
            !u.deleteSource && !u.unblockSource;
          assert.equal(reason === undefined, fine, reason);
          if (reason !== undefined) assert.ok(reason.length > 20 && !reason.includes("undefined"));
        },
      ),
      propertyOptions(500),
    );
  });
});
