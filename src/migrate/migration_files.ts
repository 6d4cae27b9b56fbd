import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../config/config_error.ts";
import { contentHash } from "./content_hash.ts";
import { MigrationFileError } from "./migration_error.ts";
import { compareVersionPaths } from "./version_order.ts";

/** A migration file as read from disk. */
export interface MigrationFile {
  /** Its identity: the path relative to the connection's folder, with `/` separators. */
  readonly path: string;
  readonly bytes: Uint8Array;
  /** SHA-256 of the raw bytes, hex. */
  readonly hash: string;
}

/** Larger files are refused before they are read: no migration needs this much, a mistake might. */
export const MAX_MIGRATION_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Checks that the migrations root (`--sqlPath`) is a folder. A mistyped root would otherwise look
 * like a root where no connection has files, and the run would succeed having done nothing.
 */
export async function requireMigrationsRoot(root: string): Promise<void> {
  let info;
  try {
    info = await stat(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new ConfigError(
      `the migrations root ${root} does not exist (--sqlPath; it holds one folder per connection)`,
    );
  }
  if (!info.isDirectory()) {
    throw new ConfigError(`the migrations root ${root} is not a folder (--sqlPath)`);
  }
}

/**
 * Every file ending in `extension` under `dir`, sub-folders included, ordered by relative path
 * in version order (`compareVersionPaths`); `undefined` when `dir` does not exist, which the caller reports (it is not the
 * same as a folder without files). Symbolic links are refused, not followed, so that a migration
 * folder cannot reach outside itself or loop.
 */
export async function readMigrationFiles(
  dir: string,
  extension: string,
): Promise<MigrationFile[] | undefined> {
  const paths: string[] = [];
  try {
    if (!(await lstat(dir)).isDirectory()) {
      throw new MigrationFileError(dir, "is not a folder");
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const walk = async (rel: string) => {
    const entries = await readdir(join(dir, rel), { withFileTypes: true });
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) {
        throw new MigrationFileError(
          path,
          "is a symbolic link; migration files must be real files",
        );
      }
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && entry.name.endsWith(extension)) {
        const { size } = await lstat(join(dir, path));
        if (size > MAX_MIGRATION_FILE_BYTES) {
          throw new MigrationFileError(
            path,
            `is ${size} bytes, over the limit of ${MAX_MIGRATION_FILE_BYTES} bytes for a migration file`,
          );
        }
        paths.push(path);
      }
    }
  };
  await walk("");
  paths.sort(compareVersionPaths);
  // One at a time: thousands of files at once would run out of file descriptors.
  const files: MigrationFile[] = [];
  for (const path of paths) {
    const bytes = new Uint8Array(await readFile(join(dir, path)));
    files.push({ path, bytes, hash: await contentHash(bytes) });
  }
  return files;
}
