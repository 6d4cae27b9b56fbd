// One request to S3, as every operation of the S3 driver sends it: its URL written as SigV4 reads
// it, signed by aws4fetch, bounded in time until its answer's head, sent again when S3 could not
// serve it now (when the request may be), and its failure said in StorageFault's words, with no
// secret in them.
import { AwsV4Signer } from "aws4fetch";
import { Backoff } from "../runtime/backoff.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { printable, shownValue } from "../shown_value.ts";
import { StorageFault } from "./storage_driver.ts";
import {
  errorIn,
  MAX_XML_BYTES,
  readXml,
  s3ErrorOf,
  S3XmlError,
  type XmlElement,
} from "./s3_xml.ts";

/** Where the transport sends and who it signs as: the driver's settings, checked. */
export interface S3Target {
  /** The bucket's name. */
  readonly bucket: string;
  /** The region the signature names. */
  readonly region: string;
  /** The endpoint: protocol, host and a base path of unreserved characters only. */
  readonly endpoint: URL;
  /** The bucket in the path (`endpoint/bucket/key`), else in the host (`bucket.endpoint`). */
  readonly pathStyle: boolean;
  /** The access key's id. */
  readonly accessKeyId: string;
  /** The secret access key. */
  readonly secretAccessKey: string;
  /** The session token of temporary credentials. */
  readonly sessionToken?: string | undefined;
  /** How long each try waits for its answer's head, in milliseconds. */
  readonly timeoutMs: number;
  /** The fetch to send with. */
  readonly fetch: typeof fetch;
}

/** A query's parameters, in order; a value of `""` sends the name alone (`?uploads`). */
export type S3Query = readonly (readonly [string, string])[];

/** One request, as an operation of the driver asks for it. */
export interface S3Request {
  /** The HTTP method. */
  readonly method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** The object's key, the settings' prefix included; none for the bucket itself. */
  readonly key?: string | undefined;
  /** The query's parameters. */
  readonly query?: S3Query | undefined;
  /** Headers to send, and sign (those SigV4 signs: `x-amz-*`, `if-none-match`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** The body, in hand: each try sends it again. */
  readonly body?: Uint8Array | Blob | undefined;
  /** Whether it may be sent again: its body is in hand, and twice does what once does. */
  readonly retry: boolean;
  /** A 2xx answer's body: returned unread, read as XML (at most 16 MiB), or read and dropped. */
  readonly answer: "stream" | "xml" | "none";
  /** The caller's: aborting it stops the request (and the wait between tries) at once. */
  readonly signal?: AbortSignal | undefined;
  /** The S3 operation, as messages name it: `GetObject`. */
  readonly what: string;
}

/** What S3 answered, once it answered something that sending again would not change. */
export interface S3Reply {
  /** The HTTP status (0 for a redirect a runtime keeps opaque). */
  readonly status: number;
  /** The answer's headers. */
  readonly headers: Headers;
  /** S3 did it: a 2xx, whose body (when read) was no `<Error>`. */
  readonly ok: boolean;
  /** A 2xx `stream` answer's body, unread: the caller reads or cancels it. */
  readonly body: ReadableStream<Uint8Array> | null;
  /** A 2xx `xml` answer's root element. */
  readonly xml?: XmlElement | undefined;
  /** A failure's S3 error code, `""` when the answer had none (a HEAD's has no body). */
  readonly code: string;
  /** A failure as a message says it: status, code and S3's message, printable, secrets masked. */
  readonly reason: string;
  /**
   * Whether an earlier try may have done what was asked before it failed: one that got a 500, a
   * 502 or a 504, or no whole answer. A 503, a 429 or a conflict came before any work.
   */
  readonly triedBefore?: boolean | undefined;
}

/** Sent again 4 times at most, waiting 250 ms, then twice as long each time, give or take. */
export const RETRIES = 4;
const BACKOFF = new Backoff({ delay: 250, multiplier: 2, jitter: 100 });

// Errors S3 answers with a 4xx or inside a 200 that mean "not now" rather than "never": SDKs send
// these again too.
const RETRY_CODES = new Set([
  "InternalError",
  "ServiceUnavailable",
  "SlowDown",
  "RequestTimeout",
  "ConditionalRequestConflict",
]);

