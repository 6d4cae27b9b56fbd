// The object store an app is given: one API over every driver. Here, and only here, keys and
// options are checked (before any I/O), errors become `StorageError`s that name the store, the
// operation and the key, and what is measured is measured; a driver only moves bytes.
import { planResponse, responseHeaders } from "./object_response.ts";
import {
  type ListedObject,
  type ObjectBody,
  type ObjectInfo,
  type StorageDriver,
  StorageFault,
  type StoreKind,
} from "./storage_driver.ts";
import { StorageError, type StorageOperation } from "./storage_error.ts";
import { compareKeys, keyProblem, prefixProblem } from "./storage_key.ts";
import { shownValue } from "../shown_value.ts";
import {
  checkedContentType,
  checkedLimit,
  checkedMetadata,
  checkedRange,
  checkedSigning,
  type GetOptions,
  type ListOptions,
  MEDIA_TYPE_SHAPE,
  type PutOptions,
  type SignedUrlOptions,
} from "./storage_options.ts";
import type { StorageMeasure, StorageTelemetry } from "./storage_telemetry.ts";

/** What `put` takes: bytes, text (written as UTF-8), a `Blob` (a `File` of an upload) or a stream. */
export type StorageBody = ReadableStream<Uint8Array> | Uint8Array | ArrayBuffer | string | Blob;

// A Blob up to this size is read whole, so that a store can send it in one request and retry it.
const WHOLE_BLOB_BYTES = 8 * 1024 * 1024;
// A listing's page: S3's and R2's largest.
const PAGE = 1000;
// How often `response` reads again an object that changed between its head and its body.
const RESPONSE_ATTEMPTS = 3;

/**
 * An object store: on the disk (`file:`), in an S3-compatible bucket (`s3://`) or in an R2
 * bucket (`r2:`), all the same to the app. Every operation checks its key before any I/O and
 * throws a {@linkcode StorageError} naming the store, the operation and the key.
 *
 * @example A round trip on the disk
 * ```ts
 * import assert from "node:assert/strict";
 * import { ObjectStorage } from "@thaw/thaw/storage";
 * import { FileDriver } from "./file_driver.ts";
 *
 * const folder = await Deno.makeTempDir();
 * const storage = new ObjectStorage("files", new FileDriver(folder));
 * await storage.put("notes/hello.txt", "Hello!", { metadata: { author: "ada" } });
 * const found = await storage.get("notes/hello.txt");
 * assert.equal(await new Response(found?.body).text(), "Hello!");
 * assert.equal(found?.contentType, "text/plain; charset=utf-8");
 * assert.deepEqual(found?.metadata, { author: "ada" });
 * await assert.rejects(storage.get("../secret"), { name: "StorageError", kind: "key" });
 * await Deno.remove(folder, { recursive: true });
 * ```
 */
export class ObjectStorage {
  /** The bean's name: what its errors, metrics and spans call it. */
  readonly name: string;
  readonly #driver: StorageDriver;
  readonly #telemetry: StorageTelemetry | undefined;

  /**
   * A store named `name` over `driver`; `storage()` makes them from the configuration.
   *
   * @ignore
   */
  constructor(name: string, driver: StorageDriver, telemetry?: StorageTelemetry) {
    this.name = name;
    this.#driver = driver;
    this.#telemetry = telemetry;
  }

  /** What kind of store this is. */
  get kind(): StoreKind {
    return this.#driver.kind;
  }

