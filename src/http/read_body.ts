import { bodyArrival } from "./body_arrival.ts";
import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";

const lenient = new TextDecoder();
const strict = new TextDecoder("utf-8", { fatal: true });

// A read that fails is the client's doing: it closed, reset or aborted the connection before the
// body's declared end. It is a 400 that no log needs a stack for; where the connection can still
// carry an answer, the client gets it.
function cutShort(error: unknown): never {
  if (error instanceof HttpException) throw error;
  throw new HttpException(HttpStatus.BAD_REQUEST, "Request body ended before it was complete");
}

// Requests whose body a read gave up on before its end (over the limit while counting): the server
// must not read the rest either (see src/runtime/unread_body.ts).
const abandoned = new WeakSet<Request>();

/** Whether a read of this request's body stopped before the body's end. */
export function bodyAbandoned(request: Request): boolean {
  return abandoned.has(request);
}

/** Records that a read of this request's body stopped before its end (a multipart limit). */
export function abandonBody(request: Request): void {
  abandoned.add(request);
}

// Requests whose multipart body was parsed as it arrived (multipart_reader.ts): nothing kept it.
const streamed = new WeakSet<Request>();

/** Records that this request's body was read as it arrived, into its multipart parts. */
export function bodyStreamed(request: Request): void {
  streamed.add(request);
}

function tooLarge(limit: number): HttpException {
  return new HttpException(HttpStatus.CONTENT_TOO_LARGE, `Request body exceeds ${limit} bytes`);
}

/**
 * Reads a request body as UTF-8 text, refusing more than `limit` bytes.
 *
 * A declared `Content-Length` over the limit is refused before reading; a chunked body (no
 * length) is counted as it arrives and cancelled at the first byte over the limit, so a large or
 * endless body is never buffered. `rawBody`, the bytes a server read already, is used instead of
 * the stream.
 */
export function readBodyText(
  request: Request,
  limit: number,
  rawBody?: Uint8Array,
  readEarlier?: () => Promise<Uint8Array>,
): Promise<string> {
  return readBody(request, limit, rawBody, decodeBodyText, readEarlier);
}

/** Reads a request body's bytes as {@linkcode readBodyText} reads its text: the same limit. */
export function readBodyBytes(
  request: Request,
  limit: number,
  rawBody?: Uint8Array,
  readEarlier?: () => Promise<Uint8Array>,
): Promise<Uint8Array> {
  return readBody(request, limit, rawBody, (bytes) => bytes, readEarlier);
}

function readBody<T>(
  request: Request,
  limit: number,
  rawBody: Uint8Array | undefined,
  finish: (bytes: Uint8Array) => T,
  readEarlier?: () => Promise<Uint8Array>,
): Promise<T> {
  // Not async: a body of known length costs one promise, the runtime's own read (and one more
  // where a server watches the wait: body_arrival.ts).
  try {
    // The app's doing, not the client's: a 500 that says what to do instead.
    if (streamed.has(request)) {
      throw new Error(
        "The request body was read as it arrived, into its multipart parts (a body of unknown " +
          "length, or longer than server.max-body-size), and cannot be read again: take the " +
          "parts as RequestPart arguments",
      );
    }
    // A middleware read the body first (Hono's `validator` with `c.req.json()`): what it read is
    // kept by Hono, and read from there, under the same limit; what it could not keep is the
    // server's error, not the client's. Asked before Node's pre-read body, so that a middleware
    // that used the body up meets one answer on every runtime.
    if (readEarlier !== undefined && request.bodyUsed) {
      return readEarlier().then((bytes) => {
        if (bytes.byteLength > limit) throw tooLarge(limit);
        return finish(bytes);
      });
    }
    if (rawBody !== undefined) {
      if (rawBody.byteLength > limit) throw tooLarge(limit);
      return Promise.resolve(finish(rawBody));
    }
    const declared = request.headers.get("content-length");
    // Only a well-formed length is trusted; anything else is counted like a chunked body.
    if (declared === null || !/^\d+$/.test(declared)) {
      return bodyArrival(request, readCounting(request, limit)).then(finish, cutShort);
    }
    if (Number(declared) > limit) throw tooLarge(limit);
    // The server's HTTP parser holds the body to its declared length, so a native read is both
    // bounded and faster than counting chunks in JavaScript. `bytes()` spares a copy, but only a
    // real Request has it: @hono/node-server's stand-in inherits a `bytes` that throws on it.
    return Object.getPrototypeOf(request) === Request.prototype &&
        typeof request.bytes === "function"
      ? bodyArrival(request, request.bytes()).then(finish, cutShort)
      : bodyArrival(request, request.arrayBuffer())
        .then((buffer) => finish(new Uint8Array(buffer)), cutShort);
  } catch (error) {
    return Promise.reject(error);
  }
}

// A body without a declared length, counted as it arrives.
async function readCounting(request: Request, limit: number): Promise<Uint8Array> {
  // Asked only here: `Request.body` makes a stream on Bun even when the body is read natively.
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      abandoned.add(request);
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Decodes a body's bytes as UTF-8; bytes that are not UTF-8 are a 400. */
export function decodeBodyText(bytes: Uint8Array): string {
  // Bytes that are not UTF-8 are refused, not replaced. The lenient decoder is much faster on
  // Deno, and only a text with U+FFFD in it can hide a replaced byte, so only such a text is
  // decoded again strictly, to tell a U+FFFD the client sent from bytes that are not UTF-8.
  // A leading byte-order mark is dropped, on purpose: RequestBody parses this text as JSON, which
  // RFC 8259 (8.1) lets ignore one, and the platform's `Request.text()` drops it too. (A form's
  // fields are read from the bytes, and keep theirs.)
  const text = lenient.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return strict.decode(bytes);
  } catch {
    throw new HttpException(HttpStatus.BAD_REQUEST, "Request body is not valid UTF-8");
  }
}
