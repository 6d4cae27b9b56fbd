import type { ReindexSpec } from "../plan/search_request.ts";
import type { ReindexContext } from "./reindex_setup.ts";
import type { ReindexOutcome } from "./reindex_run.ts";

/**
 * Why the undo file `undo` (a `*-reindex.json` named `U<version>__…`) cannot undo the reindex
 * file `forward` of the same version, from the files alone, if it cannot: checked when the undo is
 * planned, before anything runs. Pure.
 */
export function reindexUndoRefusal(
  _forward: ReindexSpec,
  _undo: ReindexSpec,
  _undoBody: Readonly<Record<string, unknown>>,
): string | undefined {
  return undefined;
}

/**
 * Undoes the reindex `forward`: copies the documents of the alias's index back into the previous
 * index `undo.index` (kept by the forward run), catches up, blocks writes for the last catch-up
 * only, moves the alias back and deletes the index the forward run made.
 */
export function runReindexUndo(
  _undo: ReindexSpec,
  _forward: ReindexSpec,
  _ctx: ReindexContext,
): Promise<ReindexOutcome> {
  return Promise.reject(new Error("reindex undo: not built yet"));
}
