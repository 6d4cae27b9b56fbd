import { isCodeFile } from "../code/code_file.ts";
import type { MovedOff } from "./reindex/run_plan.ts";
import type { SearchPlannedFile } from "./search_file.ts";

/** A record's `previous_index`, where it holds one as written (a record may be made by hand). */
export function movedOffOf(value: unknown): MovedOff | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { name, uuid } = value as Record<string, unknown>;
  return typeof name === "string" && name !== "" && typeof uuid === "string" && uuid !== ""
    ? { name, uuid }
    : undefined;
}

/**
 * What a record says was sent: its path and checksum, and the request (`CODE` and a code file's
 * own path for code).
 */
export interface RecordOf {
  readonly path: string;
  readonly hash: string;
  readonly method: string;
  readonly at: string;
}

/** What the record of `file` says was sent. */
export function recordOf(file: SearchPlannedFile): RecordOf {
  return isCodeFile(file) ? { path: file.path, hash: file.hash, method: "CODE", at: file.path } : {
    path: file.path,
    hash: file.hash,
    method: file.searchRequest.method,
    at: file.searchRequest.path,
  };
}
