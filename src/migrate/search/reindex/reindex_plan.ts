import type { ReindexSpec } from "../plan/search_request.ts";
import { definedFields } from "../../../defined_fields.ts";

/**
 * Where a reindex stands, kept as a document of the records index from its first write until its
 * last step: a runner killed halfway leaves it for the next run, which finds in it the source it
 * copied from (the alias may have moved since), the new index it made, and the copy it started.
 */
export interface ReindexProgress {
  /** The index copied from. */
  readonly source: string;
  /** The new index. */
  readonly index: string;
  readonly alias: string;
  /**
   * The checksum of what the file asked for, placeholders replaced: another one means an earlier
   * version (or other placeholder values) started it.
   */
  readonly hash: string;
  /** The new index's `index.uuid`, once created: only that index is adopted or deleted. */
  readonly uuid?: string;
  /**
   * `<source uuid>/<seq_no>`: every write to the source up to that sequence number is in the new
   * index, noted after each copy. A run that stopped is caught up from there, whatever the
   * source took since.
   */
  readonly since?: string;
  /**
   * When a run asked for the block on the source (ISO 8601; writers are refused from when it
   * lands, which may be before its answer), while the block may be on.
   */
  readonly blocked_at?: string;
  /** The `_reindex` task (`node:id`) of the copy under way, once started. */
  readonly task?: string;
  /**
   * Every `_reindex` into the new index that a run started or found, and nobody has seen end: a
   * copy on a node that hung, or left the cluster, goes on writing what the source held when it
   * began once that node is back, and would bring deleted documents back after the swap.
   */
  readonly copies?: readonly string[];
  readonly started_at: string;
}

/** One index an alias points at, with the alias's own settings there. */
export interface AliasMember {
  readonly index: string;
  /** `is_write_index: true`. */
  readonly write: boolean;
}

/** What the cluster says of the index a fresh reindex would copy from. */
export interface SourceFacts {
  /** The name is an alias (or a data stream), not a concrete index. */
  readonly concrete: boolean;
  /** `index.blocks.write` is set on it already. */
  readonly blocked: boolean;
  /** Aliases other than the file's on it. */
  readonly otherAliases: readonly string[];
}

/** What the cluster holds when a reindex file starts, or starts again after a runner died. */
export interface ReindexObservation {
  readonly spec: ReindexSpec;
  /** The checksum of what the file asks for (see {@linkcode ReindexProgress.hash}). */
  readonly hash: string;
  readonly progress?: ReindexProgress;
  /** The indices `spec.alias` points at; none when there is no such alias. */
  readonly members: readonly AliasMember[];
  /**
   * Whether a name resolves on the cluster (`HEAD /{name}`: an index, or an alias). Asked only of
   * the names {@linkcode namesToCheck} lists; the alias's members exist without asking.
   */
  readonly exists: (name: string) => boolean;
  /** The `index.uuid` of an index {@linkcode namesToCheck} lists, when it exists. */
  readonly uuid: (name: string) => string | undefined;
  /** Facts about {@linkcode sourceCandidate}'s index, when there is one and it exists. */
  readonly source?: SourceFacts;
  /**
   * Where the copy goes: `new` (the default), an index the run creates; `existing`, an index that
   * is there already and is never deleted, as when an undo copies back into the index a reindex
   * moved the alias off (see {@linkcode ReindexStep} `open`).
   */
  readonly into?: "new" | "existing";
  /**
   * Into an existing index: why the index found there, by its `index.uuid`, must not be copied
   * into, if it must not (an undo checks it is the index the reindex moved the alias off).
   */
  readonly checkInto?: (uuid: string) => string | undefined;
}