// The slowest upload a request's timeout allows for, in bytes per ms (256 KiB/s).
const SLOWEST_UPLOAD_BYTES_PER_MS = 256;

// An error answer's body is a few hundred bytes: past this much, it is no S3 error.
const ERROR_BYTES = 64 * 1024;

/** `text` percent-encoded as SigV4's canonical URI and S3 read a path segment: RFC 3986's way. */
export function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * A key as the path of its URL: each `/`-separated segment {@linkcode rfc3986}-encoded, the `/`
 * between them kept. This is the canonical URI S3 signs, so the URL sent is the URL signed: S3
 * encodes a path once (aws4fetch decodes it and encodes it again for service `s3`, which gives
 * this back), where other services encode it twice.
 */
export function encodeKeyPath(key: string): string {
  return key.split("/").map(rfc3986).join("/");
}

type Attempt =
  | { readonly reply: S3Reply }
  | { readonly failed: string; readonly cause?: unknown; readonly refused?: boolean };

// The answers that say S3 did not take the request on: sent again, it is the first to act.
const REFUSED_STATUSES = new Set([429, 503]);
const REFUSED_CODES = new Set([
  "SlowDown",
  "ServiceUnavailable",
  "ConditionalRequestConflict",
  "RequestTimeout",
]);

/** Sends signed requests to one bucket. */
export class S3Transport {
  readonly #target: S3Target;
  readonly #secrets: readonly string[];

  /** A transport to `target`, which is taken as checked. */
  constructor(target: S3Target) {
    this.#target = target;
    const { accessKeyId, secretAccessKey, sessionToken } = target;
    // The key id names, where the others grant: masked too, once long enough (AWS's have 16
    // characters or more) not to be a word of the message, as a test store's `thaw` would be.
    const keyId = accessKeyId.length >= 16 ? accessKeyId : "";
    this.#secrets = [secretAccessKey, sessionToken ?? "", keyId]
      .filter((secret) => secret !== "").sort((a, b) => b.length - a.length);
  }

  /** The URL of `key` (the bucket's own without one), with `query` as SigV4 reads it. */
  url(key: string | undefined, query: S3Query = []): URL {
    const { endpoint, bucket, pathStyle } = this.#target;
    const base = endpoint.pathname.replace(/\/$/, "");
    const host = pathStyle ? endpoint.host : `${bucket}.${endpoint.host}`;
    const object = key === undefined ? (pathStyle ? "" : "/") : `/${encodeKeyPath(key)}`;
    const path = `${base}${pathStyle ? `/${bucket}` : ""}${object}`;
    // Written as aws4fetch's canonical query reads it back: no `+`, every reserved byte encoded.
    const search = query.map(([name, value]) =>
      value === "" ? rfc3986(name) : `${rfc3986(name)}=${rfc3986(value)}`
    ).join("&");
    return new URL(`${endpoint.protocol}//${host}${path}${search === "" ? "" : `?${search}`}`);
  }

  /** `x-amz-copy-source` for `key`: the bucket and the key, URL-encoded as a path. */
  copySource(key: string): string {
    return `/${this.#target.bucket}/${encodeKeyPath(key)}`;
  }

  /** The bucket's name and host, as a message names them. */
  get bucketName(): string {
    return `${shownValue(this.#target.bucket)} at ${this.#target.endpoint.host}`;
  }

  /**
   * A presigned URL for `method` on `key`, valid `expiresSeconds` from now: SigV4 in the query
   * (`X-Amz-Expires`, the signature over the host alone, `UNSIGNED-PAYLOAD`).
   */
  async presign(key: string, method: "GET" | "PUT", expiresSeconds: number): Promise<string> {
    const url = this.url(key, [["X-Amz-Expires", `${expiresSeconds}`]]);
    const signed = await this.#signer(method, url, {}, true).sign();
    return signed.url.href;
  }

