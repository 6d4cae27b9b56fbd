// How much of an answer the bean's connection reads: the request's `maxResponseSize` and
// `maxCompressedResponseSize` options (the Elasticsearch client's names; the OpenSearch client has
// no such options), handed on by the client's Transport, and the read that keeps to them,
// decoding what the runtime's transport left compressed.
import { constants } from "node:buffer";
import type { Transport as BaseTransport } from "@opensearch-project/opensearch";
import { BoundedBody } from "../migrate/search/http/bounded_body.ts";
import type { BodyLimit, WholeAnswer } from "../migrate/search/http/transport.ts";
import { shownValue } from "../shown_value.ts";

// What an answer is read up to unless the request says less: the client makes one string of
// it (a longer one throws where no caller catches), and one buffer of a compressed one.
const MAX_RESPONSE_SIZE = constants.MAX_STRING_LENGTH;
const MAX_COMPRESSED_RESPONSE_SIZE = constants.MAX_LENGTH;

/**
 * The client's Transport, which also hands a request's `maxResponseSize` and
 * `maxCompressedResponseSize` options (the Elasticsearch client's names; the OpenSearch client
 * has no such options) on to the connection, which reads the answer.
 */
export function sizedTransportClass(Base: typeof BaseTransport): typeof BaseTransport {
  class SizedTransport extends Base {
    // deno-lint-ignore no-explicit-any -- the client's own overloads, passed on as they are
    override request(params: any, options?: any, callback?: any): any {
      if (typeof options === "object" && options !== null) {
        const { maxResponseSize, maxCompressedResponseSize } = options;
        if (maxResponseSize !== undefined) params.maxResponseSize = maxResponseSize;
        if (maxCompressedResponseSize !== undefined) {
          params.maxCompressedResponseSize = maxCompressedResponseSize;
        }
      }
      // The client sends it no more than once: the connection must not let the runtime send it
      // again by itself either (a runtime's fetch repeats a request whose connection closed
      // unanswered, which the client's count of attempts never sees).
      if (retriesOf(this, params, options) === 0) params.sentOnce = true;
      return super.request(params, options, callback);
    }
  }
  return SizedTransport;
}

// How often the client sends `params` again, as its Transport reckons it: never a stream's body,
// which it cannot send twice; else the call's `maxRetries`, or the client's.
function retriesOf(transport: BaseTransport, params: unknown, options: unknown): unknown {
  const { body, bulkBody } = (params ?? {}) as { body?: unknown; bulkBody?: unknown };
  if (isStream(body) || isStream(bulkBody)) return 0;
  const given = (options as { maxRetries?: unknown } | null | undefined)?.maxRetries;
  return typeof given === "number" ? given : (transport as { maxRetries?: unknown }).maxRetries;
}

function isStream(value: unknown): boolean {
  return typeof (value as { pipe?: unknown } | null | undefined)?.pipe === "function";
}

/** How much of an answer a request reads: decoded, and as it came compressed. */
export interface Bounds {
  readonly decoded: number;
  readonly compressed: number;
}

const DEFAULT_BOUNDS: Bounds = {
  decoded: MAX_RESPONSE_SIZE,
  compressed: MAX_COMPRESSED_RESPONSE_SIZE,
};

/**
 * The request's options `maxResponseSize` and `maxCompressedResponseSize`, as the Elasticsearch
 * client names them, each at most what the runtime can hold; throws a `TypeError` naming the
 * option for any other value.
 */
export function boundsOf(params: {
  readonly maxResponseSize?: unknown;
  readonly maxCompressedResponseSize?: unknown;
}): Bounds {
  const { maxResponseSize, maxCompressedResponseSize } = params;
  if (maxResponseSize === undefined && maxCompressedResponseSize === undefined) {
    return DEFAULT_BOUNDS;
  }
  return {
    decoded: bound("maxResponseSize", maxResponseSize, MAX_RESPONSE_SIZE),
    compressed: bound(
      "maxCompressedResponseSize",
      maxCompressedResponseSize,
      MAX_COMPRESSED_RESPONSE_SIZE,
    ),
  };
}

function bound(name: string, value: unknown, most: number): number {
  if (value === undefined) return most;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > most) {
    throw new TypeError(
      `${name} must be a whole number of bytes from 0 to ${most}, got ${shownValue(value)}`,
    );
  }
  return value;
}

/**
 * The bound on an answer's body: the decoded one, or, for bytes a transport left encoded (which the
 * first bytes tell), no more than the compressed form of an answer within the decoded bound could
 * take, and the compressed bound.
 */
