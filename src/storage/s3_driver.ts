// The S3 store: each operation of StorageDriver as the S3 REST API's (signed by aws4fetch, over
// fetch only, so the same code runs on Deno, Bun, Node and workerd), and S3's answers in the
// contract's words. Works with S3-compatible stores (S3Proxy, MinIO, R2's S3 API) through
// `endpoint` and `pathStyle`.
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { shownValue } from "../shown_value.ts";
import type {
  ByteRange,
  DriverPut,
  ListedObject,
  ListPage,
  ObjectBody,
  ObjectInfo,
  StorageDriver,
} from "./storage_driver.ts";
import { StorageFault } from "./storage_driver.ts";
import { prefixProblem } from "./storage_key.ts";
import { metadataHeaders, metadataOf } from "./s3_metadata.ts";
import {
  BlobParts,
  conditional,
  existing,
  type Part,
  PartReader,
  type PartSource,
  type PartsUploaded,
  uploadInParts,
} from "./s3_multipart.ts";
import { type S3Reply, S3Transport } from "./s3_transport.ts";
import { childText, type XmlElement } from "./s3_xml.ts";

/** Where an S3 store is and who it signs as. */
export interface S3Settings {
  /** The bucket's name. */
  readonly bucket: string;
  /** Its region (`us-east-1`; `auto` for R2), which the signature names. */
  readonly region: string;
  /** The S3 API's URL: `https://s3.<region>.amazonaws.com` when left out. */
  readonly endpoint?: string | undefined;
  /** Whether the bucket is the path's first segment (S3Proxy, MinIO) or the host's (AWS). */
  readonly pathStyle: boolean;
  /** The access key's id (shown in no message). */
  readonly accessKeyId: string;
  /** The secret access key (shown in no message). */
  readonly secretAccessKey: string;
  /** The session token of temporary credentials. */
  readonly sessionToken?: string | undefined;
  /** `""`, or a prefix ending with `/` put before every key (and taken off those listed). */
  readonly prefix: string;
  /** How long a request may wait for its answer's head, each try, in milliseconds. */
  readonly timeoutMs: number;
  /** The fetch to send with: the global one when left out. */
  readonly fetch?: typeof fetch | undefined;
}

/** The longest a presigned URL may last: SigV4's 7 days. */
export const MAX_SIGNED_URL_SECONDS = 604_800;

/**
 * A {@linkcode StorageDriver} over an S3 bucket. A body of known size up to 8 MiB (or a stream
 * that ends by then) is one PutObject; a longer or unsized stream a multipart upload of 8 MiB
 * parts, two in flight, aborted at S3 when it fails. Requests whose body is in hand are sent again
 * when S3 answers 5xx or 429, or sends nothing within `timeoutMs` (4 times at most, waiting 250 ms
 * then twice as long each time), then fail `unavailable`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { S3Driver } from "./s3_driver.ts";
 *
 * const driver = new S3Driver({
 *   bucket: "uploads",
 *   region: "eu-west-1",
 *   pathStyle: false,
 *   accessKeyId: "AKIDEXAMPLE",
 *   secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
 *   prefix: "app/",
 *   timeoutMs: 10_000,
 * });
 * const url = new URL(await driver.signedUrl("a b/ü.txt", "GET", 60));
 * assert.equal(url.host, "uploads.s3.eu-west-1.amazonaws.com");
 * assert.equal(url.pathname, "/app/a%20b/%C3%BC.txt");
 * assert.equal(url.searchParams.get("X-Amz-Expires"), "60");
 * ```
 */
export class S3Driver implements StorageDriver {
  /** What kind of store. */
  readonly kind: "s3" = "s3";
  readonly #transport: S3Transport;
  readonly #prefix: string;

