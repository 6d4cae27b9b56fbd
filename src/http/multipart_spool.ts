// Temporary files for the parts of an upload past `server.multipart.file-size-threshold`: written
// as the part arrives, handed to the handler as a `File` that reads from the disk, deleted once
// the request is done with them.
//
// The file system is reached through `process.getBuiltinModule` (Node 20.16, Deno 2, Bun), not
// `import()`: this module is part of what an edge worker bundles with `RequestPart`, and a worker
// without `nodejs_compat` can neither load a `node:` module nor bundle a file that names one. Where
// there is no file system (workerd, or a runtime without that function), there is no spool, and
// every part stays in memory, under the same limits.
import type * as Fs from "node:fs";
import type * as FsPromises from "node:fs/promises";
import type * as Os from "node:os";
import type * as Path from "node:path";
import { onWorkerd } from "../runtime/on_workerd.ts";

interface Builtins {
  readonly fs: typeof Fs;
  readonly fsp: typeof FsPromises;
  readonly os: typeof Os;
  readonly path: typeof Path;
}

// The runtime's file system, looked up once for the process (null: none); module-level as the
// runtime is the same for every app.
let builtins: Builtins | null | undefined;

// The files of every spool not yet released. A shutdown that cuts a request ends the process at
// once, before that request's release runs (and an async delete would not finish in it): they
// are deleted as the process exits, synchronously, on every runtime.
class LiveFiles {
  readonly #paths = new Set<string>();
  #hooked = false;

  /** Keeps `file` to delete at the process's exit, hooking the exit on the first. */
  keep(file: string): void {
    this.#paths.add(file);
    if (this.#hooked) return;
    this.#hooked = true;
    const { fs } = spoolFileSystem();
    const removeLeft = () => {
      for (const path of this.#paths) {
        try {
          fs.rmSync(path, { force: true });
        } catch {
          // The process ends anyway: what cannot be deleted stays, as it would have.
        }
      }
    };
    // `Deno.exit` runs `unload` listeners, not those of the `process` object's `exit`.
    const g = globalThis as {
      Deno?: unknown;
      addEventListener?(type: "unload", listener: () => void): void;
      process?: { on(event: "exit", listener: () => void): void };
    };
    if (g.Deno !== undefined) g.addEventListener?.("unload", removeLeft);
    else g.process?.on("exit", removeLeft);
  }

  /** `file` was deleted. */
  gone(file: string): void {
    this.#paths.delete(file);
  }
}
// Module-level as the exit is the process's: one hook, whatever the number of spools.
const live = /* @__PURE__ */ new LiveFiles();

// Looked up on first use, once.
function fileSystem(): Builtins | null {
  if (builtins !== undefined) return builtins;
  const g = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  const load = g.process?.getBuiltinModule;
  // workerd with `nodejs_compat` has a `node:fs`, over memory: no better than memory itself.
  if (typeof load !== "function" || onWorkerd()) {
    return builtins = null;
  }
  const get = (id: string) => load.call(g.process, id);
  return builtins = {
    fs: get("fs") as typeof Fs,
    fsp: get("fs/promises") as typeof FsPromises,
    os: get("os") as typeof Os,
    path: get("path") as typeof Path,
  };
}

// The file system of a spool, which is made only where there is one (`canSpool`).
function spoolFileSystem(): Builtins {
  const found = fileSystem();
  if (found === null) {
    throw new Error("an upload is spooled to disk only where there is a file system");
  }
  return found;
}

/** Whether this runtime can spool parts to temporary files. */
export function canSpool(): boolean {
  return fileSystem() !== null;
}

/** One part being written to its temporary file. */
export interface SpoolFile {
  /** Appends content; the chunk is not kept. */
  write(chunk: Uint8Array): Promise<void>;
  /** Closes the file, and gives the `File` that reads it. */
  finish(): Promise<File>;
}

/**
 * The temporary files of one request. `create` makes each in `location` (the OS's temporary
 * folder when `undefined`), readable and writable by the process's user alone; `release` deletes
 * them all, open or not, and may be called more than once.
 */
export class UploadSpool {
  readonly #location: string | undefined;
  readonly #paths: string[] = [];
  readonly #handles = new Set<FsPromises.FileHandle>();
  // The files' readers: a stream the handler read in part and left is closed by `release`.
  readonly #reads: Reads = new Reads();
  // Files being opened: `release` waits for them, so that none is left once it resolves (the
  // request timeout answers 503 then).
  readonly #opening = new Set<Promise<unknown>>();
  #released = false;
  // The one release: a second call (the request abandoned while its form is released) waits for
  // the same deletions rather than resolving before they are done.
  #releasing: Promise<void> | undefined;

  /** @param location the folder of the files; the OS's temporary folder when `undefined` */
  constructor(location: string | undefined) {
    this.#location = location;
  }