  /**
   * Writes `body` as the object `key`, whole: a reader sees the former object or this one, never
   * a mix, and a write that fails (the stream errors, the store dies, `signal` aborts) leaves no
   * object behind. A stream is sent as it is read (on S3 as a multipart upload), never held whole.
   */
  put(key: string, body: StorageBody, options: PutOptions = {}): Promise<ObjectInfo> {
    return this.#run("put", key, async (measure) => {
      const contentType = refused("option", () => checkedContentType(options.contentType));
      const metadata = refused("option", () => checkedMetadata(options.metadata));
      const { bytes, stream, size, type } = await bodyOf(body);
      let sent = bytes ?? stream as ReadableStream<Uint8Array> | Blob;
      if (measure !== undefined) {
        if (sent instanceof ReadableStream) sent = counted(sent, (n) => measure.bytes("in", n));
        else measure.bytes("in", sent instanceof Blob ? sent.size : sent.length);
      }
      return await this.#driver.put({
        key,
        body: sent,
        size,
        contentType: contentType ?? type,
        metadata,
        ifNoneMatch: options.ifNoneMatch === true,
        signal: options.signal,
      });
    }).catch((error: StorageError) => {
      // Refused before the driver read it (a key, an option): a stream left so would hold its
      // source (a connection) until collected. A driver cancels what it began to read.
      if (body instanceof ReadableStream && !body.locked) body.cancel(error).catch(() => {});
      throw error;
    });
  }

  /**
   * The object `key` (its `range` alone when one is given), or `null` when there is none. Read
   * its `body` to the end or cancel it: until then it holds a connection or a file.
   */
  get(key: string, options: GetOptions = {}): Promise<ObjectBody | null> {
    return this.#run("get", key, async (measure) => {
      const found = await this.#driver.get(
        key,
        refused("option", () => checkedRange(options.range)),
      );
      if (found === null || measure === undefined) return found;
      return { ...found, body: counted(found.body, (n) => measure.bytes("out", n)) };
    });
  }

  /** What the store knows of the object `key`, or `null` when there is none. */
  head(key: string): Promise<ObjectInfo | null> {
    return this.#run("head", key, () => this.#driver.head(key));
  }

  /** Deletes the object `key`; deleting one that is not there is no error. */
  delete(key: string): Promise<void> {
    return this.#run("delete", key, () => this.#driver.delete(key));
  }

  /** Copies the object `from` to `to`, in the store; `false` when `from` is not there. */
  copy(from: string, to: string): Promise<boolean> {
    return this.#run("copy", from, () => {
      const problem = keyProblem(to);
      if (problem !== undefined) throw new Refused("key", `${problem} (the copy's target)`);
      return this.#driver.copy(from, to);
    });
  }

  /**
   * The objects whose keys start with `prefix`, in the order of their keys' UTF-8 bytes, read a
   * page (of up to 1,000) at a time as they are iterated; at most `limit` of them.
   */
  async *list(
    prefix = "",
    options: ListOptions = {},
  ): AsyncGenerator<ListedObject, void, undefined> {
    let limit = await this.#run("list", prefix, () => {
      const problem = prefixProblem(prefix);
      if (problem !== undefined) throw new Refused("key", problem);
      return Promise.resolve(refused("option", () => checkedLimit(options.limit)));
    }, false);
    let start: string | undefined;
    let last: string | undefined;
    const seen = new Set<string>();
    const wrong = (reason: string) =>
      new StorageError(this.name, "list", prefix, "invalid", reason);
    while (limit > 0) {
      const page = await this.#run(
        "list",
        prefix,
        () => this.#driver.list(prefix, Math.min(limit, PAGE), start),
        false,
      );
      for (const object of page.objects.slice(0, limit)) {
        // Keys that do not go forward, whatever the tokens say, would list forever.
        if (last !== undefined && compareKeys(object.key, last) <= 0) {
          throw wrong(`the store listed ${shownValue(object.key)} after ${shownValue(last)}`);
        }
        if (!object.key.startsWith(prefix)) {
          throw wrong(
            `the store listed ${shownValue(object.key)}, which does not start with ${
              shownValue(prefix)
            }`,
          );
        }
        last = object.key;
        yield object;
      }
      limit -= page.objects.length;
      if (page.next === undefined) return;
      // An empty page may still say there is more; a token given before would list forever.
      if (seen.has(page.next)) throw wrong("the store listed a page twice");
      seen.add(page.next);
      start = page.next;
    }
  }

  /**
   * A URL that lets whoever holds it `GET` (or `PUT`) the object `key` until `expires` (a
   * duration, 1 second to 7 days) from now, without credentials: on the stores that can sign
   * (S3); the file store cannot, and throws a `StorageError` of kind `option`.
   */
  signedUrl(key: string, options: SignedUrlOptions): Promise<string> {
    return this.#run("signedUrl", key, () => {
      const { method, seconds } = refused("option", () => checkedSigning(options));
      if (this.#driver.signedUrl === undefined) {
        throw new Refused("option", `a ${this.#driver.kind} store cannot sign URLs`);
      }
      return this.#driver.signedUrl(key, method, seconds);
    });
  }

  /**
   * The object `key` as an answer to `request` (`GET` or `HEAD`; a `Request`, or the `HttpRequest`
   * a handler is given), for a handler to return as it is: `ETag`, `Last-Modified`, `Accept-Ranges`; `304` to `If-None-Match` or `If-Modified-Since`,
   * `412` to `If-Match` or `If-Unmodified-Since`, one range of `Range` as `206` (`416` when it
   * starts past the end); `404` when there is no object, or the key is not one a store takes (the
   * key often comes from the URL: a client's wrong key is not the server's error).
   */
  response(key: string, given: Request | { getRaw(): Request }): Promise<Response> {
    if (keyProblem(key) !== undefined) return Promise.resolve(new Response(null, { status: 404 }));
    // The handler's `HttpRequest` binder gives what holds the request.
    const request = given instanceof Request ? given : given.getRaw();
    return this.#run("response", key, async () => {
      const conditions = {
        method: request.method,
        ifMatch: request.headers.get("if-match"),
        ifNoneMatch: request.headers.get("if-none-match"),
        ifModifiedSince: request.headers.get("if-modified-since"),
        ifUnmodifiedSince: request.headers.get("if-unmodified-since"),
        range: request.headers.get("range"),
        ifRange: request.headers.get("if-range"),
      };
      for (let attempt = 1; attempt <= RESPONSE_ATTEMPTS; attempt++) {
        const info = await this.#driver.head(key);
        if (info === null) return new Response(null, { status: 404 });
        const plan = planResponse(info, conditions);
        const headers = responseHeaders(info, plan);
        if ((plan.status !== 200 && plan.status !== 206) || request.method === "HEAD") {
          return new Response(null, { status: plan.status, headers });
        }
        // Written shorter between the two, the range may start past its end: planned again.
        const found = await this.#driver.get(key, plan.range).catch((error) => {
          if (error instanceof StorageFault && error.kind === "range") return undefined;
          throw error;
        });
        // Gone, or written again, between the two: what was planned may not fit its bytes.
        if (found?.etag === info.etag) {
          return new Response(found.body, { status: plan.status, headers });
        }
        await found?.body.cancel();
      }
      return new Response(null, { status: 503, headers: { "retry-after": "1" } });
    });
  }

  /** Throws a `StorageError` when the store cannot be reached (the `storage` health component). */
  check(): Promise<void> {
    return this.#run("check", undefined, () => this.#driver.check());
  }

  /** Lets go of what the store holds. */
  close(): void {
    this.#driver.close?.();
  }

  // Runs one operation: the key checked first (unless `checkKey` is false), what it throws made
  // a StorageError, and measured where a provider is registered.
  async #run<T>(
    operation: StorageOperation,
    key: string | undefined,
    work: (measure: StorageMeasure | undefined) => Promise<T>,
    checkKey = key !== undefined,
  ): Promise<T> {
    const measure = this.#telemetry?.begin(operation);
    try {
      if (checkKey) {
        const problem = keyProblem(key);
        if (problem !== undefined) throw new Refused("key", problem);
      }
      const result = await work(measure);
      measure?.end();
      return result;
    } catch (error) {
      const failure = this.#failure(operation, key, error);
      measure?.end(failure);
      throw failure;
    }
  }

  #failure(operation: StorageOperation, key: string | undefined, error: unknown): StorageError {
    if (error instanceof StorageError) return error;
    const shown = typeof key === "string" ? key : key === undefined ? undefined : String(key);
    const failure = (kind: StorageError["kind"], reason: string) =>
      new StorageError(this.name, operation, shown, kind, reason, { cause: error });
    if (error instanceof Refused || error instanceof StorageFault) {
      return failure(error.kind, error.message);
    }
    const message = error instanceof Error ? error.message : String(error);
    return failure("io", message);
  }
}

