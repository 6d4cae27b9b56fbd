import { MigrationFailure } from "../../migration_error.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import type { ReindexContext } from "./reindex_setup.ts";
import type { ReindexOutcome } from "./reindex_run.ts";
import { runReindexInto } from "./reindex.ts";

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

/**
 * Undoes the reindex `forward`: copies the documents of the alias's index back into the previous
 * index `undo.index` (kept by the forward run), catches up, blocks writes for the last catch-up
 * only, moves the alias back and deletes the index the forward run made. The same steps as the
 * forward run, into an existing index (`open` lifts its write block where `create` made it), so
 * the same guarantees: no acknowledged write lost, and a runner killed at any step is finished by
 * the next one, from the progress document of the undo file (`ctx.file`). Refused before anything
 * is written when the previous index is gone, in the alias already, or when the alias's write
 * index is not the one the forward run made.
 */
export function runReindexUndo(
  undo: ReindexSpec,
  forward: ReindexSpec,
  ctx: ReindexContext,
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
    ...(undo.script === undefined ? {} : { script: undo.script }),
    // Deleted once the alias is back: a later `migrate` applies the reindex file again, and it
    // refuses a new index that exists.
    deleteSource: true,
    unblockSource: false,
  };
  const say = (message: string) => ctx.say(message.replace(/^reindex\b/, NAME));
  return runReindexInto(spec, {}, { ...ctx, say }, { into: "existing", name: NAME });
}
