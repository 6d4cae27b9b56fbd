import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  narrowVanished,
  seqBounds,
  type SeqListing,
  type SeqRange,
  wholeRanges,
} from "../../../../src/migrate/search/reindex/vanished_ranges.ts";
import { propertyOptions } from "../../../property.ts";

// A shard as the model holds it: each listed document's sequence number, and which of them are
// gone now (deleted, or updated to a number above the listing's).
const shard = fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { maxLength: 400 }).chain(
  (seqs) =>
    fc.tuple(
      fc.constant([...seqs].sort((a, b) => a - b)),
      fc.subarray(seqs.map((_, i) => i)),
    ),
);

/** Runs the search to its end against the model's counts; returns the candidates and counts asked. */
function search(
  listings: readonly SeqListing[],
  gone: ReadonlySet<string>,
  leaf: number,
  parts: number,
) {
  const candidates: string[] = [];
  let ranges: SeqRange[] = wholeRanges(listings);
  let asked = 0;
  while (ranges.length > 0) {
    asked += ranges.length;
    // The source now: what the listing held in the range, less what is gone.
    const counts = ranges.map((r) => {
      const { gte, lte } = seqBounds(r);
      return r.listing.ids.filter((id, i) =>
        r.listing.seqs[i] >= gte && r.listing.seqs[i] <= lte && !gone.has(id)
      ).length;
    });
    const step = narrowVanished(ranges, counts, { leaf, parts });
    candidates.push(...step.candidates);
    ranges = step.next;
  }
  return { candidates, asked };
}

describe("narrowVanished: the documents a listing lost, found by counts", () => {
  it("finds every one gone, and only ids from short ranges beside them", () => {
    fc.assert(
      fc.property(
        fc.array(shard, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 2, max: 20 }),
        (shards, leaf, parts) => {
          const gone = new Set<string>();
          const listings = shards.map(([seqs, goneAt], n) => {
            const ids = seqs.map((s) => `${n}-${s}`);
            for (const i of goneAt) gone.add(ids[i]);
            return { shard: n, ids, seqs };
          });
          const { candidates } = search(listings, gone, leaf, parts);
          for (const id of gone) assert.ok(candidates.includes(id), `${id} not found`);
          // Each candidate shares a short range with a gone one: at most `leaf` per gone id.
          assert.ok(candidates.length <= gone.size * leaf, `${candidates.length} candidates`);
          assert.equal(new Set(candidates).size, candidates.length, "an id twice");
        },
      ),
      propertyOptions(),
    );
  });

  it("asks one count per shard when nothing is gone", () => {
    fc.assert(
      fc.property(fc.array(shard, { minLength: 1, maxLength: 4 }), (shards) => {
        const listings = shards.map(([seqs], n) => ({
          shard: n,
          ids: seqs.map((s) => `${n}-${s}`),
          seqs,
        }));
        const { candidates, asked } = search(listings, new Set(), 16, 16);
        assert.deepEqual(candidates, []);
        assert.equal(asked, listings.filter((l) => l.ids.length > 0).length);
      }),
      propertyOptions(),
    );
  });

  it("finds one document gone of 100,000 with a few hundred counts, not a read of them all", () => {
    const seqs = Array.from({ length: 100_000 }, (_, i) => i * 2);
    const listing = { shard: 0, ids: seqs.map((s) => `d${s}`), seqs };
    const { candidates, asked } = search([listing], new Set(["d123456"]), 256, 16);
    assert.ok(candidates.includes("d123456"));
    assert.ok(candidates.length <= 256);
    // 100,000 / 256 in steps of 16: three splits of 16 ranges after the first count.
    assert.equal(asked, 1 + 16 * 3);
  });

  it("looks at a range whose count rose, which a cluster keeping its promise never gives", () => {
    const listing = { shard: 0, ids: ["a", "b"], seqs: [1, 2] };
    const step = narrowVanished(wholeRanges([listing]), [3], { leaf: 4, parts: 2 });
    assert.deepEqual(step.candidates, ["a", "b"]);
  });

  it("refuses counts that do not match the ranges", () => {
    const listing = { shard: 0, ids: ["a"], seqs: [1] };
    assert.throws(
      () => narrowVanished(wholeRanges([listing]), [], { leaf: 1, parts: 2 }),
      /1 range\(s\) but 0 count\(s\)/,
    );
  });
});
