// An R2 bucket binding kept in memory, with the rules of R2's that the driver leans on: every part
// of a multipart upload but the last of one size, `onlyIf` with `If-None-Match: *`, ranges, cursors.
// For the R2 driver's unit tests: workerd has no R2 store of its own (see docs/storage.md).
import { Buffer } from "node:buffer";
import type {
  R2Bucket,
  R2MultipartUpload,
  R2Object,
  R2ObjectBody,
} from "../../src/storage/r2_driver.ts";

interface Kept {
  readonly object: R2Object;
  readonly bytes: Uint8Array;
}

export class MemoryR2Bucket implements R2Bucket {
  readonly objects = new Map<string, Kept>();
  /** Uploads in parts begun and neither completed nor aborted. */
  readonly openUploads = new Set<string>();
  #version = 0;

  #keep(key: string, bytes: Uint8Array, options?: Parameters<R2Bucket["put"]>[2]): R2Object {
    const object: R2Object = {
      key,
      size: bytes.length,
      httpEtag: `"r2-${++this.#version}"`,
      uploaded: new Date(),
      httpMetadata: { contentType: options?.httpMetadata?.contentType },
      customMetadata: { ...options?.customMetadata },
    };
    this.objects.set(key, { object, bytes });
    return object;
  }

  head(key: string): Promise<R2Object | null> {
    return Promise.resolve(this.objects.get(key)?.object ?? null);
  }

  get(
    key: string,
    options?: { range?: { offset: number; length?: number } },
  ): Promise<R2ObjectBody | null> {
    const kept = this.objects.get(key);
    if (kept === undefined) return Promise.resolve(null);
    const { offset = 0, length = kept.bytes.length - offset } = options?.range ?? {};
    if (offset > kept.bytes.length) return Promise.reject(new RangeError("InvalidRange"));
    const bytes = kept.bytes.slice(offset, offset + length);
    return Promise.resolve({
      ...kept.object,
      body: new Response(bytes).body as ReadableStream<Uint8Array>,
      range: { offset, length: bytes.length },
    });
  }

  put(
    key: string,
    value: ReadableStream<Uint8Array> | Uint8Array | null,
    options?: Parameters<R2Bucket["put"]>[2],
  ): Promise<R2Object | null> {
    if (value instanceof ReadableStream) {
      return Promise.reject(new TypeError("a stream needs a known length"));
    }
    if (options?.onlyIf?.get("if-none-match") === "*" && this.objects.has(key)) {
      return Promise.resolve(null);
    }
    return Promise.resolve(this.#keep(key, value ?? new Uint8Array(0), options));
  }

  delete(keys: string | string[]): Promise<void> {
    for (const key of [keys].flat()) this.objects.delete(key);
    return Promise.resolve();
  }

  list(options: Parameters<R2Bucket["list"]>[0] = {}) {
    const keys = [...this.objects.keys()].filter((key) => key.startsWith(options.prefix ?? ""))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const from = options.cursor === undefined ? 0 : Number(options.cursor);
    const limit = options.limit ?? 1000;
    const page = keys.slice(from, from + limit);
    const truncated = from + limit < keys.length;
    return Promise.resolve({
      objects: page.map((key) => (this.objects.get(key) as Kept).object),
      truncated,
      ...(truncated ? { cursor: String(from + limit) } : {}),
    });
  }

  createMultipartUpload(
    key: string,
    options?: Parameters<R2Bucket["createMultipartUpload"]>[1],
  ): Promise<R2MultipartUpload> {
    const id = `upload-${++this.#version}`;
    this.openUploads.add(id);
    const parts = new Map<number, Uint8Array>();
    const upload: R2MultipartUpload = {
      uploadPart: async (partNumber, value) => {
        const bytes = value instanceof Blob
          ? new Uint8Array(await value.arrayBuffer())
          : value.slice();
        parts.set(partNumber, bytes);
        return { partNumber, etag: `part-${partNumber}` };
      },
      complete: (given) => {
        const sizes = given.map(({ partNumber }) => (parts.get(partNumber) as Uint8Array).length);
        if (sizes.slice(0, -1).some((size) => size !== sizes[0])) {
          return Promise.reject(new Error("all non-trailing parts must have the same length"));
        }
        this.openUploads.delete(id);
        const whole = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
        let at = 0;
        for (const { partNumber } of given) {
          whole.set(parts.get(partNumber) as Uint8Array, at);
          at += (parts.get(partNumber) as Uint8Array).length;
        }
        return Promise.resolve(this.#keep(key, whole, options));
      },
      abort: () => {
        this.openUploads.delete(id);
        return Promise.resolve();
      },
    };
    return Promise.resolve(upload);
  }
}