  /** A new temporary file for the part `name`, sent as `filename` with `type`. */
  async create(name: string, filename: string, type: string): Promise<SpoolFile> {
    // Work queued before the request was abandoned may still ask: it gets no file. From this
    // check to the open's entry in `#opening` nothing may wait: `release` would miss the file.
    if (this.#released) throw released(name);
    const { fsp, os, path } = spoolFileSystem();
    let folder = this.#location;
    let file: string;
    let handle: FsPromises.FileHandle;
    let opening: Promise<FsPromises.FileHandle> | undefined;
    try {
      folder ??= os.tmpdir();
      file = path.join(folder, `thaw-upload-${crypto.randomUUID()}`);
      // `wx`: a file of that name already there is an error, never one to write into.
      opening = this.#open(fsp, file);
      this.#opening.add(opening);
      handle = await opening;
    } catch (error) {
      throw spoolError(name, folder, error);
    } finally {
      if (opening !== undefined) this.#opening.delete(opening);
    }
    // Released while it was opened: `release` waited for it and deletes it.
    if (this.#released) throw released(name);
    let size = 0;
    // A body arrives in chunks of 16 to 64 KiB: written as they come, each would cost a system
    // call and a turn of the event loop. They are gathered into one buffer, written when full.
    const buffer = new Uint8Array(WRITE_SIZE);
    let buffered = 0;
    const flush = async () => {
      try {
        // A write may take fewer bytes than asked: the rest goes on.
        for (let at = 0; at < buffered;) {
          at += (await handle.write(buffer, at, buffered - at)).bytesWritten;
        }
      } catch (error) {
        throw spoolError(name, folder, error);
      }
      buffered = 0;
    };
    return {
      write: async (chunk) => {
        size += chunk.byteLength;
        for (let at = 0; at < chunk.byteLength;) {
          const take = Math.min(WRITE_SIZE - buffered, chunk.byteLength - at);
          buffer.set(chunk.subarray(at, at + take), buffered);
          buffered += take;
          at += take;
          if (buffered === WRITE_SIZE) await flush();
        }
      },
      finish: async () => {
        await flush();
        this.#handles.delete(handle);
        await handle.close();
        return await spooledFile(file, size, filename, type, this.#reads);
      },
    };
  }

  // Opens `file` and keeps it, for `release` to delete.
  async #open(fsp: typeof FsPromises, file: string): Promise<FsPromises.FileHandle> {
    const handle = await fsp.open(file, "wx", 0o600);
    this.#paths.push(file);
    live.keep(file);
    this.#handles.add(handle);
    return handle;
  }

  /**
   * Deletes every file made so far, those still being opened included; makes no more. Every call
   * resolves once all of them are deleted.
   */
  release(): Promise<void> {
    this.#released = true;
    return this.#releasing ??= this.#deleteAll();
  }

  async #deleteAll(): Promise<void> {
    const fs = fileSystem();
    if (fs === null) return;
    await Promise.allSettled(this.#opening);
    const handles = [...this.#handles];
    this.#handles.clear();
    const paths = this.#paths.splice(0);
    handles.push(...this.#reads.close());
    await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
    await Promise.all(
      paths.map((file) => fs.fsp.rm(file, { force: true }).then(() => live.gone(file), () => {})),
    );
  }
}

function released(name: string): Error {
  return new Error(`Request part '${name}' was not spooled: the request is done with its upload`);
}

function spoolError(name: string, folder: string | undefined, cause: unknown): Error {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `Request part '${name}' could not be written to a temporary file in ` +
      `${folder ?? "the temporary folder"} (server.multipart.location): ${why}`,
    { cause },
  );
}

// Node and Bun read a file blob as it is asked for (`fs.openAsBlob`). Deno's `openAsBlob` reads
// the whole file into memory at once: there, a `File` whose every read goes to the disk stands in
// (Deno's own `Response`, `Request`, `Blob` and `FormData` read a `Blob` through these methods).
// Either way its `stream()` is the spool's own, whose open file `release` closes: a stream of an
// `openAsBlob` blob read in part keeps its file open until it is collected.
async function spooledFile(
  file: string,
  size: number,
  name: string,
  type: string,
  reads: Reads,
): Promise<File> {
  if ("Deno" in globalThis) return new DiskFile(file, 0, size, name, type, reads);
  const blob = await spoolFileSystem().fs.openAsBlob(file);
  return new BlobFile([blob], name, { type }, file, [0, size], reads);
}

/** The files open for reading, closed by the spool's `release`. */
class Reads {
  readonly #open = new Set<FsPromises.FileHandle>();
  #closed = false;

  /** Opens `path` for reading, or fails once the spool is released. */
  async open(path: string): Promise<FsPromises.FileHandle> {
    if (this.#closed) throw new Error(`${path} was deleted: the request is done with its upload`);
    const handle = await spoolFileSystem().fsp.open(path, "r");
    if (this.#closed) {
      await handle.close();
      throw new Error(`${path} was deleted: the request is done with its upload`);
    }
    this.#open.add(handle);
    return handle;
  }

  /** Closes `handle`, once. */
  async done(handle: FsPromises.FileHandle): Promise<void> {
    if (this.#open.delete(handle)) await handle.close();
  }

  /** Hands over every open file, to be closed, and opens no more. */
  close(): FsPromises.FileHandle[] {
    this.#closed = true;
    const open = [...this.#open];
    this.#open.clear();
    return open;
  }
}

/** Bytes `[start, end)` of the file at `path`, read as they are asked for. */
function fileStream(
  path: string,
  start: number,
  end: number,
  reads: Reads,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  let at = start;
  let handle: FsPromises.FileHandle | undefined;
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(controller) {
      handle ??= await reads.open(path);
      const want = Math.min(READ_SIZE, end - at);
      if (want <= 0) {
        await reads.done(handle);
        return controller.close();
      }
      const buffer = new Uint8Array(want);
      const { bytesRead } = await handle.read(buffer, 0, want, at);
      if (bytesRead === 0) {
        await reads.done(handle);
        return controller.error(new Error(`${path} is shorter than the upload it held`));
      }
      at += bytesRead;
      controller.enqueue(buffer.subarray(0, bytesRead));
    },
    async cancel() {
      if (handle !== undefined) await reads.done(handle);
    },
  });
}

/** A `File` over an `openAsBlob` blob, whose `stream()` the spool can close. */
class BlobFile extends File {
  readonly #path: string;
  readonly #start: number;
  readonly #end: number;
  readonly #reads: Reads;

  constructor(
    parts: BlobPart[],
    name: string,
    options: FilePropertyBag,
    path: string,
    range: readonly [start: number, end: number],
    reads: Reads,
  ) {
    super(parts, name, options);
    this.#path = path;
    [this.#start, this.#end] = range;
    this.#reads = reads;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return fileStream(this.#path, this.#start, this.#end, this.#reads);
  }

  // A slice is still this file's: its `stream()` is the spool's own, closed by `release`, where
  // the platform's slice would keep its file open until it is collected.
  override slice(start?: number, end?: number, contentType?: string): Blob {
    // Whole offsets only reach the platform: runtimes round a fraction differently, and Node 20
    // aborts the process on one (an assertion in its Blob::ToSlice).
    const [from, to] = sliceRange(this.size, start, end);
    return new BlobFile(
      [super.slice(from, to)],
      this.name,
      { type: contentType ?? "" },
      this.#path,
      [this.#start + from, this.#start + to],
      this.#reads,
    );
  }
}

// Blob.slice's arithmetic as the File API states it: offsets are whole numbers (WebIDL's
// `[Clamp] long long`: rounded to the nearest, a half to the even one, NaN 0), negative ones count
// from the end, and both are clamped.
function sliceRange(
  size: number,
  start: number | undefined,
  end: number | undefined,
): [from: number, to: number] {
  const at = (offset: number | undefined, fallback: number) => {
    if (offset === undefined) return fallback;
    const floor = Math.floor(offset);
    const half = offset - floor;
    const whole = Number.isNaN(offset)
      ? 0
      : half < 0.5 || (half === 0.5 && floor % 2 === 0)
      ? floor
      : floor + 1;
    return whole < 0 ? Math.max(size + whole, 0) : Math.min(whole, size);
  };
  const from = at(start, 0);
  return [from, Math.max(at(end, size), from)];
}

// Measured with bench/upload_memory.ts: Deno's peak memory grows with the size of each read and
// write (256 KiB: some 25 MB more for a 200 MB upload than 64 KiB reads and 128 KiB writes), and
// Node's time with their number (64 KiB writes: about twice the time of 128 KiB ones).
const READ_SIZE = 65536;
const WRITE_SIZE = 131072;

/** A `File` over bytes `[start, end)` of a file on disk, read only when asked. */
class DiskFile extends File {
  readonly #path: string;
  readonly #start: number;
  readonly #end: number;
  readonly #reads: Reads;

  constructor(
    path: string,
    start: number,
    end: number,
    name: string,
    type: string,
    reads: Reads,
  ) {
    super([], name, { type });
    this.#path = path;
    this.#start = start;
    this.#end = end;
    this.#reads = reads;
  }

  override get size(): number {
    return this.#end - this.#start;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return fileStream(this.#path, this.#start, this.#end, this.#reads);
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    const out = new Uint8Array(this.size);
    let at = 0;
    for await (const chunk of this.stream()) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  override slice(start?: number, end?: number, contentType?: string): Blob {
    const [from, to] = sliceRange(this.size, start, end);
    return new DiskFile(
      this.#path,
      this.#start + from,
      this.#start + to,
      this.name,
      contentType ?? "",
      this.#reads,
    );
  }
}
