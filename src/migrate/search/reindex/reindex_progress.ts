import type { Baseline, shardSeqNos } from "./catch_up.ts";
import type { ReindexProgress } from "./reindex_plan.ts";
import { notedCopies, parseSince } from "./reindex_values.ts";
import { definedFields } from "../../../defined_fields.ts";

/** Every write to the source up to `seqNo` is in the new index (see catch_up.ts). */
export interface Since {
  readonly uuid: string;
  readonly seqNo: number;
}

/** The source's sequence numbers, as {@linkcode shardSeqNos} reads them. */
export type SeqNos = Awaited<ReturnType<typeof shardSeqNos>>;

/**
 * Where a run stands: what its progress document notes, and what one step hands to the next. A
 * run replaces it whole, in one place, and never changes one in place but `copies`, which
 * `stopCopies` keeps.
 */
export interface RunProgress {
  /** The new index's `index.uuid`: the resumed run's, then the one create reads. */
  readonly uuid: string | undefined;
  /**
   * The resumed run's, moved on by each catch-up, dropped when the copy starts over (the source
   * made again, or the new index).
   */
  readonly since: Since | undefined;
  /** The documents of the source the new index holds, once pruned by copy (see catch_up.ts). */
  readonly baseline: Baseline | undefined;
  /** The source's sequence numbers once blocked (by block): the last catch-up copies up to them. */
  readonly blockedSeqNos: SeqNos | undefined;
  /** The source's sequence numbers right after the block: the swap checks nothing moved them. */
  readonly fence: string | undefined;
  /**
   * When writes were blocked (by copy or block; cleared by a rollback that lifted the block): by
   * an earlier run, when it left its block for this one.
   */
  readonly blockedAt: number | undefined;
  /**
   * The copy this run started and follows, until it ends. A noted task was started for a
   * catch-up whose start this run does not know: not followed.
   */
  readonly task: string | undefined;
  /**
   * Every copy into the new index not proven ended, as the progress notes them: the resumed
   * run's, then each one started or found running, until proven ended.
   */
  readonly copies: Set<string>;
  /** Whether the progress document is written: by the resumed run, else once note ran. */
  readonly noted: boolean;
  /**
   * Whether writes to the source may be blocked: a resumed run's may, and every step that blocks
   * says so before the block is asked for (an answer lost on the way back may hide that it
   * landed).
   */
  readonly mayBeBlocked: boolean;
}

/** Where a run starts: from what a run of this version that stopped halfway noted, if one did. */
export function progressAtStart(resumed: ReindexProgress | undefined): RunProgress {
  return {
    uuid: resumed?.uuid,
    since: parseSince(resumed?.since),
    baseline: undefined,
    blockedSeqNos: undefined,
    fence: undefined,
    blockedAt: undefined,
    task: undefined,
    copies: new Set(notedCopies(resumed)),
    noted: resumed !== undefined,
    mayBeBlocked: resumed !== undefined,
  };
}

/** What the progress document says of a run, besides where it stands. */
export interface ProgressHeader {
  readonly source: string;
  readonly index: string;
  readonly alias: string;
  readonly hash: string;
  readonly started_at: string;
  readonly connection: string;
  readonly file: string;
}

/** The progress document a run writes (see {@linkcode ReindexProgress}). */
export function progressDocument(
  header: ProgressHeader,
  progress: RunProgress,
): Readonly<Record<string, unknown>> {
  const { uuid, since, blockedAt, task, copies } = progress;
  return {
    ...header,
    ...definedFields({ uuid }),
    ...(since === undefined ? {} : { since: `${since.uuid}/${since.seqNo}` }),
    ...(blockedAt === undefined ? {} : { blocked_at: new Date(blockedAt).toISOString() }),
    ...definedFields({ task }),
    ...(copies.size === 0 ? {} : { copies: [...copies] }),
  };
}
