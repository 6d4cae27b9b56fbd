import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { type Send, StepError } from "./reindex_step.ts";
import { renderValue } from "../render_value.ts";
import {
  type Narrowing,
  narrowVanished,
  seqBounds,
  type SeqListing,
  type SeqRange,
  wholeRanges,
} from "./vanished_ranges.ts";

// The helpers a reindex uses to copy while writes go on, then catch up: every write to the
// source gets a sequence number on its shard, and a document holds the number of its last write.

/** One primary shard's sequence numbers. */
export interface ShardSeqNo {
  readonly shard: number;
  /** The highest one given out: every write moves it. */
  readonly max: number;
  /** Every write up to it is done on every in-sync copy of the shard. */
  readonly global: number;
}

/**
 * An index's uuid and its primary shards' sequence numbers, from `_stats`: every primary, or a
 * failure. A shard left out (its node failed the request) would lower no checkpoint, and the
 * writes on it between its checkpoint and the others' would never be copied.
 */
export async function shardSeqNos(
  send: Send,
  index: string,
): Promise<{ readonly uuid: string; readonly shards: readonly ShardSeqNo[] }> {
  const path = `/${encodeURIComponent(index)}`;
  const settings = await send("GET", `${path}/_settings/index.number_of_shards?flat_settings=true`);
  const own = isJsonObject(settings.body) && isJsonObject(settings.body[index])
    ? settings.body[index] as JsonObject
    : {};
  const count = Number(isJsonObject(own.settings) ? own.settings["index.number_of_shards"] : NaN);
  const response = await send("GET", `${path}/_stats/docs?level=shards`);
  const body = isJsonObject(response.body) ? response.body : {};
  const answered = isJsonObject(body._shards) ? body._shards : {};
  if (answered.failed !== 0) {
    throw new StepError(
      `the shard stats of ${index} failed on ${renderValue(answered.failed, 20)} shard copies`,
    );
  }
  const indices = isJsonObject(body.indices) ? body.indices : {};
  const stats = isJsonObject(indices[index]) ? indices[index] as JsonObject : {};
  const shards = isJsonObject(stats.shards) ? stats.shards : {};
  const found: ShardSeqNo[] = [];
  for (const [shard, copies] of Object.entries(shards)) {
    const primary = Array.isArray(copies)
      ? copies.find((c) => isJsonObject(c) && isJsonObject(c.routing) && c.routing.primary === true)
      : undefined;
    const seq = isJsonObject(primary) && isJsonObject(primary.seq_no) ? primary.seq_no : {};
    if (typeof seq.max_seq_no !== "number" || typeof seq.global_checkpoint !== "number") {
      throw new StepError(
        `the shard stats of ${index} have no sequence numbers for shard ${shard}`,
      );
    }
    found.push({ shard: Number(shard), max: seq.max_seq_no, global: seq.global_checkpoint });
  }
  if (!Number.isInteger(count) || found.length !== count) {
    throw new StepError(
      `the shard stats of ${index} list ${found.length} primary shard(s) of ${
        Number.isInteger(count) ? count : "an unknown number"
      }`,
    );
  }
  if (typeof stats.uuid !== "string" || stats.uuid === "") {
    throw new StepError(`the stats of ${index} give no uuid`);
  }
  return { uuid: stats.uuid, shards: found.sort((a, b) => a.shard - b.shard) };
}

/**
 * Refreshes an index on every copy of every shard, or fails: a copy not refreshed would hide
 * writes from what reads it next (a copy, a count, a listing).
 */
export async function refresh(send: Send, index: string): Promise<void> {
  const response = await send("POST", `/${encodeURIComponent(index)}/_refresh`);
  const body = isJsonObject(response.body) ? response.body : {};
  const shards = isJsonObject(body._shards) ? body._shards : {};
  if (shards.failed !== 0) {
    throw new StepError(
      `the refresh of ${index} failed on ${renderValue(shards.failed, 20)} shard copies`,
    );
  }
}

/**
 * The number below which every write to the source is visible once it is refreshed: the lowest
 * of its shards' global checkpoints (a copy that reads a replica sees those writes too). One
 * number for all shards, since a `_reindex` query cannot tell shards apart: a shard further
 * ahead has a few of its documents copied twice, which the copy, overwriting, allows.
 */
export function checkpointOf(shards: readonly ShardSeqNo[]): number {
  return Math.min(...shards.map((s) => s.global));
}

