import type { Mask } from "../../config/secrets_mask.ts";
import { isCodeFile } from "../code/code_file.ts";
import { isMigrationError, MigrationError, MigrationFailure } from "../migration_error.ts";
import type { CallbackEvent } from "../plan/callback_name.ts";
import { undoRecordVersion } from "../plan/undo_name.ts";
import { SearchTransportError } from "./http/search_client.ts";
import type { SearchFile, SearchPlannedFile } from "./search_file.ts";

/** The connection a failure names, and the mask of what it quotes. */
export interface FailureSite {
  readonly connection: string;
  readonly mask: Mask;
}

/**
 * The failure of a file's or a callback's request, with what it quotes masked: the cluster's
 * answer may quote what was sent, placeholders replaced, and a value may be a secret; messages
 * name placeholders, never their values.
 */
export function requestFailure(
  { connection, mask }: FailureSite,
  error: unknown,
  file: SearchFile,
  path: string,
  site: { callback?: CallbackEvent; after?: string } = {},
): unknown {
  const after = site.after ?? "";
  const callback = site.callback === undefined ? {} : { callback: site.callback };
  if (error instanceof MigrationFailure) {
    const { detail } = error;
    return new MigrationFailure({
      ...detail,
      ...callback,
      reason: mask(detail.reason) + after,
      ...(detail.request === undefined ? {} : { request: mask(detail.request) }),
    }, { cause: error.cause });
  }
  if (isMigrationError(error, "interrupted")) {
    return new MigrationError("interrupted", mask(error.message));
  }
  if (!(error instanceof SearchTransportError)) return error;
  return new MigrationFailure({
    connection,
    file: path,
    ...callback,
    request: mask(file.request),
    reason: mask(error.message) + after,
  }, { cause: error });
}

/**
 * Throws once the lock is `lost`: another runner may hold it now and be reading the records, so
 * they are left as they are.
 */
export function holdingLock(
  connection: string,
  lost: AbortSignal,
  path: string,
  what: string,
): void {
  if (!lost.aborted) return;
  const why = lost.reason instanceof MigrationFailure
    ? lost.reason.detail.reason
    : String(lost.reason);
  throw new MigrationFailure({
    connection,
    file: path,
    reason: `${why}; stopped at once: its record was not ${what}`,
  }, { cause: lost.reason });
}

/**
 * The failure of a file sent while the lock was lost. An undo's path (an undo file's, a down's
 * record) is a U path: its version stays applied, and the next `undo`, not the next `migrate`,
 * sends it again.
 */
export function lockLost(
  { connection, mask }: FailureSite,
  file: SearchPlannedFile,
  path: string,
  reason: unknown,
): MigrationFailure {
  const why = reason instanceof MigrationFailure ? reason.detail.reason : String(reason);
  const left = undoRecordVersion(path) === undefined
    ? "this file may or may not have been applied, and it is not recorded (the next run " +
      "applies it again)"
    : `${path} may or may not have been sent, and the version is not recorded undone (the ` +
      "next undo sends it again)";
  return new MigrationFailure({
    connection,
    file: path,
    ...(isCodeFile(file) ? {} : { request: mask(file.request) }),
    reason: `${why}; stopped at once: ${left}`,
  }, { cause: reason });
}