/**
 * The steps of a reindex, in the order they run:
 * - `unblock-earlier`: cancels the copy an earlier version of the file started and lifts the
 *   write block it left on its source (only when that version's swap did not happen: after a
 *   swap the source stays blocked, see `unblock`);
 * - `forget-earlier`: deletes that earlier version's progress document;
 * - `discard`: deletes the new index that earlier version created (the alias never pointed at it,
 *   and its `index.uuid` proves it is that index);
 * - `note`: writes the {@linkcode ReindexProgress} document;
 * - `create`: creates the new index, and notes its uuid;
 * - `open` (instead of `create`, into an existing index): notes its uuid and lifts its write block
 *   (left by the reindex that moved the alias off it), so that the copy can write into it;
 * - `copy`: while writes go on, `_reindex` as a task into the new index (any other copy into it
 *   is cancelled first); then deletes from it what the source no longer holds, and copies what
 *   was written meanwhile, by sequence number, until what is left is short (see `catch_up.ts`).
 *   A source left blocked by an earlier run stays blocked, and the copy is made under the block;
 * - `block`: blocks writes on the source (`_block/write`, which waits for writes in flight),
 *   refreshes it so the last catch-up sees every acknowledged write, and reads its sequence
 *   numbers, which must not move until the swap;
 * - `catch-up`: copies what was written since the last copy, and deletes from the new index
 *   what the source deleted since;
 * - `verify`: the new index holds as many documents as the source;
 * - `swap`: one `_aliases` call removes the source from the alias and adds the new index as its
 *   write index, with the alias's filter and routing. The source stays blocked: a node that has
 *   not seen the swap yet still sends writes through the alias there, and they must be refused;
 * - `unblock`: lifts the block on the source (`unblock_source: true` only);
 * - `delete-source`: deletes the source (`delete_source: true` only);
 * - `forget`: deletes the progress document.
 */
export type ReindexStep =
  | "unblock-earlier"
  | "forget-earlier"
  | "discard"
  | "note"
  | "create"
  | "open"
  | "copy"
  | "block"
  | "catch-up"
  | "verify"
  | "swap"
  | "unblock"
  | "delete-source"
  | "forget";

/** What a reindex file does on the cluster as it is now. */
export type ReindexDecision =
  /** The alias is on the new index and nothing is left to do: only the record is written. */
  | { readonly kind: "done" }
  | {
    /** Nothing can safely be done: the run stops with this reason. */
    readonly kind: "refuse";
    readonly reason: string;
    /**
     * An unfinished run's progress whose block is still on its source: its copy is cancelled and
     * the block lifted before the run stops (the alias is still on that source).
     */
    readonly release?: ReindexProgress;
  }
  | {
    readonly kind: "run";
    /** The index copied from. */
    readonly source: string;
    /** A run of this very version stopped halfway: its source may be blocked, its task running. */
    readonly resumed: boolean;
    readonly steps: readonly ReindexStep[];
    /** The progress of an earlier version of the file, which the `*-earlier` steps undo. */
    readonly earlier?: ReindexProgress;
    /** Once the steps ran, the run stops with this reason (an earlier version moved the alias). */
    readonly thenRefuse?: string;
  };

/** The index a fresh reindex would copy from: `spec.source`, else the alias's write index. */
export function sourceCandidate(
  spec: ReindexSpec,
  members: readonly AliasMember[],
): string | undefined {
  return spec.source ?? writeIndexOf(members);
}

/** The names whose existence and uuid {@linkcode decideReindex} needs: ask the cluster about these. */
export function namesToCheck(spec: ReindexSpec, progress?: ReindexProgress): string[] {
  const names = [spec.alias, spec.index, spec.source, progress?.source, progress?.index];
  return [...new Set(names.filter((n): n is string => n !== undefined))];
}

function writeIndexOf(members: readonly AliasMember[]): string | undefined {
  return members.find((m) => m.write)?.index ??
    (members.length === 1 ? members[0].index : undefined);
}

/**
 * Decides what a reindex file does, from what the cluster holds now: the steps to run, or that it
 * is done, or why it must not start. Pure: the runner observes, decides, then runs the steps, and
 * a runner killed at any step observes and decides again, from the cluster alone.
 *
 * - The alias's write index is the new index: the swap happened. What follows it (unblock when
 *   asked, delete the source when asked, forget) runs again, each harmless when done already;
 *   without a progress document everything was done, and only the record is missing.
 * - A progress document of this version: resume from creating the index. Each step up to the swap
 *   is safe to repeat, and the copy catches up from what the progress says was copied.
 * - A progress document of an earlier version: cancel its copy, lift its block, delete its new
 *   index (the alias never pointed at it) or, when its swap happened, start from its new index
 *   and leave its source blocked; then start as new.
 * - Otherwise start as new: the source is `spec.source`, else the alias's write index (or its only
 *   index); it must be a concrete index that nothing else blocks, and the new index must not exist.
 */
