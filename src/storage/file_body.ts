// What the file store reads and writes of a file's bytes: a body written to a temp file chunk by
// chunk, hashed as it goes, and a file read back as a stream of its bytes, closed however it ends.
import type { FileHandle } from "node:fs/promises";
import type { DriverPut } from "./storage_driver.ts";
import { StorageFault } from "./storage_driver.ts";

// By import(), as file_driver.ts says why.
const { createHash } = await import("node:crypto");

// What one read of a body takes from the file: the memory a reader holds, whatever the file's size.
const CHUNK_SIZE = 64 * 1024;

const ignore = (): void => {};

/** What a write made: its size and its etag. */
export type Written = { readonly size: number; readonly etag: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The fault of a put its caller's signal aborted. */
export const abortedFault = (signal: AbortSignal): StorageFault =>
  new StorageFault("aborted", "the caller's signal aborted the put", { cause: signal.reason });

/** Writes all of `bytes`: a write may take fewer bytes than asked. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  // A write may take fewer bytes than asked: the rest goes on.
  for (let at = 0; at < bytes.byteLength;) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.byteLength - at);
    // A file system that takes nothing would be asked forever.
    if (bytesWritten === 0) throw new Error(`the file system took no byte, at byte ${at}`);
    at += bytesWritten;
  }
}

/**
 * Writes `body` to `handle` chunk by chunk, each write awaited (so memory stays one chunk), and
 * gives its size and etag; a signal cancels the stream, which ends the read waiting on it.
 */
export async function writeBody(
  handle: FileHandle,
  body: DriverPut["body"],
  signal?: AbortSignal,
): Promise<Written> {
  const hash = createHash("sha256");
  let size = 0;
  const take = async (chunk: Uint8Array) => {
    hash.update(chunk);
    size += chunk.byteLength;
    await writeAll(handle, chunk);
  };
  if (body instanceof Uint8Array) {
    await take(body);
  } else {
    const reader = (body instanceof Blob ? body.stream() : body).getReader();
    const onAbort = () => void reader.cancel(signal?.reason).catch(ignore);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const next = await reader.read().catch((error) => {
          const reason = `the body's stream failed: ${messageOf(error)}`;
          throw new StorageFault("aborted", reason, { cause: error });
        });
        // An abort cancelled the stream, which reads as its end: it is not one.
        if (signal?.aborted) throw abortedFault(signal);
        if (next.done) break;
        await take(next.value);
      }
    } catch (error) {
      // Stops the source, whatever failed: a write, the signal or the stream itself.
      await reader.cancel(error).catch(ignore);
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
  return { size, etag: `"${hash.digest("hex").slice(0, 32)}"` };
}

// Node and Bun end the process when a file handle is collected open, as that of a body dropped
// unread would be: held here, it is not collected, and is closed once its body is.
const dropped = new FinalizationRegistry<FileHandle>((handle) => void handle.close().catch(ignore));

/**
 * Bytes `start` to `end` of the open file, read as they are asked for; the handle is closed at the
 * end, on cancel and on error. It was opened before: a rename over the path changes nothing here.
 */
export function fileStream(
  handle: FileHandle,
  start: number,
  end: number,
): ReadableStream<Uint8Array> {
  let position = start;
  let cancelled = false;
  let reading: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  const close = () => closing ??= (dropped.unregister(handle), handle.close().catch(ignore));
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (position >= end) {
          await close();
          return controller.close();
        }
        const buffer = new Uint8Array(Math.min(CHUNK_SIZE, end - position));
        const read = handle.read(buffer, 0, buffer.byteLength, position);
        reading = read;
        const { bytesRead } = await read;
        if (cancelled) return;
        if (bytesRead === 0) throw new Error(`the file shrank while read, at byte ${position}`);
        position += bytesRead;
        controller.enqueue(buffer.subarray(0, bytesRead));
      } catch (error) {
        await close();
        throw error;
      }
    },
    async cancel() {
      cancelled = true;
      // A read under way ends before its handle is closed.
      await reading.catch(ignore);
      await close();
    },
  }, { highWaterMark: 0 });
  dropped.register(stream, handle, handle);
  return stream;
}
