import { jsonContentHash } from "../../files/content_hash.ts";
import type { MigrationFile } from "../../files/migration_files.ts";
import { type Placeholders, replaceInJson } from "../../files/placeholders.ts";
import { parseMigrationJson, planDocument } from "./plan_request.ts";
import type { SearchFile } from "../search_target.ts";

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
  const searchRequest = planDocument(
    file.path,
    placeholders === undefined ? value : replaceInJson(value, placeholders, file.path, text),
  );
  const { kind, name, method, path } = searchRequest;
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
    searchRequest,
  };
}