const PAGE = 5_000;

/**
 * The documents of one shard that `query` matches, in the order of their sequence numbers. Pages
 * by `search_after` on `_seq_no`, which no two live documents of a shard share: a document that
 * changes meanwhile leaves the query's range or not, and none is listed twice.
 */
async function listShard(
  send: Send,
  index: string,
  shard: number,
  query: JsonObject,
): Promise<SeqListing> {
  const ids: string[] = [];
  const seqs: number[] = [];
  let after: number | undefined;
  for (;;) {
    const response = await send(
      "POST",
      `/${encodeURIComponent(index)}/_search?preference=_shards:${shard}`,
      {
        query,
        size: PAGE,
        // An index without a mapping yet (nothing ever written) knows no `_seq_no` to sort on.
        sort: [{ _seq_no: { order: "asc", unmapped_type: "long" } }],
        _source: false,
        track_total_hits: false,
        ...(after === undefined ? {} : { search_after: [after] }),
      },
    );
    const hits = searchHits(response.body, index);
    for (const hit of hits) {
      const seq = Array.isArray(hit.sort) ? hit.sort[0] : undefined;
      if (typeof hit._id !== "string" || typeof seq !== "number") {
        throw new StepError(`a hit of ${index} has no _id or _seq_no: ${renderValue(hit, 200)}`);
      }
      // Pages follow each other: a number that does not grow is an answer that would never end.
      if (after !== undefined && seq <= after) {
        throw new StepError(`the sequence numbers of ${index} came back out of order (${seq})`);
      }
      ids.push(hit._id);
      seqs.push(seq);
      after = seq;
    }
    if (hits.length < PAGE) return { shard, ids, seqs };
  }
}

/**
 * The hits of a search answer that read every shard it asked, whole. Anything less (a shard that
 * failed, a search that timed out, an answer that is not a search's) would make documents look
 * deleted, and the prune would delete them from the new index.
 */
function searchHits(body: unknown, index: string): JsonObject[] {
  const answer = isJsonObject(body) ? body : {};
  const shards = isJsonObject(answer._shards) ? answer._shards : {};
  const hits = isJsonObject(answer.hits) ? answer.hits.hits : undefined;
  if (
    typeof shards.total !== "number" || typeof shards.failed !== "number" || !Array.isArray(hits)
  ) {
    throw new StepError(
      `a search of ${index} answered without its shards and hits: ${renderValue(body, 200)}`,
    );
  }
  if (shards.failed > 0 || shards.successful !== shards.total) {
    throw new StepError(
      `a search of ${index} failed on ${
        shards.total - Number(shards.successful ?? 0)
      } of ${shards.total} shard(s)`,
    );
  }
  if (answer.timed_out === true) throw new StepError(`a search of ${index} timed out`);
  return hits.filter(isJsonObject);
}

/** The sequence number of each of `ids` that one shard of the index holds. */
async function seqNosOn(
  send: Send,
  index: string,
  shard: number,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += 1_000) batches.push(ids.slice(i, i + 1_000));
  await inTurns(batches, async (batch) => {
    const response = await send(
      "POST",
      `/${encodeURIComponent(index)}/_search?preference=_shards:${shard}`,
      {
        query: { ids: { values: batch } },
        size: batch.length,
        _source: false,
        seq_no_primary_term: true,
        track_total_hits: false,
      },
    );
    for (const hit of searchHits(response.body, index)) {
      if (typeof hit._id === "string" && typeof hit._seq_no === "number") {
        found.set(hit._id, hit._seq_no);
      }
    }
  });
  return found;
}

/** Deletes `ids` from the new index (only the reindex writes there), whatever their routing. */
async function deleteIds(send: Send, index: string, ids: readonly string[]): Promise<void> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += 1_000) batches.push(ids.slice(i, i + 1_000));
  await inTurns(batches, async (batch) => {
    const response = await send(
      "POST",
      `/${encodeURIComponent(index)}/_delete_by_query`,
      { query: { ids: { values: batch } } },
    );
    const body = isJsonObject(response.body) ? response.body : {};
    const failures = Array.isArray(body.failures) ? body.failures : [];
    if (failures.length > 0) {
      throw new StepError(
        `deleting from ${index} documents the source no longer holds failed: ` +
          renderValue(failures[0], 300),
      );
    }
  });
}