export function decideReindex(o: ReindexObservation): ReindexDecision {
  const s = readSituation(o);
  if (s.writeIndex === o.spec.index) return afterSwap(s);
  if (s.existing) {
    const refusal = existingRefusal(s);
    if (refusal !== undefined) return refusal;
  }
  if (s.own !== undefined) return resumeOwn(s, s.own);
  return startNew(s);
}

// What every branch of decideReindex reads off the observation, worked out once.
interface Situation {
  readonly o: ReindexObservation;
  readonly spec: ReindexSpec;
  /** Copying into an index that exists, never deleted (an undo): see `into`. */
  readonly existing: boolean;
  /** `alias "name"`, for reasons. */
  readonly alias: string;
  readonly writeIndex: string | undefined;
  /** The steps after the swap, as the file asks. */
  readonly after: readonly ReindexStep[];
  /** This very version's progress. */
  readonly own: ReindexProgress | undefined;
  /** An earlier version's progress. */
  readonly earlier: ReindexProgress | undefined;
  /** Whether a name resolves on the cluster. */
  readonly known: (name: string) => boolean;
  readonly refuse: (reason: string) => ReindexDecision;
  /** Whether the new index a progress names is the one its run created. */
  readonly ours: (p: ReindexProgress, adopt: boolean) => boolean;
}

function readSituation(o: ReindexObservation): Situation {
  const { spec, progress } = o;
  const writeIndex = writeIndexOf(o.members);
  const after: ReindexStep[] = [
    ...(spec.unblockSource ? ["unblock" as const] : []),
    ...(spec.deleteSource ? ["delete-source" as const] : []),
  ];
  // An alias's indices exist: the cluster listed them.
  const known = (name: string) => o.exists(name) || o.members.some((m) => m.index === name);
  const isOwn = progress !== undefined && progress.hash === o.hash && progress.index === spec.index;
  // An unfinished run that did not swap may have left its source blocked: a refusal releases it.
  const pending = progress !== undefined && writeIndex !== progress.index ? progress : undefined;
  return {
    o,
    spec,
    existing: o.into === "existing",
    alias: `alias "${spec.alias}"`,
    writeIndex,
    after,
    own: isOwn ? progress : undefined,
    earlier: progress !== undefined && !isOwn ? progress : undefined,
    known,
    refuse: (reason) => ({
      kind: "refuse",
      reason,
      ...definedFields({ release: pending }),
    }),
    // The new index a progress names is the one its run created: same uuid. Without a uuid noted
    // (killed between the create and the note) it may be adopted, never deleted.
    ours: (p, adopt) =>
      !known(p.index) || (p.uuid === undefined ? adopt : o.uuid(p.index) === p.uuid),
  };
}

// The alias's write index is the new index already.
function afterSwap(s: Situation): ReindexDecision {
  const { own, earlier, spec } = s;
  if (own !== undefined) {
    // Into an existing index, only the index the file copies from is deleted, never the one the
    // alias is back on: a progress naming another source (written by hand) deletes nothing.
    const after = s.existing && own.source !== spec.source
      ? s.after.filter((step) => step !== "delete-source")
      : s.after;
    return { kind: "run", source: own.source, resumed: true, steps: [...after, "forget"] };
  }
  if (earlier === undefined) return { kind: "done" };
  // Into an existing index, no settings are applied: what an earlier version of the file left
  // after its swap is finished (its source, the index the reindex made, deleted once it is the
  // one the file names).
  if (s.existing) {
    const deletes = earlier.source === spec.source && s.after.includes("delete-source");
    return {
      kind: "run",
      source: earlier.source,
      resumed: false,
      steps: [...(deletes ? ["delete-source" as const] : []), "forget-earlier"],
      earlier,
    };
  }
  // The alias is where this file wants it, moved by an earlier version (or by hand): what that
  // version left before a swap is undone (after its swap, its source stays blocked), and this
  // version's changes cannot be applied to an index in use. Its progress stays, so every run
  // says so until the file is restored (which finishes it).
  return {
    kind: "run",
    source: earlier.source,
    resumed: false,
    steps: earlier.index === s.writeIndex ? [] : ["unblock-earlier"],
    earlier,
    thenRefuse: `${s.alias} is on "${spec.index}" already, moved there by an earlier version of ` +
      `this file: this version's settings, mappings or script are not applied to an index in ` +
      `use; restore the file as it was, or move the alias again with a new reindex file (a ` +
      `new index name)`,
  };
}