  /** Checks `settings` (a `TypeError` names what is wrong); sends nothing yet. */
  constructor(settings: S3Settings) {
    const endpoint = checkSettings(settings);
    const { bucket, region, pathStyle, accessKeyId, secretAccessKey, sessionToken } = settings;
    const given = settings.fetch;
    this.#transport = new S3Transport({
      bucket,
      region,
      endpoint,
      pathStyle,
      accessKeyId,
      secretAccessKey,
      sessionToken,
      timeoutMs: settings.timeoutMs,
      // Called as a function of its own: workerd refuses a fetch detached from its global.
      fetch: given ?? ((input, init) => fetch(input, init)),
    });
    this.#prefix = settings.prefix;
  }

  /** Writes the object: one PutObject, or a multipart upload for a long or unsized stream. */
  put(put: DriverPut): Promise<ObjectInfo> {
    const { body } = put;
    if (body instanceof Uint8Array) return this.#putBytes(put, body);
    return this.#putParts(
      put,
      (signal) =>
        body instanceof Blob ? new BlobParts(body) : new PartReader(body, put.size, signal),
    );
  }

  /** The object or its range; `null` when no object has the key. */
  async get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    const what = "GetObject";
    const reply = await this.#transport.send({
      method: "GET",
      key: this.#prefix + key,
      headers: range === undefined ? {} : { range: rangeHeader(range) },
      retry: true,
      answer: "stream",
      what,
    });
    if (reply.status === 404 && reply.code !== "NoSuchBucket") return null;
    if (reply.status === 416 && range !== undefined) {
      return await this.#pastTheEnd(key, range, reply);
    }
    if (!reply.ok) throw this.#transport.fault(reply, what);
    const body = reply.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    try {
      return { ...bodyInfo(key, reply, range), body };
    } catch (error) {
      await body.cancel().catch(() => {});
      throw error;
    }
  }

  /** What S3 knows of the object (HeadObject); `null` when no object has the key. */
  async head(key: string): Promise<ObjectInfo | null> {
    const what = "HeadObject";
    const reply = await this.#transport.send({
      method: "HEAD",
      key: this.#prefix + key,
      retry: true,
      answer: "none",
      what,
    });
    // A HEAD's 404 has no body to tell a missing bucket apart: check() is what says that.
    if (reply.status === 404) return null;
    if (!reply.ok) throw this.#transport.fault(reply, what);
    return objectInfo(key, reply.headers, contentLength(reply.headers, what), what);
  }

  /** Deletes the object; a missing one is no error. */
  async delete(key: string): Promise<void> {
    const what = "DeleteObject";
    const reply = await this.#transport.send({
      method: "DELETE",
      key: this.#prefix + key,
      retry: true,
      answer: "none",
      what,
    });
    if (reply.ok || (reply.status === 404 && reply.code !== "NoSuchBucket")) return;
    throw this.#transport.fault(reply, what);
  }

  /** Copies `from` to `to` in the bucket (CopyObject, its metadata with it); `false` without `from`. */
  async copy(from: string, to: string): Promise<boolean> {
    // S3 refuses to copy an object onto itself when nothing of it changes: there is nothing to do.
    if (from === to) return (await this.head(from)) !== null;
    const what = "CopyObject";
    const reply = await this.#transport.send({
      method: "PUT",
      key: this.#prefix + to,
      headers: {
        "x-amz-copy-source": this.#transport.copySource(this.#prefix + from),
        "x-amz-metadata-directive": "COPY",
      },
      retry: true,
      answer: "xml",
      what,
    });
    if (reply.status === 404 && reply.code !== "NoSuchBucket") return false;
    if (!reply.ok) throw this.#transport.fault(reply, what);
    return true;
  }

  /** One page of the keys under `prefix` (ListObjectsV2); `start` is a page's `next`. */
  // A page of folders only (a file system behind the API) has no object and a token: the core
  // reads on, and stops a store that hands a token back.
  async list(prefix: string, limit: number, start?: string): Promise<ListPage> {
    const what = "ListObjectsV2";
    const query: [string, string][] = [
      ["list-type", "2"],
      ["max-keys", `${limit}`],
      ["prefix", this.#prefix + prefix],
    ];
    if (start !== undefined) query.push(["continuation-token", start]);
    const reply = await this.#transport.send({
      method: "GET",
      query,
      retry: true,
      answer: "xml",
      what,
    });
    if (!reply.ok || reply.xml === undefined) throw this.#transport.fault(reply, what);
    return listPage(reply.xml, this.#prefix);
  }

  /** A presigned URL granting `method` on the key for `expiresSeconds` (1 to 604,800). */
  signedUrl(key: string, method: "GET" | "PUT", expiresSeconds: number): Promise<string> {
    if (
      !Number.isInteger(expiresSeconds) || expiresSeconds < 1 ||
      expiresSeconds > MAX_SIGNED_URL_SECONDS
    ) {
      const range = `1 to ${MAX_SIGNED_URL_SECONDS} (7 days)`;
      return Promise.reject(
        new StorageFault(
          "invalid",
          `a signed URL lasts a whole number of seconds from ${range}, got ${
            shownValue(expiresSeconds)
          }`,
        ),
      );
    }
    return this.#transport.presign(this.#prefix + key, method, expiresSeconds);
  }

  /** Throws unless the bucket answers (HeadBucket): `unavailable` when there is none. */
  async check(): Promise<void> {
    const what = "HeadBucket";
    const reply = await this.#transport.send({ method: "HEAD", retry: true, answer: "none", what });
    if (reply.status === 404) {
      throw new StorageFault(
        "unavailable",
        `${what}: no bucket ${this.#transport.bucketName} (${reply.reason})`,
      );
    }
    if (!reply.ok) throw this.#transport.fault(reply, what);
  }

  // A body in hand: one PutObject, sent again when S3 could not serve it now.
  async #putBytes(put: DriverPut, bytes: Part): Promise<ObjectInfo> {
    const what = "PutObject";
    if (put.ifNoneMatch) await this.#refuseExisting(put.key, what);
    const reply = await this.#transport.send({
      method: "PUT",
      key: this.#prefix + put.key,
      headers: { ...writeHeaders(put), ...conditional(put.ifNoneMatch) },
      body: bytes,
      retry: true,
      answer: "none",
      signal: put.signal,
      what,
    });
    if (reply.status === 412) throw existing(what, reply);
    if (!reply.ok) throw this.#transport.fault(reply, what);
    const size = bytes instanceof Blob ? bytes.size : bytes.length;
    return written(put, size, reply.headers.get("etag"), reply.headers);
  }

  // A stream, or a large Blob: sent whole when it ends within a part, else uploaded in parts as
  // it is read (a Blob's parts are its slices).
  async #putParts(
    put: DriverPut,
    partsOf: (signal: AbortSignal) => PartSource,
  ): Promise<ObjectInfo> {
    const controller = new AbortController();
    const { signal } = put;
    const giveUp = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", giveUp, { once: true });
    const parts = partsOf(controller.signal);
    try {
      if (signal?.aborted) giveUp();
      const first = await firstParts(parts);
      if (first.length < 2) return await this.#putBytes(put, first[0] ?? new Uint8Array(0));
      if (put.ifNoneMatch) await this.#refuseExisting(put.key, "CreateMultipartUpload");
      const done = await uploadInParts({
        transport: this.#transport,
        key: this.#prefix + put.key,
        headers: writeHeaders(put),
        ifNoneMatch: put.ifNoneMatch,
        parts,
        controller,
      }, first);
      return uploaded(put, done);
    } catch (error) {
      // The source is cancelled (PartReader follows the controller), whatever failed.
      controller.abort(error);
      throw error;
    } finally {
      signal?.removeEventListener("abort", giveUp);
    }
  }

  // S3 takes `If-None-Match: *` (412 when the key has an object), but S3Proxy ignores it and
  // writes anyway: a HEAD first makes the refusal hold there too (but for a write between the two),
  // and spares the upload of a large body S3 would refuse at its end.
  async #refuseExisting(key: string, what: string): Promise<void> {
    if ((await this.head(key)) !== null) throw existing(what);
  }

  // A 416: past the end, or at byte 0 of an empty object, which has no byte to start at but whose
  // (empty) body the contract answers.
  async #pastTheEnd(key: string, range: ByteRange, reply: S3Reply): Promise<ObjectBody | null> {
    const total = /^bytes \*\/(\d+)$/.exec(reply.headers.get("content-range") ?? "")?.[1];
    if (range.offset === 0 && (total === undefined || total === "0")) {
      const whole = await this.get(key);
      if (whole === null || whole.size === 0) return whole;
      await whole.body.cancel().catch(() => {});
    }
    const size = total === undefined ? "" : ` of ${total} bytes`;
    throw new StorageFault(
      "range",
      `GetObject: the range starts at byte ${range.offset}, past the end of the object${size}`,
    );
  }
}