export function bodyLimit(bounds: Bounds, tooLarge: TooLarge): BodyLimit {
  return (encoding, first) => {
    if (encoding === undefined || !stillEncoded(first, encoding)) {
      return { most: bounds.decoded, over: () => tooLarge("maxResponseSize", bounds.decoded) };
    }
    // Bytes that look compressed may be the transport's decoding of bytes made to look so (a
    // bomb): they are read no further than the compressed form of an answer within the decoded
    // bound could be.
    const ceiling = compressedCeiling(bounds.decoded);
    return ceiling < bounds.compressed
      ? { most: ceiling, over: () => tooLarge("maxResponseSize", bounds.decoded) }
      : {
        most: bounds.compressed,
        over: () => tooLarge("maxCompressedResponseSize", bounds.compressed),
      };
  };
}

/**
 * An answer read whole from `response`, its body within `limit`: past it the body is cancelled,
 * and `abort`, where given, aborted.
 */
export async function wholeAnswer(
  response: Response,
  limit: BodyLimit,
  abort?: AbortController,
): Promise<WholeAnswer> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => headers[name] = value);
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  const body = await readBody(response, encoding, limit, abort);
  return { status: response.status, headers, body };
}

async function readBody(
  response: Response,
  encoding: string | undefined,
  limit: BodyLimit,
  abort: AbortController | undefined,
): Promise<Uint8Array> {
  const said = response.headers.get("content-length");
  // One length, in digits: two joined ("2, 2") or anything else is read as it comes.
  const length = said !== null && /^\d+$/.test(said) ? Number(said) : undefined;
  const stop = (over: Error, cancel: () => Promise<void> | undefined): never => {
    cancel()?.catch(() => {});
    abort?.abort();
    throw over;
  };
  if (encoding === undefined && length !== undefined) {
    const bound = limit(undefined, EMPTY);
    // A length the runtime holds the body to, within the bound: read at once.
    if (length <= bound.most) return new Uint8Array(await response.arrayBuffer());
    stop(bound.over(), () => response.body?.cancel());
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return EMPTY;
  const body = new BoundedBody(limit, encoding, length);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const over = body.add(value);
    if (over !== undefined) stop(over, () => reader.cancel());
  }
  const bytes = body.bytes();
  return bytes instanceof Error ? stop(bytes, () => undefined) : bytes;
}

const EMPTY = new Uint8Array(0);

/**
 * The most bytes gzip or deflate takes for `decoded` bytes: stored blocks add 5 bytes in 65,535,
 * fixed codes at most 1 bit in 8; and room for a header's optional fields.
 */
export function compressedCeiling(decoded: number): number {
  return decoded + Math.ceil(decoded / 8) + 65_536;
}

/** Whether `bytes` still carry the format `encoding` names: gzip's magic number, or a zlib header. */
export function stillEncoded(bytes: Uint8Array, encoding: string): boolean {
  if (bytes.length < 2) return false;
  if (encoding === "gzip" || encoding === "x-gzip") return bytes[0] === 0x1f && bytes[1] === 0x8b;
  if (encoding === "deflate") {
    return (bytes[0] & 0x0f) === 8 && ((bytes[0] << 8) | bytes[1]) % 31 === 0;
  }
  return false;
}

/** The error of an answer over `bound` (its name) of `bytes`. */
export type TooLarge = (bound: string, bytes: number) => Error;

/** `bytes` decoded as `encoding` says, no longer than the decoded bound. */
export async function decoded(
  bytes: Uint8Array,
  encoding: string,
  bounds: Bounds,
  tooLarge: TooLarge,
): Promise<Uint8Array> {
  // Loaded only for an answer still compressed: most apps never need it.
  const { unzip } = await import("node:zlib");
  return await new Promise<Uint8Array>((resolve, reject) =>
    // zlib takes no bound under 1 byte.
    unzip(bytes, { maxOutputLength: Math.max(1, bounds.decoded) }, (error, out) => {
      if (error === null) {
        return out.length > bounds.decoded
          ? reject(tooLarge("maxResponseSize", bounds.decoded))
          : resolve(out);
      }
      const code = (error as { code?: string }).code;
      reject(
        code === "ERR_BUFFER_TOO_LARGE"
          ? tooLarge("maxResponseSize", bounds.decoded)
          : new Error(`the answer says content-encoding: ${encoding}: ${error.message}`),
      );
    })
  );
}