// This very version stopped before its swap: it goes on from creating the index.
function resumeOwn(s: Situation, own: ReindexProgress): ReindexDecision {
  const { spec, alias, writeIndex, refuse } = s;
  const { source } = own;
  if (!s.known(source)) {
    return refuse(
      `the index "${source}" this reindex was copying from is gone, and ${alias} is not on ` +
        `"${spec.index}": restore "${source}", or delete "${spec.index}" and its progress by hand`,
    );
  }
  if (writeIndex !== undefined && writeIndex !== source) {
    return refuse(
      `${alias} was moved to "${writeIndex}" while this reindex from "${source}" was stopped: ` +
        `writes to "${writeIndex}" would not be copied; sort the alias out by hand first`,
    );
  }
  if (!s.ours(own, true)) {
    return refuse(
      s.existing
        ? `"${spec.index}" is not the index this run was copying into (another index.uuid): ` +
          `it was deleted and made again meanwhile; sort it out by hand`
        : `"${spec.index}" is not the index this reindex created (another index.uuid): delete ` +
          `it, or give the new index another name`,
    );
  }
  return {
    kind: "run",
    source,
    resumed: true,
    steps: fromTheIndex(s),
  };
}

// The steps from making (or opening) the index to forgetting the progress: a fresh run's after
// its note, a resumed run's all.
function fromTheIndex(s: Situation): ReindexStep[] {
  return [
    s.existing ? "open" : "create",
    "copy",
    "block",
    "catch-up",
    "verify",
    "swap",
    ...s.after,
    "forget",
  ];
}

// A fresh start: undo what an earlier version left, then check the source and the new index.
function startNew(s: Situation): ReindexDecision {
  const { spec, earlier, refuse } = s;
  const cleared = earlier === undefined
    ? { first: [], discarded: new Set<string>() }
    : clearEarlier(s, earlier);
  if ("kind" in cleared) return cleared;
  const { first, discarded } = cleared;
  const exists = (name: string) => !discarded.has(name) && s.known(name);
  if (s.o.members.length === 0 && exists(spec.alias)) {
    return refuse(
      `"${spec.alias}" is an index, not an alias: a reindex moves an alias (create the alias on ` +
        `the index first, or give another alias name)`,
    );
  }
  const source = freshSource(s);
  if (typeof source !== "string") return source;
  const refusal = sourceRefusal(s, source, exists);
  if (refusal !== undefined) return refusal;
  if (!s.existing && exists(spec.index)) {
    return refuse(
      `the index "${spec.index}" exists already, and this file did not create it: give the new ` +
        `index another name, or delete "${spec.index}" (if a run of this reindex under another ` +
        `file name stopped halfway, give the file that name back and run again)`,
    );
  }
  return {
    kind: "run",
    source,
    resumed: false,
    steps: [...first, "note", ...fromTheIndex(s)],
    ...definedFields({ earlier }),
  };
}

// The steps that undo what an earlier version of the file left, and the index they delete; or
// why they cannot.
function clearEarlier(
  s: Situation,
  earlier: ReindexProgress,
): { first: ReindexStep[]; discarded: Set<string> } | ReindexDecision {
  const first: ReindexStep[] = [];
  const discarded = new Set<string>();
  const swapped = s.writeIndex === earlier.index;
  // After its swap, the earlier version's source stays blocked, as that run would leave it.
  if (!swapped) first.push("unblock-earlier");
  if (!swapped && s.o.members.some((m) => m.index === earlier.index)) {
    return s.refuse(
      `an earlier version of this file created "${earlier.index}", which ${s.alias} points at ` +
        `already without it being its write index: sort the alias out by hand first`,
    );
  }
  // An existing index was there before the earlier version's run: never deleted.
  if (!swapped && s.known(earlier.index) && !s.existing) {
    if (!s.ours(earlier, false)) {
      return s.refuse(
        `an earlier version of this file was creating "${earlier.index}", and the index of ` +
          `that name is not the one it created (or it cannot tell): delete "${earlier.index}" ` +
          `by hand if it is unused`,
      );
    }
    first.push("discard");
    discarded.add(earlier.index);
  }
  first.push("forget-earlier");
  return { first, discarded };
}