// Checks the settings before any request, naming what is wrong (never a credential's value), and
// returns the endpoint.
function checkSettings(settings: S3Settings): URL {
  const wrong = (what: string) => new TypeError(`S3Settings: ${what}`);
  const { bucket, region, pathStyle, prefix, timeoutMs } = settings;
  // A virtual-hosted bucket is a DNS label of the host; a path-style one may be a legacy name.
  const bucketForm = pathStyle ? /^[A-Za-z0-9._-]{1,255}$/ : /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
  if (typeof bucket !== "string" || !bucketForm.test(bucket)) {
    throw wrong(`bucket is no bucket name, got ${shownValue(bucket)}`);
  }
  if (typeof region !== "string" || !/^[a-z0-9-]{1,64}$/.test(region)) {
    throw wrong(`region is a region's name (us-east-1), got ${shownValue(region)}`);
  }
  for (const name of ["accessKeyId", "secretAccessKey"] as const) {
    if (typeof settings[name] !== "string" || settings[name] === "") {
      throw wrong(`${name} is a string, not empty`);
    }
  }
  if (settings.sessionToken !== undefined && typeof settings.sessionToken !== "string") {
    throw wrong("sessionToken is a string");
  }
  if (typeof prefix !== "string" || (prefix !== "" && !prefix.endsWith("/"))) {
    throw wrong(`prefix is "" or ends with "/", got ${shownValue(prefix)}`);
  }
  const problem = prefixProblem(prefix);
  if (problem !== undefined) throw wrong(`prefix ${shownValue(prefix)}: ${problem}`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_DURATION_MS) {
    throw wrong(`timeoutMs is a whole number of milliseconds, 1 or more, got ${timeoutMs}`);
  }
  if (settings.fetch !== undefined && typeof settings.fetch !== "function") {
    throw wrong("fetch is a function");
  }
  return checkEndpoint(settings.endpoint ?? `https://s3.${region}.amazonaws.com`);
}

