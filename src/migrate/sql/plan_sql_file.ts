import { earlierSqlContentHashes, sqlContentHash } from "../files/content_hash.ts";
import { decodeFileText } from "../files/file_text.ts";
import { MigrationFileError } from "../migration_error.ts";
import type { MigrationFile } from "../files/migration_files.ts";
import type { Placeholders } from "../../config/connection_settings.ts";
import { replaceInText } from "../files/placeholders.ts";
import type { SqlFile } from "./sql_target.ts";

/**
 * Plans a SQL migration file: strict UTF-8 text, its checksum (line endings, a BOM and final line
 * ends aside, before placeholders are replaced) and those earlier versions' records may hold, and
 * the text with placeholders replaced where the datasource configures any. A SQL file runs once.
 */
export async function planSqlFile(
  file: MigrationFile,
  placeholders: Placeholders | undefined,
): Promise<SqlFile> {
  const text = decodeFileText(file.bytes);
  if (text === undefined) throw new MigrationFileError(file.path, "is not valid UTF-8");
  const hash = await sqlContentHash(file.bytes);
  const earlier = (await earlierSqlContentHashes(file.bytes)).filter((h) =>
    h !== hash && h !== file.hash
  );
  return {
    path: file.path,
    hash,
    ...(file.hash === hash ? {} : { rawHash: file.hash }),
    ...(earlier.length === 0 ? {} : { earlierHashes: [...new Set(earlier)] }),
    runOnce: true,
    text: placeholders === undefined ? text : replaceInText(text, placeholders, file.path),
  };
}