  /**
   * Sends `request` until S3 answers something that sending again would not change, at most
   * {@linkcode RETRIES} more times when `request.retry` allows it: a 5xx, a 429, a code of
   * "not now", no answer, or no head within `timeoutMs`. Throws `StorageFault("unavailable")`
   * when the tries are spent, `StorageFault("aborted")` when `request.signal` gives up.
   */
  async send(request: S3Request): Promise<S3Reply> {
    const tries = request.retry ? 1 + RETRIES : 1;
    let triedBefore = false;
    for (let tried = 1;; tried++) {
      const attempt = await this.#attempt(request);
      if ("reply" in attempt) {
        return triedBefore ? { ...attempt.reply, triedBefore } : attempt.reply;
      }
      triedBefore ||= attempt.refused !== true;
      if (tried >= tries) {
        const times = tries > 1 ? ` (${tries} tries)` : "";
        throw new StorageFault("unavailable", `${request.what}: ${attempt.failed}${times}`, {
          cause: attempt.cause,
        });
      }
      try {
        await pause(BACKOFF.delayOf(tried), request.signal);
      } catch {
        throw aborted(request);
      }
    }
  }

  /** The fault a failed reply is: 401 or 403 `denied`, no bucket `unavailable`, else `invalid`. */
  fault(reply: S3Reply, what: string): StorageFault {
    const { status, code, reason } = reply;
    if (status === 401 || status === 403) return new StorageFault("denied", `${what}: ${reason}`);
    if (code === "NoSuchBucket") {
      return new StorageFault("unavailable", `${what}: no bucket ${this.bucketName} (${reason})`);
    }
    const moved = status === 0 || (status >= 300 && status < 400)
      ? " (a redirect: the bucket is in another region, or the endpoint is not its own)"
      : "";
    return new StorageFault("invalid", `${what}: ${reason}${moved}`);
  }

