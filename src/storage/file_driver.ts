// The store on a local folder: one file per key at `<folder>/<key>`, so that a user sees their
// files, and what a file cannot hold (media type, metadata, etag) in a sidecar,
// `<folder>/.thaw-storage/meta/<sha256 of the key>/<version>.json`. `<version>` is the file's inode,
// size and modification time, which a rename keeps and any other write changes: a put streams into
// a temp file beside the target, writes its sidecar under that file's version (whole, renamed into
// place), then renames the temp file over the target, the one atomic step. Concurrent puts of a key
// each leave a sidecar of their own version, so whichever rename comes last, the file there has its
// own sidecar: never one put's bytes with another's metadata. A version with no sidecar (a file
// written in between, or dropped in by hand) gets the defaults and an etag of its stat.
// Stale sidecars are pruned after each put and delete; one is kept while the temp file it names
// exists (its put has not renamed yet) or while it is the file's. The temp file is looked at first,
// so that a put renaming in between is seen as the file's, never missed. No link below the folder
// is followed (folders checked with `lstat`, files opened `O_NOFOLLOW`): no key reaches outside.
import type { BigIntStats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { shownValue } from "../shown_value.ts";
import type { ByteRange, DriverPut, ListedObject, ListPage, ObjectBody } from "./storage_driver.ts";
import type { ObjectInfo, StorageDriver } from "./storage_driver.ts";
import { StorageFault } from "./storage_driver.ts";
import { compareKeys, keyProblem } from "./storage_key.ts";
import { abortedFault, fileStream, writeBody, type Written } from "./file_body.ts";

// Node's modules by import(), awaited as this module loads: a static import would be hoisted to the
// top of every one-file bundle of an app with storage(), on S3 or R2 too, and workerd refuses to
// load a worker that names a node: module its flags do not give. storage() imports this module only
// for a file store.
const { createHash, randomUUID } = await import("node:crypto");
const { constants } = await import("node:fs");
const { link, lstat, mkdir, open, readdir, rename, rmdir, unlink } = await import(
  "node:fs/promises"
);
const { join, resolve } = await import("node:path");

const OWN_FOLDER = ".thaw-storage";
const TEMP_PREFIX = ".thaw-tmp-";
const TEMP_NAME = /^\.thaw-tmp-[0-9a-f-]{36}$/;
const OCTET_STREAM = "application/octet-stream";
// Windows has neither flag: `lstat` alone keeps links out there. `O_NONBLOCK` keeps a FIFO a user
// left at a key from blocking the open forever; it changes nothing for a regular file.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
// How often a folder is made again when a delete removed it, empty, before the file went in.
const CREATE_ATTEMPTS = 8;

type OnFile = "absent" | "invalid";
// What a sidecar holds: `temp` is the name of the temp file its put wrote, beside the target.
type Sidecar = Pick<ObjectInfo, "key" | "contentType" | "metadata" | "etag"> & { temp: string };
type Body = DriverPut["body"];
type Spooled = Written & { readonly name: string; readonly path: string; stats: BigIntStats };

const ignore = (): void => {};
const none = (): undefined => undefined;

function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

// `fallback` when `error` says the path is not there (or a file is where a folder would be).
function missing<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if (errno(error) === "ENOENT" || errno(error) === "ENOTDIR") return fallback;
    throw error;
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// A segment as a file system that folds case and normalisation (macOS, Windows) may store it;
// Windows also drops trailing dots and spaces.
function folded(segment: string): string {
  return segment.normalize("NFKC").toLowerCase().replace(/[. ]+$/, "");
}

// Why the store keeps `key` for itself: its own folder, and the temp files a listing skips.
function reservedProblem(key: string): string | undefined {
  const segments = key.split("/");
  if (folded(segments[0]) === OWN_FOLDER) {
    return `a key does not start with "${OWN_FOLDER}", the file store's own folder`;
  }
  if (segments.some((segment) => folded(segment).startsWith(TEMP_PREFIX))) {
    return `a key has no segment starting "${TEMP_PREFIX}", the file store's temp files`;
  }
  return undefined;
}

// The version of a file a sidecar is tied to. Its time is to the millisecond, as every runtime
// reads it (Deno reads no finer): a store written on one runtime is read the same on another.
function versionOf(stats: BigIntStats): string {
  return `${stats.ino.toString(16)}-${stats.size.toString(16)}-${stats.mtimeMs.toString(16)}`;
}

function isSidecar(value: unknown, key: string): value is Sidecar {
  const v = value as Partial<Sidecar> | null;
  return typeof v === "object" && v !== null && v.key === key &&
    typeof v.contentType === "string" && typeof v.etag === "string" &&
    typeof v.temp === "string" && typeof v.metadata === "object" && v.metadata !== null &&
    Object.values(v.metadata).every((item) => typeof item === "string");
}

const linkFault = (path: string): StorageFault =>
  new StorageFault("invalid", `${shownValue(path)} is a symbolic link: the store follows none`);

const existsFault = (key: string): StorageFault =>
  new StorageFault("exists", `an object has the key ${shownValue(key)}`);

const folderFault = (key: string): StorageFault =>
  new StorageFault("invalid", `${shownValue(key)} is a folder of other keys, not an object`);

// The driver's faults as the core words them; other errors are I/O, and go through as they are.
function faultOf(error: unknown): unknown {
  if (error instanceof StorageFault) return error;
  const code = errno(error);
  const options = { cause: error };
  if (code === "EACCES" || code === "EPERM") {
    return new StorageFault("denied", `the file system refused: ${messageOf(error)}`, options);
  }
  if (code !== "ENAMETOOLONG") return error;
  return new StorageFault("invalid", `a name is too long: ${messageOf(error)}`, options);
}

/**
 * A store on a local folder (`kind` `"file"`): each object is the file `<folder>/<key>` (a key's
 * segments are folders), written whole through a temp file and a rename, so that a reader sees
 * the old bytes or the new ones, never a mix; its media type, metadata and etag are kept beside,
 * under `<folder>/.thaw-storage/`. Keys starting with that segment (in any case) are refused, and
 * so is any path through a symbolic link. Runs on Deno, Bun and Node (`node:fs`); no signed URLs.
 */
export class FileDriver implements StorageDriver {
  /** The store's kind, as metrics and spans name it. */
  readonly kind: "file" = "file";
  readonly #root: string;

  /** @param folder the store's folder, absolute or from the working folder; made on first write */
  constructor(folder: string) {
    this.#root = resolve(folder);
  }

  /** Writes the object through a temp file renamed over its path (linked, for `ifNoneMatch`). */
  async put(put: DriverPut): Promise<ObjectInfo> {
    try {
      return await this.#put(put);
    } catch (error) {
      // A body not read yet (the key refused first) is cancelled too; a read one already was.
      if (put.body instanceof ReadableStream && !put.body.locked) {
        await put.body.cancel(error).catch(ignore);
      }
      throw faultOf(error);
    }
  }

  /** The object's bytes (or `range` of them) from a handle opened now, or `null`. */
  get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    return guarded(this.#get(key, range));
  }

  /** What the file and its sidecar say of the object, or `null`. */
  head(key: string): Promise<ObjectInfo | null> {
    return guarded((async () => {
      if (!await this.#reachable(key)) return null;
      const stats = await this.#fileStats(key);
      return stats === undefined ? null : await this.#info(key, stats);
    })());
  }

  /** Deletes the file, its sidecars and the folders it leaves empty; a missing one is no error. */
  delete(key: string): Promise<void> {
    return guarded((async () => {
      if (!await this.#reachable(key)) return await this.#prune(key);
      if (await this.#fileStats(key)) await unlink(this.#path(key)).catch(missing(undefined));
      await this.#prune(key);
      await this.#removeEmptyFolders(key.split("/").slice(0, -1));
    })());
  }

  /** Streams `from` into `to` as a put does, with its media type and metadata. */
  copy(from: string, to: string): Promise<boolean> {
    return guarded((async () => {
      this.#refuseReserved(to);
      const source = await this.#get(from, undefined);
      if (source === null) return false;
      const { body, contentType, metadata } = source;
      // As a put: refused before its first read, the source's body (and handle) is closed.
      await this.put({ key: to, body, contentType, metadata, ifNoneMatch: false });
      return true;
    })());
  }

  /**
   * One page of the keys starting with `prefix`, after `start`, in UTF-8 byte order: the keys
   * under the deepest folder `prefix` names are gathered and sorted whole, since the order of a
   * walk of the folders is not the keys' ("a/b" comes after "a-c").
   */
  list(prefix: string, limit: number, start?: string): Promise<ListPage> {
    return guarded(this.#list(prefix, limit, start));
  }

  async #list(prefix: string, limit: number, start: string | undefined): Promise<ListPage> {
    const cut = prefix.lastIndexOf("/");
    const base = cut === -1 ? [] : prefix.slice(0, cut).split("/");
    // A folder of the store's own (".thaw-storage/") holds no key.
    if (cut !== -1 && reservedProblem(prefix.slice(0, cut)) !== undefined) return { objects: [] };
    const seen = new Set<string>();
    if (!await this.#folders(base, "absent", seen)) return { objects: [] };
    const keys: string[] = [];
    await this.#collect(base, prefix, keys);
    keys.sort(compareKeys);
    const after = start === undefined ? 0 : keys.findIndex((key) => compareKeys(key, start) > 0);
    const from = after === -1 ? keys.length : after;
    const page = keys.slice(from, from + limit);
    const objects: ListedObject[] = [];
    for (const key of page) {
      // Gone since the walk (a delete): left out.
      const stats = await this.#fileStats(key);
      if (stats === undefined) continue;
      const { size, etag, lastModified } = await this.#info(key, stats, seen);
      objects.push({ key, size, etag, lastModified });
    }
    return from + limit < keys.length ? { objects, next: page[page.length - 1] } : { objects };
  }

  /** Makes the folder when it is missing; `StorageFault("unavailable")` when that fails. */
  async check(): Promise<void> {
    try {
      // A file (or anything but a folder) in its place fails here too, with EEXIST.
      await mkdir(this.#root, { recursive: true });
    } catch (error) {
      const reason = `the folder ${shownValue(this.#root)} cannot be used: ${messageOf(error)}`;
      throw new StorageFault("unavailable", reason, { cause: error });
    }
  }

  #path(key: string): string {
    return join(this.#root, ...key.split("/"));
  }

  #refuseReserved(key: string): void {
    const problem = reservedProblem(key);
    if (problem !== undefined) throw new StorageFault("invalid", problem);
  }

  // Whether the key's folders all exist, so that it may have a file; refuses what `#folders` does.
  #reachable(key: string): Promise<boolean> {
    this.#refuseReserved(key);
    return this.#folders(key.split("/").slice(0, -1), "absent");
  }

  // Whether the folders `parts` (from the store's) all exist; a link on the way is refused, and a
  // file on the way is either no folder (`absent`) or refused (`invalid`: a put under an object).
  async #folders(parts: readonly string[], onFile: OnFile, seen?: Set<string>): Promise<boolean> {
    let path = this.#root;
    for (let i = 0; i < parts.length; i++) {
      path = join(path, parts[i]);
      if (seen?.has(path)) continue;
      const stats = await lstat(path).catch(missing(undefined));
      if (stats === undefined) return false;
      const shown = parts.slice(0, i + 1).join("/");
      if (stats.isSymbolicLink()) throw linkFault(shown);
      if (!stats.isDirectory()) {
        if (onFile === "absent") return false;
        throw new StorageFault("invalid", `${shownValue(shown)} is an object, not a folder`);
      }
      seen?.add(path);
    }
    return true;
  }

  // The stats of the key's file (its folders checked), or `undefined` when it is not a file.
  async #fileStats(key: string): Promise<BigIntStats | undefined> {
    const stats = await lstat(this.#path(key), { bigint: true }).catch(missing(undefined));
    if (stats?.isSymbolicLink()) throw linkFault(key);
    return stats?.isFile() ? stats : undefined;
  }

  async #get(key: string, range: ByteRange | undefined): Promise<ObjectBody | null> {
    if (!await this.#reachable(key)) return null;
    // The last name too, before it is opened: O_NOFOLLOW is not on every system (Windows).
    if (await this.#fileStats(key) === undefined) return null;
    const handle = await open(this.#path(key), READ_FLAGS).catch((error) => {
      if (errno(error) === "ELOOP") throw linkFault(key);
      return missing(null)(error);
    });
    if (handle === null) return null;
    try {
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile()) return await handle.close().then(() => null);
      const info = await this.#info(key, stats);
      const size = info.size;
      if (range === undefined || size === 0) return { ...info, body: fileStream(handle, 0, size) };
      if (range.offset >= size) {
        const reason = `the range starts at byte ${range.offset}, past the object's ${size} bytes`;
        throw new StorageFault("range", reason);
      }
      const end = range.length === undefined ? size : Math.min(size, range.offset + range.length);
      const body = fileStream(handle, range.offset, end);
      return { ...info, body, range: { offset: range.offset, length: end - range.offset } };
    } catch (error) {
      await handle.close().catch(ignore);
      throw error;
    }
  }

  // What the sidecar of this version of the file says, or the defaults when it has none.
  async #info(key: string, stats: BigIntStats, seen?: Set<string>): Promise<ObjectInfo> {
    const sidecar = await this.#readSidecar(key, `${versionOf(stats)}.json`, seen);
    const hex = (n: bigint) => n.toString(16);
    const etag = sidecar?.etag ?? `"${hex(stats.size)}-${hex(stats.mtimeMs)}-${hex(stats.ino)}"`;
    const { contentType = OCTET_STREAM, metadata = {} } = sidecar ?? {};
    const [size, lastModified] = [Number(stats.size), modified(stats)];
    return { key, size, lastModified, contentType, metadata, etag };
  }

  #metaParts(key: string): string[] {
    return [OWN_FOLDER, "meta", createHash("sha256").update(key).digest("hex")];
  }

  // The sidecar `name` of `key`, or `undefined` when there is none or it is no sidecar of it.
  async #readSidecar(key: string, name: string, seen?: Set<string>): Promise<Sidecar | void> {
    const parts = this.#metaParts(key);
    if (!await this.#folders(parts, "absent", seen)) return undefined;
    let text: string;
    try {
      const handle = await open(join(this.#root, ...parts, name), READ_FLAGS);
      try {
        text = await handle.readFile("utf8");
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (["ENOENT", "ENOTDIR", "ELOOP", "EISDIR"].includes(errno(error) ?? "")) return;
      throw error;
    }
    try {
      const value: unknown = JSON.parse(text);
      if (isSidecar(value, key)) return value;
    } catch {
      // Not a sidecar: a version without one.
    }
  }

  // A new file `name` in the folder `parts`, made with its folders. A delete may remove a folder
  // between its making and the open: it is made again.
  async #create(parts: readonly string[], name: string): Promise<[string, FileHandle]> {
    const folder = join(this.#root, ...parts);
    const path = join(folder, name);
    for (let attempt = 1;; attempt++) {
      await mkdir(folder, { recursive: true }).catch((error) => {
        const code = errno(error);
        if (code !== "ENOTDIR" && code !== "EEXIST") throw error;
        const reason = `a file is in the way of the folder ${shownValue(parts.join("/"))}`;
        throw new StorageFault("invalid", reason, { cause: error });
      });
      try {
        // `wx`: a link, or anything, already there fails, never followed nor written into.
        return [path, await open(path, "wx", 0o666)];
      } catch (error) {
        if (errno(error) !== "ENOENT" || attempt === CREATE_ATTEMPTS) throw error;
      }
    }
  }

  async #put(put: DriverPut): Promise<ObjectInfo> {
    const { key, signal } = put;
    this.#refuseReserved(key);
    if (signal?.aborted) throw abortedFault(signal);
    const parents = key.split("/").slice(0, -1);
    await this.#folders(parents, "invalid");
    const existing = await lstat(this.#path(key)).catch(none);
    if (existing?.isSymbolicLink()) throw linkFault(key);
    if (existing?.isDirectory()) throw folderFault(key);
    // Before the body is read, which may be long; the link below still decides a race.
    if (put.ifNoneMatch && existing?.isFile()) throw existsFault(key);
    const { contentType, metadata } = put;
    let spooled: Spooled | undefined;
    let sidecarPath: string | undefined;
    try {
      spooled = await this.#spool(parents, put.body, signal);
      const sidecar = { key, contentType, metadata, etag: spooled.etag, temp: spooled.name };
      sidecarPath = await this.#writeSidecar(sidecar, versionOf(spooled.stats));
      if (signal?.aborted) throw abortedFault(signal);
      await this.#commit(spooled.path, key, put.ifNoneMatch);
    } catch (error) {
      // The sidecar first: while the temp file exists, no other file has its version.
      if (sidecarPath !== undefined) await unlink(sidecarPath).catch(ignore);
      if (spooled !== undefined) await unlink(spooled.path).catch(ignore);
      await this.#removeEmptyFolders(parents);
      throw error;
    }
    await this.#prune(key);
    const { size, etag, stats } = spooled;
    return { key, size, contentType, etag, lastModified: modified(stats), metadata };
  }

  // Writes `body` to a new temp file in the folder `parts`, synced; removed again when that fails.
  async #spool(parts: readonly string[], body: Body, signal?: AbortSignal): Promise<Spooled> {
    const name = TEMP_PREFIX + randomUUID();
    const [path, handle] = await this.#create(parts, name);
    try {
      try {
        const written = await writeBody(handle, body, signal);
        await handle.sync();
        return { name, path, ...written, stats: await handle.stat({ bigint: true }) };
      } finally {
        await handle.close();
      }
    } catch (error) {
      await unlink(path).catch(ignore);
      throw error;
    }
  }

  // Writes the sidecar whole (a temp file renamed), under the version it describes; gives its path.
  async #writeSidecar(sidecar: Sidecar, version: string): Promise<string> {
    const parts = this.#metaParts(sidecar.key);
    await this.#folders(parts, "invalid");
    const json = new TextEncoder().encode(JSON.stringify(sidecar));
    const spooled = await this.#spool(parts, json);
    const path = join(this.#root, ...parts, `${version}.json`);
    try {
      await rename(spooled.path, path);
    } catch (error) {
      await unlink(spooled.path).catch(ignore);
      throw error;
    }
    return path;
  }

  // The one step that shows the new object: a rename over the target, or a link that fails when
  // an object is there (the check and the write in one step, against a concurrent put).
  async #commit(tempPath: string, key: string, ifNoneMatch: boolean): Promise<void> {
    const path = this.#path(key);
    if (!ifNoneMatch) {
      return await rename(tempPath, path).catch((error) => {
        const code = errno(error);
        if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") throw folderFault(key);
        throw error;
      });
    }
    try {
      await link(tempPath, path);
    } catch (error) {
      if (errno(error) !== "EEXIST") throw error;
      if ((await lstat(path).catch(none))?.isDirectory()) throw folderFault(key);
      throw existsFault(key);
    }
    // The object is in place: a temp file left by a failed unlink is one a listing skips.
    await unlink(tempPath).catch(ignore);
  }

  // Removes the key's sidecars that no put will use: neither one of a put still writing (its temp
  // file exists) nor the file's own. Best effort: a stale sidecar is never read, as its version is
  // gone, so an error here does not fail the put or delete that did its work.
  async #prune(key: string): Promise<void> {
    const parts = this.#metaParts(key);
    const folder = join(this.#root, ...parts);
    try {
      if (!await this.#folders(parts, "absent")) return;
      for (const name of await readdir(folder)) {
        if (!name.endsWith(".json")) continue;
        const sidecar = await this.#readSidecar(key, name);
        if (sidecar && TEMP_NAME.test(sidecar.temp)) {
          const temp = join(this.#root, ...key.split("/").slice(0, -1), sidecar.temp);
          // Only a temp file known gone frees its sidecar: an error (EMFILE, EACCES) keeps it.
          if (await lstat(temp).then(() => true, (error) => errno(error) !== "ENOENT")) continue;
        }
        // Looked at after the temp file, so that a put committing in between is seen here; an
        // error but a missing file ends the prune, which keeps what it has not removed.
        const stats = await this.#fileStats(key);
        if (stats !== undefined && name === `${versionOf(stats)}.json`) continue;
        await unlink(join(folder, name)).catch(ignore);
      }
      // Only when empty: a put writing its sidecar makes it again.
      await rmdir(folder).catch(ignore);
    } catch {
      // See above: best effort.
    }
  }

  // Removes the key's folders that are now empty, deepest first, up to the store's own folder.
  // A put may be filling one again (it makes it again), or another delete have removed it: the
  // first that cannot be removed ends the walk, whyever, since the object itself is gone.
  async #removeEmptyFolders(parents: readonly string[]): Promise<void> {
    for (let depth = parents.length; depth > 0; depth--) {
      const folder = join(this.#root, ...parents.slice(0, depth));
      if (!await rmdir(folder).then(() => true, () => false)) return;
    }
  }

  // Gathers the keys under the folder `parts` that start with `prefix`, skipping the store's own
  // files, links, and names that are no key (a file a user dropped in with a control character).
  async #collect(parts: readonly string[], prefix: string, keys: string[]): Promise<void> {
    const folder = join(this.#root, ...parts);
    const entries = await readdir(folder, { withFileTypes: true }).catch(missing([]));
    for (const entry of entries) {
      const key = [...parts, entry.name].join("/");
      if (reservedProblem(key) !== undefined) continue;
      if (entry.isDirectory()) {
        // Walked when its keys can start with the prefix: below `base`, when its own path does.
        if (`${key}/`.startsWith(prefix)) await this.#collect([...parts, entry.name], prefix, keys);
      } else if (entry.isFile() && key.startsWith(prefix) && keyProblem(key) === undefined) {
        keys.push(key);
      }
    }
  }
}

// The driver's faults as the core words them, from whatever `work` threw.
async function guarded<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw faultOf(error);
  }
}

function modified(stats: BigIntStats): Date {
  return new Date(Number(stats.mtimeMs));
}
