// A store in Cloudflare R2, through a Worker's bucket binding: the binding is read from the `env`
// each event brings (`R2Bindings` wraps the app's handlers), so the driver looks it up at each call.
// Loaded only for an `r2:` store.
import type { EdgeHandlers } from "../edge_events.ts";
import { shownValue } from "../shown_value.ts";
import { BlobParts, PartReader, type PartSource } from "./s3_multipart.ts";
import {
  type ByteRange,
  type DriverPut,
  type ListPage,
  type ObjectBody,
  type ObjectInfo,
  type StorageDriver,
  StorageFault,
} from "./storage_driver.ts";

/** What this driver reads of an R2 object (the binding's `R2Object`). */
export interface R2Object {
  readonly key: string;
  readonly size: number;
  readonly httpEtag: string;
  readonly uploaded: Date;
  readonly httpMetadata?: { readonly contentType?: string | undefined } | undefined;
  readonly customMetadata?: Readonly<Record<string, string>> | undefined;
  readonly range?: { readonly offset?: number; readonly length?: number } | undefined;
}

/** An R2 object with its bytes (`R2ObjectBody`). */
export interface R2ObjectBody extends R2Object {
  readonly body: ReadableStream<Uint8Array>;
}

/** An upload in parts (`R2MultipartUpload`). */
export interface R2MultipartUpload {
  uploadPart(
    partNumber: number,
    value: Uint8Array | Blob,
  ): Promise<{ partNumber: number; etag: string }>;
  complete(parts: { partNumber: number; etag: string }[]): Promise<R2Object>;
  abort(): Promise<void>;
}

/** The part of the binding's `R2Bucket` this driver calls. */
export interface R2Bucket {
  head(key: string): Promise<R2Object | null>;
  get(
    key: string,
    options?: { range?: { offset: number; length?: number } },
  ): Promise<R2ObjectBody | R2Object | null>;
  put(
    key: string,
    value: ReadableStream<Uint8Array> | Uint8Array | null,
    options?: {
      httpMetadata?: { contentType: string };
      customMetadata?: Record<string, string>;
      onlyIf?: Headers;
    },
  ): Promise<R2Object | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: {
    prefix?: string;
    limit?: number;
    cursor?: string;
    include?: ("httpMetadata" | "customMetadata")[];
  }): Promise<{ objects: R2Object[]; truncated: boolean; cursor?: string }>;
  createMultipartUpload(
    key: string,
    options?: { httpMetadata?: { contentType: string }; customMetadata?: Record<string, string> },
  ): Promise<R2MultipartUpload>;
}

/** The `env` of the event being handled, kept for the R2 stores to find their bindings in. */
export class R2Bindings {
  #env: Readonly<Record<string, unknown>> | undefined;

  /** The app's handlers, each keeping its event's `env` first. */
  readonly handlers = (app: EdgeHandlers): Partial<EdgeHandlers> => {
    const keep = (env: unknown) => {
      if (typeof env === "object" && env !== null) this.#env = env as Record<string, unknown>;
    };
    const wrapped: Partial<EdgeHandlers> = {
      fetch: (request, env, ctx) => {
        keep(env);
        return app.fetch(request, env, ctx);
      },
      scheduled: (controller, env, ctx) => {
        keep(env);
        return app.scheduled(controller, env, ctx);
      },
    };
    const { queue } = app as { queue?: EdgeHandlers["queue"] };
    if (queue !== undefined) {
      return {
        ...wrapped,
        queue: (batch, env, ctx) => {
          keep(env);
          return queue(batch, env, ctx);
        },
      } as Partial<EdgeHandlers>;
    }
    return wrapped;
  };

  /** Keeps `env` (for a Worker that calls the app's handlers with an `env` of its own making). */
  bind(env: Readonly<Record<string, unknown>>): void {
    this.#env = env;
  }

  /** The bucket bound as `name`; an error naming it when the Worker has no such binding. */
  bucket(name: string): R2Bucket {
    const bucket = this.#env?.[name];
    if (typeof (bucket as R2Bucket | undefined)?.createMultipartUpload !== "function") {
      throw new StorageFault(
        "unavailable",
        this.#env === undefined
          ? `no R2 binding yet: the bindings come with the Worker's first event (${name})`
          : `the Worker has no R2 bucket bound as ${shownValue(name)}`,
      );
    }
    return bucket as R2Bucket;
  }
}

// A body up to this size is sent in one put; longer, or of unknown size, in parts.
const WHOLE_BYTES = 8 * 1024 * 1024;

/** A store in the R2 bucket bound as `binding`. */
export class R2Driver implements StorageDriver {
  readonly kind = "r2" as const;
  readonly #binding: string;
  readonly #bindings: R2Bindings;

  constructor(binding: string, bindings: R2Bindings) {
    this.#binding = binding;
    this.#bindings = bindings;
  }

