// A driver that keeps objects in a Map, and records every call: for the core's unit tests, which
// check what reaches a driver and what comes back of it. The conformance suite runs the real ones.
import type {
  ByteRange,
  DriverPut,
  ListPage,
  ObjectBody,
  ObjectInfo,
  StorageDriver,
} from "../../src/storage/storage_driver.ts";
import { StorageFault } from "../../src/storage/storage_driver.ts";
import { compareKeys } from "../../src/storage/storage_key.ts";

/** One stored object. */
interface Stored {
  readonly info: ObjectInfo;
  readonly bytes: Uint8Array;
}

export class MemoryDriver implements StorageDriver {
  readonly kind = "file" as const;
  readonly objects = new Map<string, Stored>();
  readonly calls: string[] = [];
  #version = 0;
  /** Runs before each `get`, to change the object between a head and a get. */
  beforeGet: (key: string) => void = () => {};

  async put(put: DriverPut): Promise<ObjectInfo> {
    this.calls.push(`put ${put.key}`);
    const bytes = put.body instanceof Uint8Array
      ? put.body.slice()
      : new Uint8Array(await new Response(put.body).arrayBuffer());
    if (put.ifNoneMatch && this.objects.has(put.key)) throw new StorageFault("exists", "it exists");
    return this.store(put.key, bytes, put.contentType, put.metadata);
  }

  /** Stores `bytes` as `key`, with a new entity tag. */
  store(
    key: string,
    bytes: Uint8Array,
    contentType = "application/octet-stream",
    metadata = {},
  ): ObjectInfo {
    const info: ObjectInfo = {
      key,
      size: bytes.length,
      contentType,
      etag: `"v${++this.#version}"`,
      lastModified: new Date(Date.UTC(2026, 0, 1, 0, 0, this.#version)),
      metadata,
    };
    this.objects.set(key, { info, bytes });
    return info;
  }

  get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    this.calls.push(`get ${key}`);
    this.beforeGet(key);
    const found = this.objects.get(key);
    if (found === undefined) return Promise.resolve(null);
    const { info, bytes } = found;
    if (range === undefined || bytes.length === 0) {
      return Promise.resolve({
        ...info,
        body: new Response(bytes as Uint8Array<ArrayBuffer>).body as ReadableStream<Uint8Array>,
      });
    }
    if (range.offset >= bytes.length) {
      return Promise.reject(new StorageFault("range", "past the end"));
    }
    const end = Math.min(bytes.length, range.offset + (range.length ?? bytes.length));
    return Promise.resolve({
      ...info,
      body: new Response(bytes.slice(range.offset, end)).body as ReadableStream<Uint8Array>,
      range: { offset: range.offset, length: end - range.offset },
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    this.calls.push(`head ${key}`);
    return Promise.resolve(this.objects.get(key)?.info ?? null);
  }

  delete(key: string): Promise<void> {
    this.calls.push(`delete ${key}`);
    this.objects.delete(key);
    return Promise.resolve();
  }

  copy(from: string, to: string): Promise<boolean> {
    this.calls.push(`copy ${from} ${to}`);
    const found = this.objects.get(from);
    if (found === undefined) return Promise.resolve(false);
    this.store(to, found.bytes, found.info.contentType, found.info.metadata);
    return Promise.resolve(true);
  }

  list(prefix: string, limit: number, start?: string): Promise<ListPage> {
    this.calls.push(`list ${prefix} ${limit} ${start ?? ""}`);
    const keys = [...this.objects.keys()].filter((key) => key.startsWith(prefix)).sort(compareKeys);
    const after = start === undefined ? keys : keys.filter((key) => compareKeys(key, start) > 0);
    const page = after.slice(0, limit);
    const objects = page.map((key) => {
      const { size, etag, lastModified } = (this.objects.get(key) as Stored).info;
      return { key, size, etag, lastModified };
    });
    const last = page.at(-1);
    return Promise.resolve(
      after.length > limit && last !== undefined ? { objects, next: last } : { objects },
    );
  }

  check(): Promise<void> {
    this.calls.push("check");
    return Promise.resolve();
  }
}
