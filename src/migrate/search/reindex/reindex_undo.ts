import { MigrationFailure } from "../../migration_error.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import type { ReindexContext } from "./reindex_setup.ts";
import type { MovedOff, ReindexOutcome } from "./run_plan.ts";
import { runReindexInto } from "./reindex.ts";
import { definedFields } from "../../../defined_fields.ts";

/** What the undo's messages call it: `reindex (undo) users-v2 -> users: ...`. */
const NAME = "reindex (undo)";

/**
 * Why the undo file `undo` (a `*-reindex.json` named `U<version>__…`) cannot undo the reindex
 * file `forward` of the same version, from the files alone, if it cannot: checked when the undo is
 * planned, before anything runs. Pure.
 */
export function reindexUndoRefusal(
  forward: ReindexSpec,
  undo: ReindexSpec,
  undoBody: Readonly<Record<string, unknown>>,
): string | undefined {
  if (forward.deleteSource) {
    return `the reindex file deletes its source ("delete_source": true), so nothing is left to ` +
      `undo into: keep the previous index with "delete_source": false (the default)`;
  }
  if (undo.alias !== forward.alias) {
    return `the undo moves the alias "${undo.alias}", the reindex file the alias ` +
      `"${forward.alias}": give the same "alias"`;
  }
  if (undo.index === forward.index) {
    return `the undo's "index" is "${undo.index}", the index the reindex file made: give the ` +
      `previous index, which the alias goes back to`;
  }
  if (forward.source !== undefined && undo.index !== forward.source) {
    return `the undo's "index" is "${undo.index}", but the reindex file copied from ` +
      `"${forward.source}": give "index": "${forward.source}", the previous index`;
  }
  if (undo.source !== undefined && undo.source !== forward.index) {
    return `the undo's "source" is "${undo.source}", but the reindex file made ` +
      `"${forward.index}": leave "source" out, or give "${forward.index}"`;
  }
  const own = ["settings", "mappings"].filter((key) => undoBody[key] !== undefined);
  if (own.length > 0) {
    return `the undo gives ${own.map((k) => `"${k}"`).join(" and ")}, but the previous index ` +
      `"${undo.index}" exists with its own: leave them out`;
  }
  // Parsed as false when absent: set means true.
  const options = [
    ...(undo.deleteSource ? ['"delete_source"'] : []),
    ...(undo.unblockSource ? ['"unblock_source"'] : []),
  ];
  if (options.length > 0) {
    return `the undo sets ${options.join(" and ")}, which it cannot honour: it always deletes ` +
      `the index the reindex file made once the alias is back; leave them out`;
  }
  return undefined;
}

/** What the reindex being undone left to tell which index it moved the alias off. */
export interface ReindexRecorded {
  /** The reindex file's path, as messages name it. */
  readonly file: string;
  /** What its record names; absent from a record written by an earlier version of Thaw. */
  readonly movedOff?: MovedOff;
}

/** What {@linkcode previousIndexRefusal} compares. */
export interface PreviousIndexFacts {
  /** The undo file's path, as messages name it. */
  readonly undoFile: string;
  readonly forward: ReindexSpec;
  readonly recorded: ReindexRecorded;
  /** The undo file's `index`, and its `index_uuid` if given. */
  readonly undo: ReindexSpec;
  /** The `index.uuid` of the index the undo file names, as the cluster holds it. */
  readonly uuid: string;
}

/**
 * Why the undo must not copy into the index it names, if it must not: the copy overwrites that
 * index and the prune deletes what the alias's index lacks, so it must be the index the reindex
 * moved the alias off, as its record names it (name and `index.uuid`). A record that does not
 * name it (an earlier version's, or one `baseline` or `repair` wrote) proves nothing: then the
 * reindex file's own `source`, which its run was refused without, or the undo file's
 * `index_uuid`, which the user gives for the index as it stands, must say it. Pure.
 */
export function previousIndexRefusal(facts: PreviousIndexFacts): string | undefined {
  const { undoFile, forward, recorded, undo, uuid } = facts;
  const named = undo.index;
  const alias = `the alias "${forward.alias}"`;
  const harm = `the undo would overwrite it and delete its documents that the alias's index lacks`;
  const confirmed = undo.indexUuid;
  if (confirmed !== undefined && confirmed !== uuid) {
    return `${undoFile} gives "index_uuid": "${confirmed}", but "${named}" has index.uuid ` +
      `${uuid}: it is not the index that was confirmed`;
  }
  const moved = recorded.movedOff;
  if (moved !== undefined) {
    if (named !== moved.name) {
      return `${undoFile} names "${named}", but the run of ${recorded.file} moved ${alias} off ` +
        `"${moved.name}" (index.uuid ${moved.uuid}), as its record says: ${harm}; give ` +
        `"index": "${moved.name}"`;
    }
    if (uuid === moved.uuid || confirmed === uuid) return undefined;
    return `"${named}", which ${undoFile} names, has index.uuid ${uuid}, but the run of ` +
      `${recorded.file} moved ${alias} off the index of that name with index.uuid ${moved.uuid}: ` +
      `it was deleted and made again since, and ${harm}; if it is the index to go back into ` +
      `(restored from a snapshot), confirm it with "index_uuid": "${uuid}" in ${undoFile}`;
  }
  if (forward.source !== undefined || confirmed === uuid) return undefined;
  return `the record of ${recorded.file} does not say which index its run moved ${alias} off ` +
    `(written by an earlier version of Thaw, or by baseline or repair): "${named}", which ` +
    `${undoFile} names, cannot be told to be that index, and ${harm}; if it is, confirm it with ` +
    `"index_uuid": its index.uuid (GET /${named}/_settings/index.uuid) in ${undoFile}`;
}

/**
 * Undoes the reindex `forward`: copies the documents of the alias's index back into the previous
 * index `undo.index` (kept by the forward run), catches up, blocks writes for the last catch-up
 * only, moves the alias back and deletes the index the forward run made. The same steps as the
 * forward run, into an existing index (`open` lifts its write block where `create` made it), so
 * the same guarantees: no acknowledged write lost, and a runner killed at any step is finished by
 * the next one, from the progress document of the undo file (`ctx.file`). Refused before anything
 * is written when the previous index is gone, in the alias already, not the one the forward run
 * moved the alias off (`recorded`: see {@linkcode previousIndexRefusal}), or when the alias's
 * write index is not the one the forward run made.
 */
export function runReindexUndo(
  undo: ReindexSpec,
  forward: ReindexSpec,
  ctx: ReindexContext,
  recorded: ReindexRecorded,
): Promise<ReindexOutcome> {
  // Checked at plan time already; again here, since the run deletes an index on what it says.
  const refusal = reindexUndoRefusal(forward, undo, {});
  if (refusal !== undefined) {
    return Promise.reject(
      new MigrationFailure({
        connection: ctx.connection,
        file: ctx.file,
        reason: `${NAME} not started: ${refusal}`,
      }),
    );
  }
  const spec: ReindexSpec = {
    alias: undo.alias,
    index: undo.index,
    source: undo.source ?? forward.index,
    ...definedFields({ script: undo.script }),
    // Deleted once the alias is back: a later `migrate` applies the reindex file again, and it
    // refuses a new index that exists.
    deleteSource: true,
    unblockSource: false,
  };
  const say = (message: string) => ctx.say(message.replace(/^reindex\b/, NAME));
  const checkInto = (uuid: string) =>
    previousIndexRefusal({ undoFile: ctx.file, forward, recorded, undo, uuid });
  return runReindexInto(spec, {}, { ...ctx, say }, { into: "existing", name: NAME, checkInto });
}