  get #bucket(): R2Bucket {
    return this.#bindings.bucket(this.#binding);
  }

  async put(put: DriverPut): Promise<ObjectInfo> {
    const bucket = this.#bucket;
    const options = {
      httpMetadata: { contentType: put.contentType },
      customMetadata: { ...put.metadata },
    };
    if (put.ifNoneMatch && await bucket.head(put.key) !== null) throw exists(put.key);
    if (put.body instanceof Uint8Array || (put.size !== undefined && put.size <= WHOLE_BYTES)) {
      const bytes = put.body instanceof Uint8Array
        ? put.body
        : new Uint8Array(await new Response(put.body).arrayBuffer());
      put.signal?.throwIfAborted();
      const written = await bucket.put(put.key, bytes, {
        ...options,
        ...(put.ifNoneMatch ? { onlyIf: new Headers({ "if-none-match": "*" }) } : {}),
      });
      if (written === null) throw exists(put.key);
      return infoOf(written);
    }
    return infoOf(await this.#putInParts(bucket, put, options));
  }

  // R2 wants every part but the last of one size: PartReader's are.
  async #putInParts(
    bucket: R2Bucket,
    put: DriverPut,
    options: Parameters<R2Bucket["createMultipartUpload"]>[1],
  ): Promise<R2Object> {
    const controller = new AbortController();
    const signal = put.signal === undefined
      ? controller.signal
      : AbortSignal.any([put.signal, controller.signal]);
    const { body } = put;
    // Cancelled, when a stream, by the signal.
    const reader: PartSource = body instanceof Blob
      ? new BlobParts(body)
      : new PartReader(body as ReadableStream<Uint8Array>, put.size, signal);
    let upload: R2MultipartUpload | undefined;
    try {
      upload = await bucket.createMultipartUpload(put.key, options);
      const parts: { partNumber: number; etag: string }[] = [];
      for (let bytes = await reader.next(); bytes !== null; bytes = await reader.next()) {
        signal.throwIfAborted();
        parts.push(await upload.uploadPart(parts.length + 1, bytes));
      }
      if (parts.length === 0) parts.push(await upload.uploadPart(1, new Uint8Array(0)));
      // R2 takes no condition on a completion: checked again just before it, which narrows the
      // race with a concurrent write to the completion's own time.
      if (put.ifNoneMatch && await bucket.head(put.key) !== null) throw exists(put.key);
      return await upload.complete(parts);
    } catch (error) {
      controller.abort(error);
      await upload?.abort().catch(() => {});
      throw signal.aborted && put.signal?.aborted
        ? new StorageFault("aborted", "the write was aborted", { cause: error })
        : error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    const bucket = this.#bucket;
    if (range !== undefined) {
      const info = await bucket.head(key);
      if (info === null) return null;
      if (info.size === 0) return this.get(key);
      if (range.offset >= info.size) {
        throw new StorageFault(
          "range",
          `the range starts at ${range.offset}, past the end (${info.size} bytes)`,
        );
      }
      const length = Math.min(range.length ?? info.size, info.size - range.offset);
      const found = await bucket.get(key, { range: { offset: range.offset, length } });
      if (found === null || !("body" in found)) return null;
      // Written again between the two, shorter: its etag tells the caller, whose response checks it.
      return { ...infoOf(found), body: found.body, range: { offset: range.offset, length } };
    }
    const found = await bucket.get(key);
    if (found === null || !("body" in found)) return null;
    return { ...infoOf(found), body: found.body };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const found = await this.#bucket.head(key);
    return found === null ? null : infoOf(found);
  }

  delete(key: string): Promise<void> {
    return this.#bucket.delete(key);
  }

  async copy(from: string, to: string): Promise<boolean> {
    // R2's binding has no copy: the bytes pass through the Worker, streamed.
    const found = await this.#bucket.get(from);
    if (found === null || !("body" in found)) return false;
    const info = infoOf(found);
    await this.put({
      key: to,
      body: found.body,
      size: info.size,
      contentType: info.contentType,
      metadata: info.metadata,
      ifNoneMatch: false,
    });
    return true;
  }

  async list(prefix: string, limit: number, start?: string): Promise<ListPage> {
    const listed = await this.#bucket.list({
      prefix,
      limit,
      ...(start === undefined ? {} : { cursor: start }),
    });
    const objects = listed.objects.map((object) => ({
      key: object.key,
      size: object.size,
      etag: object.httpEtag,
      lastModified: object.uploaded,
    }));
    return listed.truncated && listed.cursor !== undefined
      ? { objects, next: listed.cursor }
      : { objects };
  }

  async check(): Promise<void> {
    await this.#bucket.list({ limit: 1 });
  }
}

function exists(key: string): StorageFault {
  return new StorageFault("exists", `an object has the key ${shownValue(key)}`);
}

function infoOf(object: R2Object): ObjectInfo {
  return {
    key: object.key,
    size: object.size,
    contentType: object.httpMetadata?.contentType ?? "application/octet-stream",
    etag: object.httpEtag,
    lastModified: object.uploaded,
    metadata: { ...object.customMetadata },
  };
}