/**
 * What the new index holds, as the source's documents: per shard of the source, each document's
 * id and the sequence number it was copied at; and the new index's own sequence numbers when that
 * was last true, so that what was copied since can be found. Kept in memory by one run.
 */
export interface Baseline {
  readonly shards: Map<number, Map<string, number>>;
  written: readonly ShardSeqNo[];
  /** `shards` in the order of their sequence numbers, once sorted ({@linkcode listingsOf}). */
  listings?: readonly SeqListing[] | undefined;
}

/**
 * The baseline as listings in the order of their sequence numbers, sorted once per change: call
 * it before the block, so that the rebase under it does not sort the whole index while writes wait.
 */
export function listingsOf(baseline: Baseline): readonly SeqListing[] {
  baseline.listings ??= [...baseline.shards].map(([shard, docs]) => {
    const sorted = [...docs].sort((a, b) => a[1] - b[1]);
    return { shard, ids: sorted.map(([id]) => id), seqs: sorted.map(([, seq]) => seq) };
  });
  return baseline.listings;
}

/**
 * Makes the new index hold exactly the source's documents whose sequence number is at most
 * `upTo` (every write up to it copied already): deletes the rest from it, those deleted from the
 * source since they were copied and those written again since (the next catch-up, from `upTo`,
 * copies them again). Reads both indices whole, while writes go on; {@linkcode rebase} then
 * keeps the same true reading only what changed. Returns the baseline, and how many it took out
 * (see {@linkcode Removed}).
 */
export async function prune(
  send: Send,
  source: string,
  index: string,
  upTo: number,
): Promise<Removed & { readonly baseline: Baseline }> {
  const { shards } = await shardSeqNos(send, source);
  const baseline: Baseline = { shards: new Map(), written: [] };
  await inTurns(shards, async ({ shard }) => {
    const listed = await listShard(send, source, shard, { range: { _seq_no: { lte: upTo } } });
    baseline.shards.set(shard, new Map(listed.ids.map((id, i) => [id, listed.seqs[i]])));
  });
  const held = (id: string) => [...baseline.shards.values()].some((m) => m.has(id));
  await refresh(send, index);
  const stale: string[] = [];
  await inTurns((await shardSeqNos(send, index)).shards, async ({ shard }) => {
    const copied = await listShard(send, index, shard, { match_all: {} });
    for (const id of copied.ids) if (!held(id)) stale.push(id);
  });
  // Those the source still holds, at a number above `upTo`, are copied again, not deleted. Only
  // a shard that has written past `upTo` by now can hold one: under the block (`upTo` past every
  // shard's last number) nothing is looked up.
  const later = new Set<string>();
  const since = stale.length === 0
    ? []
    : (await shardSeqNos(send, source)).shards.filter((s) => s.max > upTo);
  await inTurns(since, async ({ shard }) => {
    for (const id of (await seqNosOn(send, source, shard, stale)).keys()) later.add(id);
  });
  await deleteIds(send, index, stale);
  baseline.written = (await shardSeqNos(send, index)).shards;
  // By entry, as `stale` lists them: an id on two shards of the new index is one of each count.
  const deleted = stale.filter((id) => !later.has(id)).length;
  return { baseline, deleted, recopied: stale.length - deleted };
}

// Ranges counted per search, as buckets of one `range` aggregation (well under max_buckets).
const RANGES_PER_SEARCH = 500;
// Each fallen short range costs its ids in the existence check, each split `parts` counts.
const NARROWING: Narrowing = { leaf: 32, parts: 32 };

/**
 * The documents {@linkcode prune} or {@linkcode rebase} took out of the new index: `deleted`, those
 * the source no longer holds; `recopied`, those it holds written again since they were copied (or
 * copied ahead of the checkpoint), which a catch-up copies again.
 */
export interface Removed {
  readonly deleted: number;
  readonly recopied: number;
}

/** What {@linkcode rebase} did: documents taken out of the new index, and documents looked at. */
export interface Rebased extends Removed {
  readonly looked: number;
}

/**
 * Makes {@linkcode prune}'s promise true again, for `upTo` now, reading only what changed since
 * the baseline: the ranges of the baseline whose counts in the source fell (deleted or written
 * again since; see {@linkcode narrowVanished}), and what the new index took since. Each of those
 * documents is looked up on every shard of the source: gone, it is deleted from the new index;
 * at a sequence number up to `upTo`, the baseline notes it (its last write is copied); above, it
 * is deleted from the new index for the next catch-up to copy again. Under the block, with
 * everything copied, `upTo` is `Infinity` and the new index then holds exactly the source.
 */
