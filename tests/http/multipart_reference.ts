// The whole-body multipart parser Thaw had before its parser streamed, kept as it was (but for
// its names) as the reference the streaming one is held to: on any body, the same parts, or an
// error of the same status. It frames the parts its own way; their headers it reads with the
// streaming parser's own `partHead`, which did not change, so that the two cannot drift apart
// where they are meant to be one.
import { HttpException, HttpStatus } from "../../mod.ts";
import { partHead } from "../../src/http/multipart.ts";

/** A part as the reference parser read it. */
export interface ReferencePart {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly body: Uint8Array;
}

// One character per byte, so that a string index is a byte index and the ASCII of the framing can
// be searched with the engine's own `indexOf`. WHATWG's `latin1` is windows-1252, which maps some
// bytes past ASCII elsewhere (Node 20 maps none): either way ASCII stays ASCII and nothing else
// becomes ASCII, which is all the search needs.
const latin1 = /* @__PURE__ */ new TextDecoder("latin1");

function badRequest(message: string): HttpException {
  return new HttpException(HttpStatus.BAD_REQUEST, message);
}

function malformed(why: string): HttpException {
  return badRequest(`Malformed multipart body: ${why}`);
}

/**
 * Splits a `multipart/form-data` body into its parts, in order. An empty body has none. The body
 * must be whole: a body cut off before its closing boundary, a part without a `form-data`
 * `Content-Disposition` and a `name`, a header line without a colon, headers not ended by an
 * empty line, or line ends other than CRLF are a 400 saying which; more than `maxParts` parts is a
 * 413, answered as soon as the next part begins. A preamble before the first boundary and an
 * epilogue after the last are ignored, as RFC 2046 says.
 *
 * Names and filenames are read as the Fetch standard's parser reads them: quoted, as UTF-8, with
 * `%22`, `%0D` and `%0A` (what a browser writes for `"`, CR and LF) decoded, and nothing else; an
 * unquoted token is taken too. Bytes that are not UTF-8 in them are a 400.
 */
export function referenceParse(
  bytes: Uint8Array,
  boundary: string,
  maxParts: number,
): ReferencePart[] {
  const text = latin1.decode(bytes);
  if (text.length === 0) return [];
  const dash = `--${boundary}`;
  const delimiter = `\r\n${dash}`;
  let at: number;
  if (text.startsWith(dash)) at = dash.length;
  else {
    const first = text.indexOf(delimiter);
    if (first === -1) throw malformed("it does not start with its boundary");
    at = first + delimiter.length;
  }
  const parts: ReferencePart[] = [];
  for (;;) {
    // After a boundary: `--` closes the body (whatever follows is the epilogue); else transport
    // padding, then the line end that starts a part.
    if (text.startsWith("--", at)) return parts;
    while (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x09) at++;
    if (!text.startsWith("\r\n", at)) {
      throw malformed(
        at >= text.length - 1
          ? "it ends before its closing boundary"
          : "a boundary is followed by neither a line end nor --",
      );
    }
    at += 2;
    if (parts.length === maxParts) {
      throw new HttpException(
        HttpStatus.CONTENT_TOO_LARGE,
        `Multipart body has more than ${maxParts} parts`,
      );
    }
    const n = parts.length + 1;
    // Searched from the line end just read, so that a part whose headers run into the next
    // boundary is told from one with an empty body.
    const next = text.indexOf(delimiter, at - 2);
    if (next === -1) throw malformed("it ends before its closing boundary");
    const headerEnd = text.startsWith("\r\n", at) ? at : text.indexOf("\r\n\r\n", at);
    const bodyStart = headerEnd === at ? at + 2 : headerEnd + 4;
    if (headerEnd === -1 || bodyStart > next) {
      throw malformed(`part ${n}'s headers are not ended by an empty line`);
    }
    parts.push({
      ...partHead(text, bytes, at, headerEnd, n),
      body: bytes.subarray(bodyStart, next),
    });
    at = next + delimiter.length;
  }
}
