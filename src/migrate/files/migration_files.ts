import { lstat, readdir, readFile, readlink, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { printable } from "../../shown_value.ts";
import { ConfigError } from "../../config/config_error.ts";
import { rawContentHash } from "./content_hash.ts";
import { MigrationFileError } from "../migration_error.ts";
import type { OptionNames } from "../option_names.ts";
import { compareVersionPaths } from "../plan/version_order.ts";

/** A migration file as read from disk. */
export interface MigrationFile {
  /** Its identity: the path relative to the connection's folder, with `/` separators. */
  readonly path: string;
  readonly bytes: Uint8Array;
  /** SHA-256 of the raw bytes, hex: what records of earlier versions hold (see `PlannedFile.rawHash`). */
  readonly hash: string;
  /**
   * The absolute real path it was read from, links resolved: a migration in code is imported from
   * there, the path that was checked to lie inside the root. Absent for a file not read from disk.
   */
  readonly source?: string;
}

/** What a connection's folder holds: its migration files, and the other files left out. */
export interface MigrationFolder {
  /** The files whose name ends in the kind's suffix, in any case, in version order. */
  readonly files: MigrationFile[];
  /**
   * Every other file, by path, in version order: listed by `status` so that a file saved with
   * the wrong suffix (`.jsn`, `.json.bak`) is not lost unseen.
   */
  readonly ignored: string[];
}

// C0 controls, DEL and C1 controls: what no file name should hold (a newline, an escape).
// deno-lint-ignore no-control-regex -- the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// What makes a name display as another: Unicode's default-ignorable characters, which show as
// nothing where they stand (so that `V2__a` and `V2__\u200ba` look one name), among them the
// bidirectional marks, embeddings, overrides and isolates (`V2__\u202egnp.json` shows as
// `V2__nosj.png`), U+FEFF (an editor may leave it at a name's start), the soft hyphen and the tag
// characters; and the line and paragraph separators and interlinear annotation marks. The
// zero-width non-joiner and joiner and the variation selectors (Mongolian's too) are left:
// scripts and emoji need them.
const REORDERING =
  /(?![\u200c\u200d\u180b-\u180d\u180f\ufe00-\ufe0f\u{e0100}-\u{e01ef}])[\p{Default_Ignorable_Code_Point}\u2028\u2029\ufff9-\ufffb]/u;

/** Larger files are refused before they are read: no migration needs this much, a mistake might. */
export const MAX_MIGRATION_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Checks that the migrations root (`--migrations`) is a folder. A mistyped root would otherwise look
 * like a root where no connection has files, and the run would succeed having done nothing.
 */
export async function requireMigrationsRoot(
  root: string,
  optionNames: OptionNames,
): Promise<void> {
  let info;
  try {
    info = await stat(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new ConfigError(
      `the migrations root ${root} does not exist (${optionNames.migrations}; it holds one folder ` +
        "per connection)",
    );
  }
  if (!info.isDirectory()) {
    throw new ConfigError(
      `the migrations root ${root} is not a folder (${optionNames.migrations})`,
    );
  }
}

/**
 * Every file `accepts` takes, by its name (a suffix: the names ending in it, in any case, as
 * elasticsearch-evolution takes `X.JSON`), under the connection's folder `<root>/<connection>`, sub-folders included, ordered by
 * relative path in version order (`compareVersionPaths`), and the paths of the other files;
 * `undefined` when that folder does not exist, which the caller reports (it is not the same as a
 * folder without files).
 *
 * Entries whose name starts with `.` (files and folders) are skipped: a Kubernetes ConfigMap or
 * Secret mount keeps its real files in `..<timestamp>/` behind `..data`, and reaching them there
 * as well as through the per-key links would make each file two migrations.
 *
 * Symbolic links (the connection folder itself included) are followed when their real target
 * lies inside the real path of `root`, so a mounted or linked folder works but a migration folder
 * cannot reach outside the root. A link leaving the root, a dangling link, a link loop, and one
 * real file or folder reached under two names (it would be recorded twice) are each refused with
 * a {@link MigrationFileError} naming the path. So is a name (of a file, migration or not, or of a
 * folder) holding a control character, or a character that makes it display as another name (a
 * bidirectional override, U+FEFF), named with it escaped (`\u000a`). A file keeps the path it has
 * under the connection folder (the link's name, not its target's) as its identity, and the size
 * limit applies to the target.
 */
export async function readMigrationFiles(
  root: string,
  connection: string,
  accepts: string | ((name: string) => boolean),
): Promise<MigrationFolder | undefined> {
  const dir = join(root, connection);
  let linked;
  try {
    linked = (await lstat(dir)).isSymbolicLink();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const rootReal = await realpath(root);
  const dirReal = await resolveInside(dir, dir, rootReal, linked);
  if (!(await stat(dirReal)).isDirectory()) {
    throw new MigrationFileError(dir, "is not a folder");
  }
  const isMigration = typeof accepts === "function"
    ? accepts
    : (name: string) => name.toLowerCase().endsWith(accepts.toLowerCase());
  const folder = new FolderWalk(rootReal, isMigration);
  await folder.walk("", dirReal, [dirReal]);
  const { found, ignored } = folder.listed();
  return { files: await readFound(found), ignored };
}

// A file the walk found to read: its path under the connection folder, and its real path.
interface Found {
  readonly path: string;
  readonly real: string;
}

// An entry's kind, as its directory entry or (a link's) its target's stat says.
type EntryKind = { isDirectory(): boolean; isFile(): boolean };

// One walk of a connection folder: what it found, what it left out, and each real file or folder
// reached, refused when reached again.
class FolderWalk {
  readonly #rootReal: string;
  readonly #isMigration: (name: string) => boolean;
  // Real path -> the name it was first reached under: a real file or folder is read once only.
  readonly #seen = new Map<string, string>();
  readonly #found: Found[] = [];
  readonly #ignored: string[] = [];

  constructor(rootReal: string, isMigration: (name: string) => boolean) {
    this.#rootReal = rootReal;
    this.#isMigration = isMigration;
  }

  /** What was found and left out, each in version order. */
  listed(): { found: Found[]; ignored: string[] } {
    return {
      found: [...this.#found].sort((a, b) => compareVersionPaths(a.path, b.path)),
      ignored: [...this.#ignored].sort(compareVersionPaths),
    };
  }

  /** Walks the folder `rel` (real path `real`), below the real folders `ancestors`. */
  async walk(rel: string, real: string, ancestors: readonly string[]): Promise<void> {
    this.#seen.set(real, rel);
    const entries = (await readdir(real, { withFileTypes: true }))
      .filter((entry) => !entry.name.startsWith("."))
      // Sorted, so that of two names for one file the same one is refused on every machine.
      .sort((a, b) => compareVersionPaths(a.name, b.name));
    refuseLookAlikes(rel, entries.map((entry) => entry.name));
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      refuseUnprintable(path, entry.name);
      let target = join(real, entry.name);
      let kind: EntryKind = entry;
      if (entry.isSymbolicLink()) {
        target = await resolveInside(target, path, this.#rootReal, true);
        kind = await stat(target);
      }
      await this.#entry(path, entry.name, target, kind, ancestors);
    }
  }

  // One entry of a folder: a folder walked, a migration found, or another file left out.
  async #entry(
    path: string,
    name: string,
    target: string,
    kind: EntryKind,
    ancestors: readonly string[],
  ): Promise<void> {
    const isFolder = kind.isDirectory();
    // Sockets, FIFOs and devices, linked or not, are no migrations (a FIFO would block a read);
    // one named as a migration is refused rather than skipped, which would lose it unseen.
    if (!isFolder && !this.#isMigration(name)) {
      this.#ignored.push(path);
      return;
    }
    if (!isFolder && !kind.isFile()) {
      throw new MigrationFileError(
        path,
        "is not a regular file (a FIFO, a socket or a device): a migration file must be one",
      );
    }
    if (isFolder && ancestors.includes(target)) {
      throw new MigrationFileError(
        path,
        `leads back to ${target}, a folder that contains it: a symbolic link loop`,
      );
    }
    this.#refuseSeen(path, target, isFolder);
    if (isFolder) await this.walk(path, target, [...ancestors, target]);
    else await this.#file(path, target);
  }

  // A real file or folder reached under a second name would be recorded twice.
  #refuseSeen(path: string, target: string, isFolder: boolean): void {
    const first = this.#seen.get(target);
    if (first === undefined) return;
    throw new MigrationFileError(
      path,
      `is the same ${isFolder ? "folder" : "file"} as ${first || "the connection folder"} ` +
        `(${target}), reached through a symbolic link; each migration file must be reachable ` +
        "under one name only, or it would be recorded twice",
    );
  }

  // A migration file found, refused over the size limit.
  async #file(path: string, target: string): Promise<void> {
    // stat, not lstat: a link's own size says nothing about the file it stands for.
    const { size } = await stat(target);
    if (size > MAX_MIGRATION_FILE_BYTES) {
      throw new MigrationFileError(
        path,
        `is ${size} bytes, over the limit of ${MAX_MIGRATION_FILE_BYTES} bytes for a migration file`,
      );
    }
    this.#seen.set(target, path);
    this.#found.push({ path, real: target });
  }
}

// One at a time: thousands of files at once would run out of file descriptors. Read through the
// real path that was checked, not the link, which may have been re-pointed since.
async function readFound(found: readonly Found[]): Promise<MigrationFile[]> {
  const files: MigrationFile[] = [];
  for (const { path, real } of found) {
    let bytes;
    try {
      bytes = new Uint8Array(await readFile(real));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // A ConfigMap update removes the old timestamped folder once `..data` points at the new one.
      throw new MigrationFileError(
        path,
        `was removed (${real}) while the folder was being read; run again`,
        { cause: error },
      );
    }
    files.push({ path, bytes, hash: await rawContentHash(bytes), source: real });
  }
  return files;
}

// Two names a reader cannot tell apart (`é` as one character, or as `e` and an accent): which one
// an edit, a review or a record meant could not be known.
function refuseLookAlikes(rel: string, names: readonly string[]): void {
  const composed = new Map<string, string>();
  for (const name of names) {
    const other = composed.get(name.normalize("NFC"));
    if (other !== undefined) {
      // Past ASCII written `\uXXXX`: the two names print alike, or the user could not tell them.
      const spelled = (text: string) => escapedName(text).replace(/[^\x20-\x7e]/gu, unicodeEscape);
      throw new MigrationFileError(
        spelled(rel ? `${rel}/${name}` : name),
        `reads as ${spelled(other)} beside it (the same letters, composed another way): ` +
          "rename one",
      );
    }
    composed.set(name.normalize("NFC"), name);
  }
}

// Named escaped: the raw character would break the message's line, recolour a terminal, or show
// the name as another. Refused before any file is read, so nothing is applied.
function refuseUnprintable(path: string, name: string): void {
  const control = CONTROL.exec(name)?.[0];
  if (control !== undefined) {
    throw new MigrationFileError(
      escapedName(path),
      `has a control character (${codePoint(control)}) in its name: rename it; a name is ` +
        "printed, recorded and may become an index name",
    );
  }
  const reordering = REORDERING.exec(name)?.[0];
  if (reordering !== undefined) {
    throw new MigrationFileError(
      escapedName(path),
      `has an invisible character (${codePoint(reordering)}) in its name that reorders or ` +
        "hides part of it, so that it displays as another name: rename it; a name is " +
        "printed, recorded and may become an index name",
    );
  }
}

// A name with each character the walk refuses written `\uXXXX`: the name as it is to be found.
function escapedName(path: string): string {
  return printable(path).replace(ALL_REORDERING, unicodeEscape);
}

const ALL_REORDERING = new RegExp(REORDERING.source, "gu");

// `\u00e9`, or `\u{e0041}` past the 16-bit range.
function unicodeEscape(c: string): string {
  const code = c.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

function codePoint(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).padStart(4, "0").toUpperCase()}`;
}

/**
 * The real path of `file` (`name` in errors; `linked` when it is a symbolic link), refused unless
 * it exists and lies inside `rootReal`. Checked before anything else is done with the target, so
 * nothing outside the root is even stat'ed.
 */
async function resolveInside(
  file: string,
  name: string,
  rootReal: string,
  linked: boolean,
): Promise<string> {
  let real;
  try {
    real = await realpath(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!linked || (code !== "ENOENT" && code !== "ELOOP")) throw error;
    const pointsAt = resolve(dirname(file), await readlink(file));
    throw new MigrationFileError(
      name,
      code === "ENOENT"
        ? `is a symbolic link to ${pointsAt}, which does not exist`
        : `is a symbolic link to ${pointsAt}, which loops back on itself (a symbolic link loop)`,
      { cause: error },
    );
  }
  const rel = relative(rootReal, real);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new MigrationFileError(
      name,
      linked
        ? `is a symbolic link to ${real}, outside the migrations root ${rootReal}; links are ` +
          "followed only inside it"
        : `is ${real}, outside the migrations root ${rootReal}`,
    );
  }
  return real;
}
