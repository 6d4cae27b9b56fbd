import type { ReindexSpec } from "./search_request.ts";

/**
 * Where a reindex stands, kept as a document of the records index from its first write until its
 * last step: a runner killed halfway leaves it for the next run, which finds in it the source it
 * copied from (the alias may have moved since) and the `_reindex` task it started.
 */
export interface ReindexProgress {
  /** The index copied from. */
  readonly source: string;
  /** The new index. */
  readonly index: string;
  readonly alias: string;
  /** The checksum of the file that started it: another one means an earlier version did. */
  readonly hash: string;
  /** The `_reindex` task (`node:id`), once started. */
  readonly task?: string;
  readonly started_at: string;
}

/** One index an alias points at. */
export interface AliasMember {
  readonly index: string;
  /** `is_write_index: true`. */
  readonly write: boolean;
}

/** What the cluster holds when a reindex file starts, or starts again after a runner died. */
export interface ReindexObservation {
  readonly spec: ReindexSpec;
  /** The file's checksum. */
  readonly hash: string;
  readonly progress?: ReindexProgress;
  /** The indices `spec.alias` points at; none when there is no such alias. */
  readonly members: readonly AliasMember[];
  /**
   * Whether a name resolves on the cluster (`HEAD /{name}`: an index, or an alias). Asked only of
   * the names {@linkcode namesToCheck} lists; the alias's members exist without asking.
   */
  readonly exists: (name: string) => boolean;
}

/**
 * The steps of a reindex, in the order they run:
 * - `unblock-earlier`: lifts the write block an earlier version of the file left on its source;
 * - `discard`: deletes the new index an earlier version of the file created (the alias never
 *   pointed at it, so nothing was written to it but copies);
 * - `note`: writes the {@linkcode ReindexProgress} document;
 * - `create`: creates the new index (one that exists already is the one this reindex created);
 * - `block`: blocks writes on the source (`_block/write`, which waits for writes in flight), then
 *   refreshes it so the copy sees every write that was acknowledged;
 * - `copy`: `_reindex` as a task (`op_type: create`, `conflicts: proceed`: a document copied
 *   already is skipped, never copied twice), or waits for the task an earlier run started;
 * - `verify`: the new index holds as many documents as the source;
 * - `swap`: one `_aliases` call removes the source from the alias and adds the new index as its
 *   write index;
 * - `unblock`: lifts the block on the source;
 * - `delete-source`: deletes the source (`delete_source: true` only);
 * - `forget`: deletes the progress document.
 */
export type ReindexStep =
  | "unblock-earlier"
  | "discard"
  | "note"
  | "create"
  | "block"
  | "copy"
  | "verify"
  | "swap"
  | "unblock"
  | "delete-source"
  | "forget";

/** What a reindex file does on the cluster as it is now. */
export type ReindexDecision =
  /** The alias is on the new index and nothing is left to do: only the record is written. */
  | { readonly kind: "done" }
  /** Nothing can safely be done: the run stops with this reason, nothing sent. */
  | { readonly kind: "refuse"; readonly reason: string }
  | {
    readonly kind: "run";
    /** The index copied from. */
    readonly source: string;
    /** A run of this very file stopped halfway: its source may be blocked, its task running. */
    readonly resumed: boolean;
    readonly steps: readonly ReindexStep[];
    /** The progress of an earlier version of the file, which `unblock-earlier` and `discard` undo. */
    readonly earlier?: ReindexProgress;
  };

/** The names whose existence {@linkcode decideReindex} needs: ask the cluster about these. */
export function namesToCheck(spec: ReindexSpec, progress?: ReindexProgress): string[] {
  const names = [spec.alias, spec.index, spec.source, progress?.source, progress?.index];
  return [...new Set(names.filter((n): n is string => n !== undefined))];
}