function checkEndpoint(given: string): URL {
  const wrong = `S3Settings: endpoint is an http(s) URL with no query, credentials nor fragment,`;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new TypeError(`${wrong} got ${shownValue(given)}`);
  }
  const plain = (url.protocol === "https:" || url.protocol === "http:") && url.search === "" &&
    url.hash === "" && url.username === "" && url.password === "" &&
    // A base path is signed as it is sent: only characters no encoding changes.
    /^(?:\/[A-Za-z0-9._~-]+)*\/?$/.test(url.pathname);
  if (!plain) throw new TypeError(`${wrong} got ${shownValue(url.origin + url.pathname)}`);
  return url;
}

// What every write sends: the media type and the metadata.
function writeHeaders(put: DriverPut): Record<string, string> {
  return { "content-type": put.contentType, ...metadataHeaders(put.metadata) };
}

// The first two parts of a stream, in an array the upload empties as it sends them.
async function firstParts(parts: PartSource): Promise<Part[]> {
  const first: Part[] = [];
  while (first.length < 2) {
    const part = await parts.next();
    if (part === null) break;
    first.push(part);
  }
  return first;
}

function rangeHeader({ offset, length }: ByteRange): string {
  return `bytes=${offset}-${length === undefined ? "" : offset + length - 1}`;
}

function invalid(message: string): StorageFault {
  return new StorageFault("invalid", message);
}

