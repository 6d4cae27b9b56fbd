import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

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
export async function readBodyText(
  request: Request,
  limit: number,
  rawBody?: Uint8Array,
): Promise<string> {
  if (rawBody !== undefined) {
    if (rawBody.byteLength > limit) throw tooLarge(limit);
    return decode(rawBody);
  }
  const declared = request.headers.get("content-length");
  // Only a well-formed length is trusted; anything else is counted like a chunked body.
  if (declared !== null && /^\d+$/.test(declared)) {
    if (Number(declared) > limit) throw tooLarge(limit);
    // The server's HTTP parser holds the body to its declared length, so a native read is both
    // bounded and faster than counting chunks in JavaScript; `bytes()` spares a copy where the
    // runtime has it (not Node 20).
    return decode(
      typeof request.bytes === "function"
        ? await request.bytes()
        : new Uint8Array(await request.arrayBuffer()),
    );
  }
  // Asked only here: `Request.body` makes a stream on Bun even when the body is read natively.
  const stream = request.body;
  if (stream === null) return "";
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  let bytes: Uint8Array;
  if (chunks.length === 1) bytes = chunks[0];
  else {
    bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
  }
  return decode(bytes);
}

function decode(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new HttpException(HttpStatus.BAD_REQUEST, "Request body is not valid UTF-8");
  }
}