// A key or an option refused by the core, before any I/O. Not a TypeError: fetch throws those too,
// for a connection refused or dropped, which is no fault of the caller's arguments.
class Refused extends Error {
  readonly kind: "key" | "option";

  constructor(kind: "key" | "option", message: string) {
    super(message);
    this.kind = kind;
  }
}

// What `check` returns, its TypeError (an argument's checks throw those) made a Refused of `kind`.
function refused<T>(kind: "key" | "option", check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw error instanceof TypeError ? new Refused(kind, error.message) : error;
  }
}

/** A body as a driver takes it: bytes in hand, or a stream and its size where known. */
interface DriverBody {
  readonly bytes?: Uint8Array | undefined;
  /** A stream, or a large Blob (an upload's file on the disk), which a store sends in slices. */
  readonly stream?: ReadableStream<Uint8Array> | Blob | undefined;
  readonly size?: number | undefined;
  /** Its media type, when none is given. */
  readonly type: string;
}

async function bodyOf(body: StorageBody): Promise<DriverBody> {
  const octets = "application/octet-stream";
  if (typeof body === "string") {
    const bytes = new TextEncoder().encode(body);
    return { bytes, size: bytes.length, type: "text/plain; charset=utf-8" };
  }
  if (body instanceof Uint8Array) return { bytes: body, size: body.length, type: octets };
  if (body instanceof ArrayBuffer) {
    return { bytes: new Uint8Array(body), size: body.byteLength, type: octets };
  }
  if (body instanceof Blob) {
    // A client names an upload's type: one that is no media type is not worth refusing it for.
    const type = body.type.length <= 256 && MEDIA_TYPE_SHAPE.test(body.type) ? body.type : octets;
    if (body.size <= WHOLE_BLOB_BYTES) {
      const bytes = new Uint8Array(await body.arrayBuffer());
      return { bytes, size: bytes.length, type };
    }
    return { stream: body, size: body.size, type };
  }
  if (body instanceof ReadableStream) return { stream: body, type: octets };
  throw new Refused(
    "option",
    "a body is a ReadableStream, a Uint8Array, an ArrayBuffer, a string or a Blob, got " +
      (body === null ? "null" : typeof body),
  );
}

// `stream`, counting the bytes that pass through it.
function counted(
  stream: ReadableStream<Uint8Array>,
  count: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        count(chunk.length);
        controller.enqueue(chunk);
      },
    }),
  );
}