// An entity tag as the contract has it, quoted: S3 quotes its own, some compatible stores do not.
function quoted(etag: string | null | undefined, what: string): string {
  if (etag === null || etag === undefined || etag === "") {
    throw invalid(`${what}: S3 answered no ETag`);
  }
  return etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`;
}

function contentLength(headers: Headers, what: string): number {
  const length = headers.get("content-length") ?? "";
  if (!/^\d{1,16}$/.test(length)) {
    throw invalid(`${what}: S3 answered a Content-Length of ${shownValue(length)}`);
  }
  return Number(length);
}

function httpDate(headers: Headers, name: string, what: string): Date {
  const date = new Date(headers.get(name) ?? "");
  if (Number.isNaN(date.getTime())) {
    throw invalid(`${what}: S3 answered a ${name} of ${shownValue(headers.get(name))}`);
  }
  return date;
}

function objectInfo(key: string, headers: Headers, size: number, what: string): ObjectInfo {
  return {
    key,
    size,
    contentType: headers.get("content-type") ?? "application/octet-stream",
    etag: quoted(headers.get("etag"), what),
    lastModified: httpDate(headers, "last-modified", what),
    metadata: metadataOf(headers),
  };
}

// What a GET answered: the whole object (200), or the range asked for (206, its Content-Range).
function bodyInfo(
  key: string,
  reply: S3Reply,
  asked: ByteRange | undefined,
): Omit<ObjectBody, "body"> {
  const what = "GetObject";
  const { headers } = reply;
  if (reply.status === 206) {
    const given = headers.get("content-range") ?? "";
    const [, first, last, total] = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(given)?.map(Number) ?? [];
    // The range asked for, to the object's end at most: a longer one would not fit the response
    // planned on it (its Content-Length).
    const end = asked === undefined ? 0 : Math.min(asked.offset + (asked.length ?? total), total);
    if (asked === undefined || first !== asked.offset || last !== end - 1 || last >= total) {
      throw invalid(`${what}: S3 answered a Content-Range of ${shownValue(given)}`);
    }
    return {
      ...objectInfo(key, headers, total, what),
      range: { offset: first, length: last - first + 1 },
    };
  }
  const size = contentLength(headers, what);
  // A store that ignores Range answers 200: right only when the range was the whole object.
  if (asked !== undefined && (asked.offset !== 0 || (asked.length ?? size) < size)) {
    throw invalid(`${what}: S3 answered the whole object to a request for a range`);
  }
  const range = asked === undefined || size === 0 ? undefined : { offset: 0, length: size };
  return { ...objectInfo(key, headers, size, what), range };
}

// What a write made, from what was sent and S3's answer: its Date is when it was written.
function written(put: DriverPut, size: number, etag: string | null, headers: Headers): ObjectInfo {
  const date = new Date(headers.get("date") ?? "");
  return {
    key: put.key,
    size,
    contentType: put.contentType,
    etag: quoted(etag, "PutObject"),
    lastModified: Number.isNaN(date.getTime())
      ? new Date(Math.floor(Date.now() / 1000) * 1000)
      : date,
    metadata: { ...put.metadata },
  };
}

function uploaded(put: DriverPut, done: PartsUploaded): ObjectInfo {
  return written(put, done.size, done.etag, done.headers);
}

// One page of ListObjectsV2, the settings' prefix taken off each key.
function listPage(root: XmlElement, prefix: string): ListPage {
  const what = "ListObjectsV2";
  if (root.name !== "ListBucketResult") {
    throw invalid(`${what}: S3 answered <${shownValue(root.name)}>, not a listing`);
  }
  const objects: ListedObject[] = [];
  for (const entry of root.children) {
    if (entry.name !== "Contents") continue;
    const full = childText(entry, "Key") ?? "";
    const key = full.slice(prefix.length);
    // A "folder" (a console's, or a directory S3Proxy's filesystem store lists): no object's key.
    if (!full.startsWith(prefix) || key === "" || key.endsWith("/")) continue;
    const size = childText(entry, "Size") ?? "";
    const lastModified = new Date(childText(entry, "LastModified") ?? "");
    if (!/^\d{1,16}$/.test(size) || Number.isNaN(lastModified.getTime())) {
      throw invalid(`${what}: S3 listed ${shownValue(full)} with no size or date`);
    }
    const etag = quoted(childText(entry, "ETag"), what);
    objects.push({ key, size: Number(size), etag, lastModified });
  }
  if (childText(root, "IsTruncated") !== "true") return { objects };
  const next = childText(root, "NextContinuationToken") ?? "";
  if (next === "") throw invalid(`${what}: S3 said the listing goes on, but not where`);
  return { objects, next };
}
