// The one narrow interface every store is written against (golang-migrate's driver shape): the
// core (`ObjectStorage`) checks keys and options, wraps errors and plans responses; a driver only
// moves bytes and metadata, and says what a fault was in `StorageFault`'s few words.

/** What a store knows of one object, without its bytes. */
export interface ObjectInfo {
  /** The key, as given. */
  readonly key: string;
  /** Its size in bytes. */
  readonly size: number;
  /** Its media type (`application/octet-stream` when none was given). */
  readonly contentType: string;
  /** A strong entity tag, quoted (`"…"`), as the store made it. */
  readonly etag: string;
  /** When it was last written, to the second at least. */
  readonly lastModified: Date;
  /** The app's own metadata, by lower-case name. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** One object as a listing shows it. */
export interface ListedObject {
  /** The key, as given. */
  readonly key: string;
  /** Its size in bytes. */
  readonly size: number;
  /** A strong entity tag, quoted. */
  readonly etag: string;
  /** When it was last written. */
  readonly lastModified: Date;
}

/** A part of an object: `length` bytes from `offset` (to its end when left out). */
export interface ByteRange {
  /** The first byte's index, 0 or more. */
  readonly offset: number;
  /** How many bytes, 1 or more; to the end of the object when left out. */
  readonly length?: number | undefined;
}

/** An object's bytes (all of them, or the range asked for) and what the store knows of it. */
export interface ObjectBody extends ObjectInfo {
  /** The bytes: read it or cancel it, or the connection under it stays taken. */
  readonly body: ReadableStream<Uint8Array>;
  /** The range the body holds, when one was asked for and the object was not empty. */
  readonly range?: { readonly offset: number; readonly length: number } | undefined;
}

/** What a driver is given to write one object. */
export interface DriverPut {
  /** The key, already checked. */
  readonly key: string;
  /**
   * The bytes: a stream is read once, as it comes; bytes are written as they are; a `Blob` (an
   * upload's file, on the disk) may be read again, or in slices, which a store sends as they are
   * without holding them.
   */
  readonly body: ReadableStream<Uint8Array> | Uint8Array | Blob;
  /** The body's size in bytes, when known before reading it. */
  readonly size?: number | undefined;
  /** The media type, already checked. */
  readonly contentType: string;
  /** The app's metadata, names lower-case, already checked. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Write only when no object has the key (`If-None-Match: *`): else `StorageFault("exists")`. */
  readonly ifNoneMatch: boolean;
  /** Aborted when the caller gives up: the driver stops, and leaves no object half written. */
  readonly signal?: AbortSignal | undefined;
}

/** One page of a listing: keys in UTF-8 byte order, and where the next page starts. */
export interface ListPage {
  readonly objects: readonly ListedObject[];
  /** Passed back to read the next page; absent on the last page. */
  readonly next?: string | undefined;
}

/** What kind of store: on the disk, in an S3-compatible bucket, in an R2 bucket. */
export type StoreKind = "file" | "s3" | "r2";

/** A store's bytes and metadata, which `ObjectStorage` drives. */
export interface StorageDriver {
  /** What kind of store: the `thaw.storage.kind` attribute of its metrics and spans. */
  readonly kind: StoreKind;
  /** Writes one object whole: a reader sees the old one or the new one, never a mix. */
  put(put: DriverPut): Promise<ObjectInfo>;
  /** The object (or its `range`), or `null` when no object has the key. */
  get(key: string, range?: ByteRange): Promise<ObjectBody | null>;
  /** What the store knows of the object, or `null` when no object has the key. */
  head(key: string): Promise<ObjectInfo | null>;
  /** Deletes the object; deleting a missing one is no error. */
  delete(key: string): Promise<void>;
  /** Copies `from` to `to` in the store; `false` when `from` does not exist. */
  copy(from: string, to: string): Promise<boolean>;
  /** One page of the keys that start with `prefix`, at most `limit` (1 to 1,000) of them. */
  list(prefix: string, limit: number, start?: string): Promise<ListPage>;
  /** A URL that grants `method` on the key until `expires` seconds from now, where it can sign. */
  signedUrl?(key: string, method: "GET" | "PUT", expiresSeconds: number): Promise<string>;
  /** Throws when the store cannot be reached (the health check). */
  check(): Promise<void>;
  /** Lets go of what it holds (connections, handles). */
  close?(): void;
}

/** What kind of fault a driver met, so that the core can word it and the caller act on it. */
export type StorageFaultKind =
  | "exists" // ifNoneMatch, and the key had an object
  | "range" // the range starts past the object's end
  | "denied" // the store refused the credentials or the operation
  | "unavailable" // the store did not answer, or answered it could not serve now
  | "invalid" // the store refused what it was sent
  | "aborted"; // the caller's signal, or the body's stream, gave up

/** A fault a driver met, in the core's words; anything else a driver throws is a bug or I/O. */
export class StorageFault extends Error {
  /** What kind of fault. */
  readonly kind: StorageFaultKind;

  constructor(kind: StorageFaultKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StorageFault";
    this.kind = kind;
  }
}