export async function rebase(
  send: Send,
  source: string,
  index: string,
  baseline: Baseline,
  upTo: number,
): Promise<Rebased> {
  const looked = new Set<string>();
  let ranges: SeqRange[] = wholeRanges(listingsOf(baseline));
  while (ranges.length > 0) {
    const counts = await countRanges(send, source, ranges);
    const step = narrowVanished(ranges, counts, NARROWING);
    for (const id of step.candidates) looked.add(id);
    ranges = step.next;
  }
  await refresh(send, index);
  await inTurns(baseline.written, async ({ shard, max }) => {
    const since = await listShard(send, index, shard, { range: { _seq_no: { gt: max } } });
    for (const id of since.ids) looked.add(id);
  });
  const ids = [...looked];
  const now = new Map<number, Map<string, number>>();
  await inTurns([...baseline.shards.keys()], async (shard) => {
    now.set(shard, await seqNosOn(send, source, shard, ids));
  });
  const stale: string[] = [];
  let recopied = 0;
  for (const id of ids) {
    let kept = false;
    let held = false;
    for (const [shard, docs] of baseline.shards) {
      const seq = now.get(shard)!.get(id);
      held ||= seq !== undefined;
      if (seq !== undefined && seq <= upTo) {
        if (docs.get(id) !== seq) baseline.listings = undefined;
        docs.set(id, seq);
        kept = true;
      } else if (docs.delete(id)) baseline.listings = undefined;
    }
    if (!kept) stale.push(id);
    if (!kept && held) recopied++;
  }
  await deleteIds(send, index, stale);
  baseline.written = (await shardSeqNos(send, index)).shards;
  return { deleted: stale.length - recopied, recopied, looked: ids.length };
}

// The source's count now of each range's bounds, on the range's shard.
async function countRanges(
  send: Send,
  source: string,
  ranges: readonly SeqRange[],
): Promise<number[]> {
  const counts = new Array<number>(ranges.length);
  const chunks: { shard: number; positions: number[] }[] = [];
  const byShard = new Map<number, number[]>();
  for (const [i, r] of ranges.entries()) {
    const list = byShard.get(r.listing.shard) ?? [];
    list.push(i);
    byShard.set(r.listing.shard, list);
  }
  for (const [shard, positions] of byShard) {
    for (let at = 0; at < positions.length; at += RANGES_PER_SEARCH) {
      chunks.push({ shard, positions: positions.slice(at, at + RANGES_PER_SEARCH) });
    }
  }
  // The shards answer side by side: under the block, each round trip is time writes wait.
  await inTurns(chunks, async ({ shard, positions }) => {
    const bounds = positions.map((i) => seqBounds(ranges[i]));
    const response = await send(
      "POST",
      `/${encodeURIComponent(source)}/_search?preference=_shards:${shard}`,
      {
        size: 0,
        track_total_hits: false,
        // Only the documents from the first range to the last are read: one pass over their
        // sequence numbers counts every range.
        query: {
          range: {
            _seq_no: {
              gte: Math.min(...bounds.map((b) => b.gte)),
              lte: Math.max(...bounds.map((b) => b.lte)),
            },
          },
        },
        aggs: {
          r: {
            range: {
              field: "_seq_no",
              keyed: true,
              ranges: bounds.map((b, k) => ({ key: `${k}`, from: b.gte, to: b.lte + 1 })),
            },
          },
        },
      },
    );
    searchHits(response.body, source);
    const body = response.body as JsonObject;
    const aggs = isJsonObject(body.aggregations) ? body.aggregations : {};
    const r = isJsonObject(aggs.r) ? aggs.r : {};
    const buckets = isJsonObject(r.buckets) ? r.buckets : {};
    for (const [k, i] of positions.entries()) {
      const bucket = buckets[`${k}`];
      const count = isJsonObject(bucket) ? bucket.doc_count : undefined;
      if (typeof count !== "number") throw new StepError(`a range count of ${source} is missing`);
      counts[i] = count;
    }
  });
  return counts;
}

// Runs `work` on each item, a few at a time: enough to keep the shards busy, not to flood them.
async function inTurns<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(4, items.length) }, worker));
}
