// A stream written to S3 whole though its size is not known, or is too large for one request: read
// into parts of 8 MiB (S3 wants 5 MiB at least, but for the last), two parts sent at a time while
// the next one is read, so that a 1 GiB upload holds three parts, never the whole. An upload that
// fails, or that the caller gives up, is aborted at S3 (AbortMultipartUpload): no object appears,
// and no part is left for the bucket's owner to pay for.
import { printable, shownValue } from "../shown_value.ts";
import { StorageFault } from "./storage_driver.ts";
import type { S3Reply, S3Transport } from "./s3_transport.ts";
import { childText, escapeXml } from "./s3_xml.ts";

/** The size of each part but the last (S3's least is 5 MiB). */
export const PART_SIZE: number = 8 * 1024 * 1024;
/** The most parts S3 takes for one object. */
export const MAX_PARTS = 10_000;
// Parts sent at once: with the one being read, what an upload holds in memory.
const PARTS_IN_FLIGHT = 2;

/** The part size for a body of `size` bytes: {@linkcode PART_SIZE}, more when 10,000 are short. */
export function partSizeFor(size: number | undefined): number {
  if (size === undefined || size <= PART_SIZE * MAX_PARTS) return PART_SIZE;
  const mebibyte = 1024 * 1024;
  return Math.ceil(size / MAX_PARTS / mebibyte) * mebibyte;
}

/**
 * A body's stream read as parts of {@linkcode PartReader.partSize} bytes, the last one shorter,
 * as they are asked for; when its `size` was given, a stream longer or shorter than it throws
 * `StorageFault("invalid")`. Cancelled once `signal` aborts, so that a stalled source cannot hold
 * an upload that was given up.
 */
export class PartReader implements PartSource {
  /** The size of each part but the last. */
  readonly partSize: number;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #size: number | undefined;
  readonly #signal: AbortSignal;
  #leftover: Uint8Array | undefined;
  // Parts whose requests have ended, to be filled again: a 1 GiB upload allocates three parts'
  // buffers, not 128, which a runtime would let pile up before collecting them.
  readonly #free: Uint8Array[] = [];
  #ended = false;
  #read = 0;

  /** Reads `stream` (of `size` bytes, when known) until `signal` aborts. */
  constructor(stream: ReadableStream<Uint8Array>, size: number | undefined, signal: AbortSignal) {
    this.partSize = partSizeFor(size);
    this.#reader = stream.getReader();
    this.#size = size;
    this.#signal = signal;
    signal.addEventListener("abort", () => this.cancel(signal.reason), { once: true });
  }

  /** The bytes read into parts so far. */
  get bytesRead(): number {
    return this.#read;
  }

  /** The next part, or `null` once the stream has ended (an empty stream has no part). */
  async next(): Promise<Uint8Array | null> {
    if (this.#ended) return null;
    const left = this.#size === undefined ? this.partSize : this.#size - this.#read;
    // A known size gets its last part's exact length; an unknown one a whole part, cut to fit.
    const length = Math.min(this.partSize, left);
    const part = length === this.partSize
      ? this.#free.pop() ?? new Uint8Array(length)
      : new Uint8Array(length);
    let filled = 0;
    for (;;) {
      if (filled === part.length && part.length > 0) break;
      const chunk = this.#leftover ?? await this.#chunk();
      this.#leftover = undefined;
      if (chunk === null) {
        this.#ended = true;
        break;
      }
      if (part.length === 0 && chunk.length > 0) this.#tooLong();
      const taken = Math.min(chunk.length, part.length - filled);
      part.set(chunk.subarray(0, taken), filled);
      filled += taken;
      if (taken < chunk.length) this.#leftover = chunk.subarray(taken);
    }
    this.#read += filled;
    if (this.#ended && this.#size !== undefined && this.#read !== this.#size) {
      throw new StorageFault(
        "invalid",
        `PutObject: the body's stream ended after ${this.#read} bytes, its size said ${this.#size}`,
      );
    }
    if (filled === 0) return null;
    return filled === part.length ? part : part.slice(0, filled);
  }

  /** Takes back a part whose request has ended, to fill it again. */
  release(part: Part): void {
    if (
      part instanceof Uint8Array && part.length === this.partSize &&
      this.#free.length < PARTS_IN_FLIGHT + 1
    ) {
      this.#free.push(part);
    }
  }

  /** Cancels the stream, which nothing will read any more. */
  cancel(reason?: unknown): void {
    this.#ended = true;
    this.#reader.cancel(reason).catch(() => {});
  }

  #tooLong(): never {
    throw new StorageFault("invalid", `PutObject: the body's stream is longer than its size said`);
  }

