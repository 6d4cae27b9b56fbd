/**
 * The documents one shard of the source held up to a sequence number, listed in the order of
 * their `_seq_no` (each live document has its own): `ids[i]` has `seqs[i]`, and `seqs` ascends.
 */
export interface SeqListing {
  readonly shard: number;
  readonly ids: readonly string[];
  readonly seqs: readonly number[];
}

/** A run of a listing, `from` to `to` (exclusive) by position, to be counted on the cluster. */
export interface SeqRange {
  readonly listing: SeqListing;
  readonly from: number;
  readonly to: number;
}

/** The `_seq_no` bounds (both inclusive) a count of a range asks the source about. */
export function seqBounds(range: SeqRange): { readonly gte: number; readonly lte: number } {
  return { gte: range.listing.seqs[range.from], lte: range.listing.seqs[range.to - 1] };
}

/** The ranges that cover each listing whole: where a search for vanished documents begins. */
export function wholeRanges(listings: readonly SeqListing[]): SeqRange[] {
  return listings.filter((l) => l.ids.length > 0).map((listing) => ({
    listing,
    from: 0,
    to: listing.ids.length,
  }));
}

/** How {@linkcode narrowVanished} splits ranges. */
export interface Narrowing {
  /** A range this short whose count fell is not split: its ids are checked one by one. */
  readonly leaf: number;
  /** How many parts a longer one is split into. */
  readonly parts: number;
}

/**
 * One step of the search for documents of a listing that are no longer in the source with the
 * sequence number listed (deleted since, or updated: an update gives a document a higher one).
 * Nothing can enter a listed range since it was listed, since new writes get higher sequence
 * numbers: a range the source now holds fewer documents of has lost some, one whose count is
 * unchanged has lost none (a count above it, which only a broken promise of the cluster could
 * give, is split and looked at like a fallen one). `counts[i]` is the source's count now of `ranges[i]`'s bounds
 * ({@linkcode seqBounds}) on its shard.
 *
 * Returns the ranges to count next (the fallen ones, split), and the ids of fallen short ranges:
 * each either left the listing or sits beside one that did. Pure: the runner counts, and calls
 * again with `next` until it is empty, so that finding `d` of `n` documents takes about
 * `d * parts * log(n) / log(parts)` counts, not a read of the whole source.
 */
export function narrowVanished(
  ranges: readonly SeqRange[],
  counts: readonly number[],
  { leaf, parts }: Narrowing,
): { readonly next: SeqRange[]; readonly candidates: string[] } {
  if (counts.length !== ranges.length) {
    throw new RangeError(`${ranges.length} range(s) but ${counts.length} count(s)`);
  }
  const next: SeqRange[] = [];
  const candidates: string[] = [];
  for (const [i, range] of ranges.entries()) {
    const listed = range.to - range.from;
    // More than listed cannot happen while nothing enters a range: looked at all the same.
    if (counts[i] === listed) continue;
    if (listed <= Math.max(1, leaf)) {
      candidates.push(...range.listing.ids.slice(range.from, range.to));
      continue;
    }
    const step = Math.ceil(listed / Math.max(2, parts));
    for (let from = range.from; from < range.to; from += step) {
      next.push({ listing: range.listing, from, to: Math.min(range.to, from + step) });
    }
  }
  return { next, candidates };
}
