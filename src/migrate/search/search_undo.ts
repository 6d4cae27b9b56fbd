import { isCodeFile } from "../code/code_file.ts";
import { reindexUndoRefusal } from "./reindex/reindex_undo.ts";
import type { SearchPlannedFile } from "./search_file.ts";

/**
 * Why the undo file `undo` cannot undo `file` on a search connection, from the two files alone:
 * a reindex undo file (`U3__people-reindex.json`) undoes only a reindex file, and only one that
 * kept the index it moved the alias from ({@linkcode reindexUndoRefusal}). Any other undo file
 * (a template, policy or index as it was, an envelope, code) is the author's to make right. No I/O.
 */
export function searchUndoRefusal(
  file: SearchPlannedFile,
  undo: SearchPlannedFile,
): string | undefined {
  if (isCodeFile(undo) || undo.searchRequest.reindex === undefined) return undefined;
  const back = undo.searchRequest.reindex;
  const forward = isCodeFile(file) ? undefined : file.searchRequest.reindex;
  if (forward === undefined) {
    return `is a reindex file, which undoes a reindex (it moves the alias back into the index the ` +
      `reindex kept), but ${file.path} is no reindex file: write this undo as the template, ` +
      `policy, index or request that undoes it`;
  }
  const why = reindexUndoRefusal(forward, back, undo.searchRequest.body ?? {});
  return why === undefined ? undefined : `cannot undo ${file.path}: ${why}`;
}
