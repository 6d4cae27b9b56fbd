import { jsonContentHash } from "../../files/content_hash.ts";
import type { MigrationFile } from "../../files/migration_files.ts";
import type { Placeholders } from "../../../config/connection_settings.ts";
import { replaceInJson } from "../../files/placeholders.ts";
import { parseMigrationJson, planDocument } from "./plan_request.ts";
import { MigrationFileError } from "../../migration_error.ts";
import { readCallbackName } from "../../plan/callback_name.ts";
import { readUndoName } from "../../plan/undo_name.ts";
import { placeholdersMask } from "../../../config/secrets_mask.ts";
import type { SearchFile } from "../search_file.ts";

/**
 * Plans a search migration file: reads its JSON, takes its checksum (of the canonical form, before
 * placeholders are replaced: a placeholder's value is configuration, not a change of the file),
 * replaces the placeholders (where the connection configures any), and decides the request. Throws a `MigrationFileError` naming the
 * file for anything it cannot plan.
 */
export async function planSearchFile(
  file: MigrationFile,
  placeholders: Placeholders | undefined,
): Promise<SearchFile> {
  const { value, text } = parseMigrationJson(file.path, file.bytes);
  const hash = await jsonContentHash(value);
  let searchRequest;
  try {
    searchRequest = planDocument(
      file.path,
      placeholders === undefined ? value : replaceInJson(value, placeholders, file.path, text),
    );
  } catch (error) {
    // A refusal may quote a name or a path with its placeholders replaced: a value may be a secret.
    // Rebuilt rather than masked in place: a value such as `plan` must not change its kind. No
    // cause: it would carry the unmasked text.
    if (!(error instanceof MigrationFileError) || placeholders === undefined) throw error;
    const reason = error.message.slice(`${error.file}: `.length);
    throw new MigrationFileError(error.file, placeholdersMask(placeholders)(reason));
  }
  const { kind, name, method, path } = searchRequest;
  // A callback runs at every event: only a request it names is that. Read by the file-name rules
  // of migrations, it would create an index named after the event, or reindex.
  if (kind !== "request" && readCallbackName(file.path) !== undefined) {
    throw new MigrationFileError(
      file.path,
      `is a callback, and a search callback is a request: { "method": ..., "path": ..., ` +
        `"body": ... } (this file reads as a ${kind})`,
    );
  }
  const undoing = searchRequest.reindex !== undefined && readUndoName(file.path) !== undefined;
  if (searchRequest.reindex?.indexUuid !== undefined && !undoing) {
    throw new MigrationFileError(
      file.path,
      `gives "index_uuid", which only a reindex undo file (U<version>__...-reindex.json) takes: ` +
        `leave it out`,
    );
  }
  return {
    path: file.path,
    hash,
    ...(file.hash === hash ? {} : { rawHash: file.hash }),
    runOnce: searchRequest.runOnce === true,
    // Envelopes name no resource the runner knows: their paths can address anything.
    // A reindex defines its new index: an index file of the same name defines it too.
    ...(kind !== "request" && name !== undefined
      ? { resource: `${kind === "reindex" ? "index" : kind} ${name}` }
      : {}),
    request: `${method} ${path}`,
    // An undo copies back into an index that exists: what it holds is overwritten, and what the
    // alias's index lacks is deleted. A dry run shows which index that is.
    ...(undoing && name !== undefined ? { overwrites: name } : {}),
    searchRequest,
  };
}