  async #chunk(): Promise<Uint8Array | null> {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await this.#reader.read();
    } catch (error) {
      if (this.#signal.aborted) throw givenUp(this.#signal);
      const said = error instanceof Error ? error.message : String(error);
      throw new StorageFault("aborted", `PutObject: the body's stream failed: ${printable(said)}`, {
        cause: error,
      });
    }
    // A cancelled stream reads as ended: only the signal tells the two apart.
    if (this.#signal.aborted) throw givenUp(this.#signal);
    if (result.done) return null;
    if (!(result.value instanceof Uint8Array)) {
      throw new StorageFault("invalid", "PutObject: the body's stream gave a chunk of no bytes");
    }
    return result.value;
  }
}

function givenUp(signal: AbortSignal): StorageFault {
  return new StorageFault("aborted", "PutObject: given up while the body was read", {
    cause: signal.reason,
  });
}

/** A part in hand: bytes read from a stream, or a slice of a Blob (read as it is sent). */
export type Part = Uint8Array | Blob;

/** Where an upload's parts come from: a stream read into parts, or a Blob's slices. */
export interface PartSource {
  /** The size of each part but the last. */
  readonly partSize: number;
  /** The bytes taken into parts so far. */
  readonly bytesRead: number;
  /** The next part, or `null` at the end. */
  next(): Promise<Part | null>;
  /** Takes back a part whose request has ended. */
  release(part: Part): void;
}

/**
 * A Blob's parts, each a slice of it: a Blob of an upload's file is on the disk, and the runtime's
 * `fetch` reads a slice as it sends it, so that no part is held in memory, and sends it again on a
 * retry.
 */
export class BlobParts implements PartSource {
  readonly partSize: number;
  readonly #blob: Blob;
  #at = 0;

  constructor(blob: Blob) {
    this.#blob = blob;
    this.partSize = partSizeFor(blob.size);
  }

  get bytesRead(): number {
    return this.#at;
  }