/**
 * Decides what a reindex file does, from what the cluster holds now: the steps to run, or that it
 * is done, or why it must not start. Pure: the runner observes, decides, then runs the steps, and
 * a runner killed at any step observes and decides again, from the cluster alone.
 *
 * - The alias's write index is the new index: the swap happened. What follows it (unblock, delete
 *   the source, forget) runs again, each harmless when done already; without a progress document
 *   everything was done, and only the record is missing.
 * - A progress document of this file (same checksum, same new index): resume from creating the
 *   index (each step up to the swap is safe to repeat: the copy skips what it copied already).
 * - A progress document of an earlier version of the file: lift its block and delete its new index
 *   (the alias never pointed at it), then start as new.
 * - Otherwise start as new: the source is `spec.source`, else the alias's write index (or its only
 *   index); the new index must not exist (this file did not create it).
 */
export function decideReindex(o: ReindexObservation): ReindexDecision {
  const { spec, progress } = o;
  const refuse = (reason: string): ReindexDecision => ({ kind: "refuse", reason });
  const alias = `alias "${spec.alias}"`;
  const writeIndex = o.members.find((m) => m.write)?.index ??
    (o.members.length === 1 ? o.members[0].index : undefined);
  const after: ReindexStep[] = [
    "unblock",
    ...(spec.deleteSource ? ["delete-source" as const] : []),
  ];
  // An alias's indices exist: the cluster listed them.
  const known = (name: string) => o.exists(name) || o.members.some((m) => m.index === name);
  const own = progress !== undefined && progress.hash === o.hash && progress.index === spec.index;
  const earlier = progress !== undefined && !own ? progress : undefined;

  if (writeIndex === spec.index) {
    if (own) {
      return {
        kind: "run",
        source: progress!.source,
        resumed: true,
        steps: [...after, "forget"],
      };
    }
    if (earlier === undefined) return { kind: "done" };
    // The alias is where this version wants it: only what the earlier version left is undone.
    return {
      kind: "run",
      source: earlier.source,
      resumed: false,
      steps: ["unblock-earlier", "forget"],
      earlier,
    };
  }

  if (own) {
    const { source } = progress!;
    if (!known(source)) {
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
    return {
      kind: "run",
      source,
      resumed: true,
      steps: ["create", "block", "copy", "verify", "swap", ...after, "forget"],
    };
  }

  const first: ReindexStep[] = [];
  const discarded = new Set<string>();
  if (earlier !== undefined) {
    first.push("unblock-earlier");
    if (o.members.some((m) => m.index === earlier.index)) {
      return refuse(
        `an earlier version of this file created "${earlier.index}", which ${alias} points at ` +
          `already without it being its write index: sort the alias out by hand first`,
      );
    }
    if (known(earlier.index)) {
      first.push("discard");
      discarded.add(earlier.index);
    }
  }
  const exists = (name: string) => !discarded.has(name) && known(name);
  if (o.members.length === 0 && exists(spec.alias)) {
    return refuse(
      `"${spec.alias}" is an index, not an alias: a reindex moves an alias (create the alias on ` +
        `the index first, or give another alias name)`,
    );
  }
  let source = spec.source;
  if (source === undefined) {
    if (o.members.length === 0) {
      return refuse(`${alias} does not exist: give "source", the index to copy from`);
    }
    if (writeIndex === undefined) {
      return refuse(
        `${alias} points at ${o.members.map((m) => `"${m.index}"`).join(", ")} and none is its ` +
          `write index: give "source", the index to copy from`,
      );
    }
    source = writeIndex;
  } else if (o.members.length > 0) {
    if (!o.members.some((m) => m.index === source)) {
      return refuse(
        `"source" is "${source}", but ${alias} points at ` +
          `${
            o.members.map((m) => `"${m.index}"`).join(", ")
          }: the source must be the alias's index`,
      );
    }
    if (writeIndex !== undefined && writeIndex !== source) {
      return refuse(
        `"source" is "${source}", but the write index of ${alias} is "${writeIndex}": writes to ` +
          `it would not be copied`,
      );
    }
  }
  if (!exists(source)) return refuse(`the source index "${source}" does not exist`);
  if (exists(spec.index)) {
    return refuse(
      `the index "${spec.index}" exists already, and this file did not create it: give the new ` +
        `index another name, or delete "${spec.index}"`,
    );
  }
  return {
    kind: "run",
    source,
    resumed: false,
    steps: [...first, "note", "create", "block", "copy", "verify", "swap", ...after, "forget"],
    ...(earlier === undefined ? {} : { earlier }),
  };
}