// The index a fresh run copies from: `spec.source`, which must be the alias's write index when
// the alias exists, else that write index; or why there is none.
function freshSource(s: Situation): string | ReindexDecision {
  const { spec, alias, writeIndex, refuse } = s;
  const { members } = s.o;
  const source = spec.source;
  if (source === undefined) {
    if (members.length === 0) {
      return refuse(`${alias} does not exist: give "source", the index to copy from`);
    }
    if (writeIndex === undefined) {
      return refuse(
        `${alias} points at ${members.map((m) => `"${m.index}"`).join(", ")} and none is its ` +
          `write index: give "source", the index to copy from`,
      );
    }
    return writeIndex;
  }
  if (members.length > 0) {
    if (!members.some((m) => m.index === source)) {
      return refuse(
        `"source" is "${source}", but ${alias} points at ` +
          `${members.map((m) => `"${m.index}"`).join(", ")}: the source must be the alias's index`,
      );
    }
    if (writeIndex !== undefined && writeIndex !== source) {
      return refuse(
        `"source" is "${source}", but the write index of ${alias} is "${writeIndex}": writes to ` +
          `it would not be copied`,
      );
    }
  }
  return source;
}

// Why a fresh run must not copy from `source` as the cluster holds it, if it must not.
function sourceRefusal(
  s: Situation,
  source: string,
  exists: (name: string) => boolean,
): ReindexDecision | undefined {
  const { refuse } = s;
  if (!exists(source)) return refuse(`the source index "${source}" does not exist`);
  const facts = s.o.source;
  if (facts !== undefined && !facts.concrete) {
    return refuse(`"source" "${source}" is an alias or a data stream: name the index behind it`);
  }
  // A run that stops before its swap lifts the block it set: one set by someone else (or left
  // by a reindex that moved an alias off this index) would be lifted with it.
  if (facts?.blocked && s.earlier?.source !== source) {
    return refuse(
      `writes to "${source}" are blocked already (index.blocks.write), by someone else or by a ` +
        `reindex that moved an alias off it: a reindex that stops before its swap lifts the ` +
        `block on its source, and would lift that one; lift it first (PUT /${source}/_settings ` +
        `{"index.blocks.write": null}), or wait for whoever set it`,
    );
  }
  if (s.spec.deleteSource && facts !== undefined && facts.otherAliases.length > 0) {
    return refuse(
      `${
        s.existing
          ? "the run deletes it once the alias is back, and would delete"
          : "delete_source would delete"
      } "${source}" under its other alias(es) ` +
        `${
          facts.otherAliases.map((a) => `"${a}"`).join(", ")
        }: move them first, or keep the source`,
    );
  }
  return undefined;
}

// Into an existing index (an undo), checked before anything else: that index must be there as an
// index outside the alias, and the alias's write index must be the one the file copies from
// (`spec.source`: the index the reindex being undone made).
function existingRefusal(s: Situation): ReindexDecision | undefined {
  const { spec, alias, writeIndex, refuse } = s;
  const { members } = s.o;
  if (!s.known(spec.index)) {
    return refuse(
      `the previous index "${spec.index}" is gone (pruned, or deleted by hand): nothing is left ` +
        `to copy back into; a reindex file keeps it with "delete_source": false (the default)`,
    );
  }
  const uuid = s.o.uuid(spec.index);
  if (uuid === undefined) {
    return refuse(`"${spec.index}" is an alias or a data stream, not the previous index`);
  }
  // Before anything else: the copy overwrites this index, and the prune empties it of what the
  // alias's index lacks.
  const wrong = s.o.checkInto?.(uuid);
  if (wrong !== undefined) return refuse(wrong);
  if (members.some((m) => m.index === spec.index)) {
    return refuse(
      `${alias} points at "${spec.index}" already without it being its write index: sort the ` +
        `alias out by hand first`,
    );
  }
  if (spec.source !== undefined && writeIndex !== spec.source) {
    return refuse(
      members.length === 0
        ? `${alias} does not exist: nothing to move back from "${spec.source}"`
        : writeIndex === undefined
        ? `${alias} points at ${
          members.map((m) => `"${m.index}"`).join(", ")
        } and none is its write index, not "${spec.source}", which the reindex made`
        : `the write index of ${alias} is "${writeIndex}", not "${spec.source}", which the ` +
          `reindex made: it was moved since; undo the later move first`,
    );
  }
  return undefined;
}