  next(): Promise<Part | null> {
    if (this.#at >= this.#blob.size) return Promise.resolve(null);
    const part = this.#blob.slice(this.#at, Math.min(this.#at + this.partSize, this.#blob.size));
    this.#at += part.size;
    return Promise.resolve(part);
  }

  release(): void {}
}

/** One upload in parts: where to, its headers, its parts, and the controller that ends it. */
export interface PartsUpload {
  /** What the requests go through. */
  readonly transport: S3Transport;
  /** The key, the settings' prefix included. */
  readonly key: string;
  /** Content-Type and the metadata, as CreateMultipartUpload takes them. */
  readonly headers: Readonly<Record<string, string>>;
  /** Complete only when no object has the key. */
  readonly ifNoneMatch: boolean;
  /** The body, the first parts already taken out of it. */
  readonly parts: PartSource;
  /** Aborted on the first failure (or by the caller): the parts in flight, and the reading, stop. */
  readonly controller: AbortController;
}

/** What the completed upload is. */
export interface PartsUploaded {
  /** The object's entity tag (S3's: the parts' digests' digest, `-` and their count). */
  readonly etag: string;
  /** The object's size in bytes. */
  readonly size: number;
  /** CompleteMultipartUpload's answer's headers (its `Date` is when the object was written). */
  readonly headers: Headers;
}

/**
 * Uploads `first` parts (already read, at least two: a shorter body is one PutObject), then the
 * rest of `upload.parts`, and completes the upload. On any failure it aborts the controller (the
 * parts in flight and the reading), aborts the upload at S3 (best effort), and throws the first
 * failure.
 */
export async function uploadInParts(
  upload: PartsUpload,
  first: Part[],
): Promise<PartsUploaded> {
  const { transport, key, controller } = upload;
  const created = await transport.send({
    method: "POST",
    key,
    query: [["uploads", ""]],
    headers: upload.headers,
    retry: true,
    answer: "xml",
    signal: controller.signal,
    what: "CreateMultipartUpload",
  });
  if (!created.ok) throw transport.fault(created, "CreateMultipartUpload");
  const uploadId = created.xml === undefined ? "" : childText(created.xml, "UploadId") ?? "";
  if (uploadId === "") {
    throw new StorageFault("invalid", "CreateMultipartUpload: S3 answered no UploadId");
  }
  try {
    const etags = await sendParts(upload, uploadId, first);
    return await complete(upload, uploadId, etags);
  } catch (error) {
    controller.abort(error);
    const left = await abandon(upload, uploadId);
    if (left === undefined || !(error instanceof StorageFault)) throw error;
    throw new StorageFault(
      error.kind,
      `${error.message}; the upload in parts ${shownId(uploadId)} was not aborted (${left}): ` +
        "a lifecycle rule of the bucket's (AbortIncompleteMultipartUpload) removes its parts",
      { cause: error },
    );
  }
}

// The parts in order, two in flight while the next is read; their ETags by part number - 1.
async function sendParts(
  upload: PartsUpload,
  uploadId: string,
  ready: Part[],
): Promise<string[]> {
  const etags: string[] = [];
  const running = new Set<Promise<void>>();
  let failure: { readonly error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
    upload.controller.abort(error);
  };
  let number = 0;
  const start = (bytes: Part) => {
    const part = ++number;
    if (part > MAX_PARTS) {
      const most = `${MAX_PARTS} parts of ${upload.parts.partSize} bytes`;
      throw new StorageFault("invalid", `UploadPart: the body is longer than ${most}`);
    }
    const task: Promise<void> = uploadPart(upload, uploadId, part, bytes)
      .then((etag) => {
        etags[part - 1] = etag;
        // Sent and answered: its bytes are read no more.
        upload.parts.release(bytes);
      }, fail)
      .finally(() => running.delete(task));
    running.add(task);
  };
  try {
    for (;;) {
      // Taken out of `ready` (not held in a variable of the caller's): a part sent is let go.
      const bytes = ready.shift() ?? await upload.parts.next();
      if (bytes === null) break;
      while (running.size >= PARTS_IN_FLIGHT && failure === undefined) await Promise.race(running);
      if (failure !== undefined) break;
      start(bytes);
    }
  } catch (error) {
    fail(error);
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure.error;
  return etags;
}

async function uploadPart(
  upload: PartsUpload,
  uploadId: string,
  part: number,
  bytes: Part,
): Promise<string> {
  const what = `UploadPart ${part}`;
  const reply = await upload.transport.send({
    method: "PUT",
    key: upload.key,
    query: [["partNumber", `${part}`], ["uploadId", uploadId]],
    body: bytes,
    retry: true,
    answer: "none",
    signal: upload.controller.signal,
    what,
  });
  if (!reply.ok) throw upload.transport.fault(reply, what);
  const etag = reply.headers.get("etag") ?? "";
  if (etag === "") throw new StorageFault("invalid", `${what}: S3 answered no ETag`);
  return etag;
}

async function complete(
  upload: PartsUpload,
  uploadId: string,
  etags: readonly string[],
): Promise<PartsUploaded> {
  const what = "CompleteMultipartUpload";
  const parts = etags.map((etag, index) =>
    `<Part><PartNumber>${index + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`
  ).join("");
  const xml = `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${parts}` +
    `</CompleteMultipartUpload>`;
  const reply = await upload.transport.send({
    method: "POST",
    key: upload.key,
    query: [["uploadId", uploadId]],
    headers: { "content-type": "application/xml", ...conditional(upload.ifNoneMatch) },
    body: new TextEncoder().encode(xml),
    retry: true,
    answer: "xml",
    signal: upload.controller.signal,
    what,
  });
  if (reply.status === 412) throw existing(what, reply);
  if (!reply.ok) throw upload.transport.fault(reply, what);
  const etag = reply.xml === undefined ? "" : childText(reply.xml, "ETag") ?? "";
  if (etag === "") throw new StorageFault("invalid", `${what}: S3 answered no ETag`);
  return { etag, size: upload.parts.bytesRead, headers: reply.headers };
}

// Best effort: the failure thrown is the upload's; why S3 could not be told is added to it, since
// the parts left cost storage until a lifecycle rule of the bucket's removes them. Returns that
// why, or nothing when the upload was aborted (or was already gone: 404 NoSuchUpload).
async function abandon(upload: PartsUpload, uploadId: string): Promise<string | undefined> {
  const what = "AbortMultipartUpload";
  try {
    const reply = await upload.transport.send({
      method: "DELETE",
      key: upload.key,
      query: [["uploadId", uploadId]],
      retry: true,
      answer: "none",
      what,
    });
    if (reply.ok || reply.status === 404) return undefined;
    return upload.transport.fault(reply, what).message;
  } catch (error) {
    return printable(String(error instanceof Error ? error.message : error).slice(0, 500));
  }
}

// An upload id as S3 gave it, in a message: quoted and printable, and not too long to read.
function shownId(uploadId: string): string {
  return shownValue(uploadId.length > 200 ? `${uploadId.slice(0, 200)}...` : uploadId);
}

/** `If-None-Match: *` when the write must not replace an object. */
export function conditional(ifNoneMatch: boolean): Record<string, string> {
  return ifNoneMatch ? { "if-none-match": "*" } : {};
}

/**
 * The fault of a write refused because an object has the key. A 412 to a request sent again after
 * a try that may have written (its answer a 500, or lost) may answer that try: then what happened
 * is unknown.
 */
export function existing(what: string, reply?: S3Reply): StorageFault {
  if (reply?.triedBefore === true) {
    return new StorageFault(
      "unavailable",
      `${what}: S3 refused a try sent again (412), and an earlier try may have written it: ` +
        "head the key to see what it holds",
    );
  }
  return new StorageFault("exists", `${what}: an object has the key`);
}
