// The whole-body multipart parser Thaw had before its parser streamed, kept as it was (but for
// its names) as the reference the streaming one is held to: on any body, the same parts, or an
// error of the same status.
import { HttpException, HttpStatus } from "../../mod.ts";

/** A part as the reference parser read it. */
export interface ReferencePart {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly body: Uint8Array;
}

// RFC 9110, 5.6.2.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TOKEN_AT = /[!#$%&'*+\-.^_`|~0-9A-Za-z]+/y;
// The optional whitespace around a header's value (RFC 9110, 5.6.3): spaces and tabs, nothing else.
const SPACE_AROUND = /^[ \t]+|[ \t]+$/g;

// One character per byte, so that a string index is a byte index and the ASCII of the framing can
// be searched with the engine's own `indexOf`. WHATWG's `latin1` is windows-1252, which maps some
// bytes past ASCII elsewhere (Node 20 maps none): either way ASCII stays ASCII and nothing else
// becomes ASCII, which is all the search needs. Text is decoded from the bytes, as UTF-8, a
// byte-order mark kept as the character it is: a decoder drops a leading one unless told not to.
const latin1 = /* @__PURE__ */ new TextDecoder("latin1");
const utf8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

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
    const headers = partHeaders(text, bytes, at, headerEnd, n);
    if (headers.disposition === undefined) throw noName(n);
    const { name, filename } = parseDisposition(headers.disposition, n);
    parts.push({
      name,
      filename,
      contentType: headers.contentType,
      body: bytes.subarray(bodyStart, next),
    });
    at = next + delimiter.length;
  }
}

function noName(n: number): HttpException {
  return malformed(`part ${n} has no name (Content-Disposition: form-data; name="...")`);
}

/** The headers of part `n` that Thaw reads, from `text[start, end)`: the rest are ignored. */
function partHeaders(
  text: string,
  bytes: Uint8Array,
  start: number,
  end: number,
  n: number,
): { disposition?: string; contentType?: string } {
  const found: { disposition?: string; contentType?: string } = {};
  for (let line = start; line < end;) {
    let eol = text.indexOf("\r\n", line);
    if (eol === -1 || eol > end) eol = end;
    const colon = text.indexOf(":", line);
    if (colon === -1 || colon > eol) throw malformed(`part ${n} has a header line without a colon`);
    // A name with spaces, or a line folded onto the one before (obsolete since RFC 7230), is
    // refused rather than guessed at.
    const name = text.slice(line, colon);
    if (!TOKEN.test(name)) throw malformed(`part ${n} has a header whose name is not a token`);
    const lower = name.toLowerCase();
    const key = lower === "content-disposition"
      ? "disposition"
      : lower === "content-type"
      ? "contentType"
      : undefined;
    if (key !== undefined) {
      const label = key === "disposition" ? "Content-Disposition" : "Content-Type";
      if (found[key] !== undefined) throw malformed(`part ${n} has two ${label} headers`);
      let value: string;
      try {
        value = utf8.decode(bytes.subarray(colon + 1, eol));
      } catch {
        throw malformed(`part ${n}'s ${label} is not valid UTF-8`);
      }
      if (/[\r\n]/.test(value)) throw malformed(`part ${n}'s ${label} holds a bare CR or LF`);
      found[key] = value.replace(SPACE_AROUND, "");
    }
    line = eol + 2;
  }
  return found;
}

// `form-data; name="..."; filename="..."`: the two parameters RFC 7578 gives, each at most once.
// Other parameters (`filename*`, which RFC 7578 says not to send) are ignored.
function parseDisposition(value: string, n: number): { name: string; filename?: string } {
  const semicolon = value.indexOf(";");
  // Spaces and tabs alone are trimmed: `trim()` would take a U+FEFF sent before `form-data` too.
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).replace(SPACE_AROUND, "")
    .toLowerCase();
  if (type !== "form-data") throw malformed(`part ${n} is not form-data`);
  const unreadable = () => malformed(`part ${n}'s Content-Disposition cannot be read`);
  const params: { name?: string; filename?: string } = {};
  let i = semicolon === -1 ? value.length : semicolon + 1;
  const skipSpace = () => {
    while (value[i] === " " || value[i] === "\t") i++;
  };
  while (i < value.length) {
    skipSpace();
    if (i === value.length) break;
    TOKEN_AT.lastIndex = i;
    const key = TOKEN_AT.exec(value)?.[0];
    if (key === undefined) throw unreadable();
    i += key.length;
    skipSpace();
    if (value[i] !== "=") throw unreadable();
    i++;
    skipSpace();
    let text: string;
    if (value[i] === '"') {
      const close = value.indexOf('"', i + 1);
      if (close === -1) throw unreadable();
      // No backslash escapes: a browser sends a `\` as it is, and a `"` as `%22`.
      text = value.slice(i + 1, close).replace(
        /%(?:22|0D|0A)/g,
        (escape) => escape === "%22" ? '"' : escape === "%0D" ? "\r" : "\n",
      );
      i = close + 1;
    } else {
      TOKEN_AT.lastIndex = i;
      const token = TOKEN_AT.exec(value)?.[0];
      if (token === undefined) throw unreadable();
      text = token;
      i += token.length;
    }
    skipSpace();
    if (i < value.length && value[i] !== ";") throw unreadable();
    i++;
    const lower = key.toLowerCase();
    if (lower === "name" || lower === "filename") {
      if (params[lower] !== undefined) {
        throw malformed(`part ${n}'s Content-Disposition gives ${lower} twice`);
      }
      params[lower] = text;
    }
  }
  if (params.name === undefined) throw noName(n);
  return { name: params.name, filename: params.filename };
}