  async #attempt(request: S3Request): Promise<Attempt> {
    const { method, body, signal } = request;
    const { timeoutMs } = this.#target;
    const url = this.url(request.key, request.query);
    const { headers } = await this.#signer(method, url, request.headers ?? {}, false).sign();
    // A timer of its own, not AbortSignal.timeout, which could not be called off: it bounds the
    // wait for the head, then each wait for a chunk of a body this reads itself (CompleteMulti-
    // partUpload's keeps coming as white space while S3 works), never a body the caller reads.
    const deadline = new AbortController();
    // A body is sent before the head can come: its time on a slow link (at 256 KiB/s, 32 s more
    // for a part of 8 MiB) is no store's silence.
    const sent = body === undefined ? 0 : body instanceof Blob ? body.size : body.length;
    const headMs = Math.min(
      timeoutMs + Math.ceil(sent / SLOWEST_UPLOAD_BYTES_PER_MS),
      MAX_DURATION_MS,
    );
    let timer = setTimeout(() => deadline.abort(), headMs);
    const rearm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => deadline.abort(), timeoutMs);
    };
    try {
      let response: Response;
      try {
        response = await this.#target.fetch(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body: body as Uint8Array<ArrayBuffer> | Blob }),
          redirect: "manual",
          signal: anySignal(deadline.signal, signal),
        });
      } catch (error) {
        if (signal?.aborted) throw aborted(request);
        if (deadline.signal.aborted) {
          return { failed: `S3 sent no answer within ${headMs} ms`, cause: error };
        }
        return { failed: `S3 could not be reached: ${this.#shown(error)}`, cause: error };
      }
      clearTimeout(timer);
      return await this.#read(request, response, rearm);
    } catch (error) {
      if (error instanceof StorageFault) throw error;
      if (signal?.aborted) throw aborted(request);
      const broke = deadline.signal.aborted ? `stalled for ${timeoutMs} ms` : "broke off";
      return { failed: `S3's answer ${broke}: ${this.#shown(error)}`, cause: error };
    } finally {
      clearTimeout(timer);
    }
  }

  async #read(request: S3Request, response: Response, rearm: () => void): Promise<Attempt> {
    const { status, headers } = response;
    const ok = { status, headers, ok: true, code: "", reason: "" };
    if (status < 200 || status > 299) {
      const { text } = request.method === "HEAD"
        ? { text: "" }
        : await readBounded(response, ERROR_BYTES, rearm);
      return this.#failure(status, headers, s3ErrorOf(text) ?? { code: "", message: text });
    }
    if (request.answer === "stream") return { reply: { ...ok, body: response.body } };
    const xml = request.answer === "xml";
    const { text, over } = await readBounded(response, xml ? MAX_XML_BYTES : ERROR_BYTES, rearm);
    if (!xml) return { reply: { ...ok, body: null } };
    if (over) {
      throw new StorageFault(
        "invalid",
        `${request.what}: S3's answer is over ${MAX_XML_BYTES} bytes`,
      );
    }
    let root: XmlElement;
    try {
      root = readXml(text);
    } catch (error) {
      if (!(error instanceof S3XmlError)) throw error;
      throw new StorageFault("invalid", `${request.what}: ${this.#mask(error.message)}`);
    }
    // CopyObject and CompleteMultipartUpload send their 200 before they know, and an <Error> in it.
    const failed = errorIn(root);
    if (failed !== undefined) return this.#failure(status, headers, failed);
    return { reply: { ...ok, body: null, xml: root } };
  }

  #failure(status: number, headers: Headers, error: { code: string; message: string }): Attempt {
    const code = /^[A-Za-z0-9.]{1,64}$/.test(error.code) ? error.code : "";
    const said = error.message.trim() === "" ? "" : `: ${shownValue(this.#mask(error.message))}`;
    const reason = `S3 answered ${status === 0 ? "a redirect" : status}${
      code && ` ${code}`
    }${said}`;
    if (status >= 500 || status === 429 || RETRY_CODES.has(code)) {
      return { failed: reason, refused: REFUSED_STATUSES.has(status) || REFUSED_CODES.has(code) };
    }
    return { reply: { status, headers, ok: false, body: null, code, reason } };
  }

  #signer(
    method: string,
    url: URL,
    headers: Readonly<Record<string, string>>,
    signQuery: boolean,
  ): AwsV4Signer {
    const { accessKeyId, secretAccessKey, sessionToken, region } = this.#target;
    return new AwsV4Signer({
      method,
      url: url.href,
      // The body is not hashed: TLS guards it on the way, and hashing each 8 MiB part would cost
      // an edge worker the CPU time it is billed and limited by.
      headers: signQuery ? {} : { ...headers, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
      accessKeyId,
      secretAccessKey,
      ...(sessionToken === undefined ? {} : { sessionToken }),
      region,
      service: "s3",
      signQuery,
    });
  }

  // An error and its cause: fetch's own message ("fetch failed") says nothing of why.
  #shown(error: unknown): string {
    const said = (e: unknown) => e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const cause = error instanceof Error && error.cause !== undefined
      ? ` (${said(error.cause)})`
      : "";
    return printable(this.#mask(said(error) + cause)).slice(0, 300);
  }

  // Every credential masked: S3 may quote the Authorization header, a runtime the URL.
  #mask(text: string): string {
    return this.#secrets.reduce((out, secret) => out.replaceAll(secret, "***"), text);
  }
}

function aborted(request: S3Request): StorageFault {
  return new StorageFault("aborted", `${request.what}: given up by the caller`, {
    cause: request.signal?.reason,
  });
}

// AbortSignal.any where the runtime has it; else a signal of its own that follows both.
function anySignal(first: AbortSignal, second: AbortSignal | undefined): AbortSignal {
  if (second === undefined) return first;
  if (typeof AbortSignal.any === "function") return AbortSignal.any([first, second]);
  const both = new AbortController();
  for (const signal of [first, second]) {
    if (signal.aborted) both.abort(signal.reason);
    else signal.addEventListener("abort", () => both.abort(signal.reason), { once: true });
  }
  return both.signal;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/**
 * At most `limit` bytes of a body, as UTF-8 text, and whether there were more (the rest is
 * cancelled, so that the connection under it is let go); `beforeRead` is called before each read.
 */
export async function readBounded(
  response: Response,
  limit: number,
  beforeRead: () => void = () => {},
): Promise<{ readonly text: string; readonly over: boolean }> {
  const body = response.body;
  if (body === null) return { text: "", over: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      beforeRead();
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return { text: decode(chunks), over: true };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return { text: decode(chunks), over: false };
}

function decode(chunks: readonly Uint8Array[]): string {
  const decoder = new TextDecoder();
  return chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join("") + decoder.decode();
}
