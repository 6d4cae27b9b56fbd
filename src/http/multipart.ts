// A `multipart/form-data` parser (RFC 7578 over RFC 2046's framing) that reads a body as it
// arrives, chunk by chunk, and hands each part's content on as it comes: nothing holds the whole
// body, and no part is ever turned into one string.
//
// The delimiters are found by multipasta's streaming search (a Boyer-Moore-Horspool search that
// carries a partial match from one chunk to the next; Node's `Buffer#indexOf` on Node). The rest,
// what comes between two delimiters, is read here, by the rules below: multipasta's own part
// parser is lenient where Thaw answers 400 (a part without a name, padding after a boundary, header
// bytes that are not UTF-8) and reads `filename*` and backslash escapes, which a browser never
// sends.
//
// Thaw does not use the platform's `Response.formData()`: Deno, Bun and Node each answer hostile
// bodies differently, and none as Thaw answers other bad input. Measured on Deno 2.9, Bun 1.4,
// Node 20 and Node 26: a body cut off before its closing boundary is an empty form on Deno, an
// error on Bun and Node; a part without a name is dropped on Deno and Bun, an error on Node; a
// preamble is an error on Node 20 alone; `name="a%22b"` is `a"b` on Node, `a%22b` on Deno and Bun;
// bytes that are not UTF-8 become U+FFFD everywhere; and every error is a bare `TypeError` that
// says nothing of what was wrong. This parser gives one answer on every runtime: the parts, or a
// 400 saying what is malformed, or a 413 past a limit (`server.multipart.*`), named.
import { make as delimiterSearch } from "multipasta/Search";
import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";
import { mediaTypeParameter } from "./media_type.ts";

/** The most parts a `multipart/form-data` body may have by default (`server.multipart.max-parts`). */
export const MAX_MULTIPART_PARTS = 1000;

/** The most bytes of one part's headers; a part whose headers run on is a 400. */
export const MAX_PART_HEADER_SIZE = 16384;

/** One part of a `multipart/form-data` body. */
export interface MultipartPart {
  /** Its field name, the `name` of its `Content-Disposition`. */
  readonly name: string;
  /** Its `filename`, present (even empty) for a file part, `undefined` for a text part. */
  readonly filename: string | undefined;
  /** Its `Content-Type` as sent, or `undefined`. */
  readonly contentType: string | undefined;
  /** Its content, as sent, when it is held in memory; empty when `file` holds it. */
  readonly body: Uint8Array;
  /**
   * Its content in a temporary file, for a file part past `server.multipart.file-size-threshold`
   * (the `File` the handler gets, named and typed as sent).
   */
  readonly file?: File;
}

/**
 * How `multipart/form-data` bodies are read: the `server.multipart.*` keys, and the size up to
 * which a body is read whole (`server.max-body-size`).
 */
export interface MultipartLimits extends MultipartParserLimits {
  /** A file part larger than this goes to a temporary file (`file-size-threshold`). */
  readonly fileSizeThreshold: number;
  /** The folder of the temporary files (`location`); the OS's temporary folder by default. */
  readonly location?: string;
  /** A body whose declared length is at most this is read whole, as a JSON body is. */
  readonly readWhole: number;
}

/** The defaults of the `server.multipart.*` keys, and of `server.max-body-size`. */
export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = /* @__PURE__ */ Object.freeze({
  maxFileSize: 1048576,
  maxRequestSize: 10485760,
  maxParts: MAX_MULTIPART_PARTS,
  fileSizeThreshold: 65536,
  readWhole: 1048576,
});

/** What a part is, once its headers are read. */
export interface PartHead {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
}

/** Where {@linkcode MultipartParser} hands what it reads, as it reads it. */
export interface MultipartSink {
  /** A part begins. */
  part(head: PartHead): void;
  /** Some of its content: a view of what was written, valid until `write` returns. */
  data(chunk: Uint8Array): void;
  /** It ended: its content was all given. */
  end(): void;
}

/** The limits a multipart body is read under; a body past one is a 413 naming its key. */
export interface MultipartParserLimits {
  /** The most parts (`server.multipart.max-parts`). */
  readonly maxParts: number;
  /** The most bytes of one part's content (`server.multipart.max-file-size`). */
  readonly maxFileSize: number;
  /** The most bytes of the whole body (`server.multipart.max-request-size`). */
  readonly maxRequestSize: number;
  /**
   * The most bytes of a text part (one without a filename), which is held in memory and becomes a
   * string: `server.max-body-size`, as a JSON body's; none but `maxFileSize` when absent.
   */
  readonly maxFieldSize?: number;
}

// RFC 2046, 5.1.1: 1 to 70 of these characters, a space anywhere but last.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
// RFC 9110, 5.6.2.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TOKEN_AT = /[!#$%&'*+\-.^_`|~0-9A-Za-z]+/y;
// The optional whitespace around a header's value (RFC 9110, 5.6.3): spaces and tabs, nothing else.
const SPACE_AROUND = /^[ \t]+|[ \t]+$/g;

// A part's headers, one character per byte, so that a string index is a byte index and their ASCII
// can be searched with the engine's own `indexOf`. WHATWG's `latin1` is windows-1252, which maps
// some bytes past ASCII elsewhere (Node 20 maps none): either way ASCII stays ASCII and nothing
// else becomes ASCII, which is all the search needs. Text is decoded from the bytes, as UTF-8, a
// byte-order mark kept as the character it is: a decoder drops a leading one unless told not to.
const latin1 = /* @__PURE__ */ new TextDecoder("latin1");
const utf8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function badRequest(message: string): HttpException {
  return new HttpException(HttpStatus.BAD_REQUEST, message);
}

function malformed(why: string): HttpException {
  return badRequest(`Malformed multipart body: ${why}`);
}

function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}

/**
 * The `boundary` parameter of a `multipart/form-data` `Content-Type`. A missing or ill-made one
 * (RFC 2046: 1 to 70 characters of a small set) is a 400: the body could not be split.
 */
export function multipartBoundary(contentType: string): string {
  const boundary = mediaTypeParameter(contentType, "boundary");
  if (boundary === undefined) {
    throw badRequest("Content-Type multipart/form-data needs a boundary parameter");
  }
  if (!BOUNDARY.test(boundary)) {
    throw badRequest(
      `Multipart boundary ${quoted(boundary)} is not valid: 1 to 70 of letters, digits, ` +
        `'()+_,-./:=? and spaces, not ending in a space`,
    );
  }
  return boundary;
}

// What the bytes after a delimiter are, as far as they have been read.
const START = 0; // nothing yet
const DASH = 1; // one `-`: a second one closes the body
const PADDING = 2; // transport padding, before the line end
const CR = 3; // the line end's CR
const HEADERS = 4; // the part's headers, up to the empty line
const BODY = 5; // the part's content, up to the next delimiter
const CLOSED = 6; // the epilogue, after the closing delimiter: ignored

const CRLF = /* @__PURE__ */ new Uint8Array([13, 10]);

function tooManyParts(max: number): HttpException {
  return new HttpException(
    HttpStatus.CONTENT_TOO_LARGE,
    `Multipart body has more than ${max} parts (server.multipart.max-parts)`,
  );
}

function partName(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}...` : name;
}

// A part's header bytes as they arrive, in a buffer that grows as they do (up to what a part's
// headers may take), so that a part's headers split across chunks are read whole.
class HeadBytes {
  #bytes = new Uint8Array(256);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  clear(): void {
    this.#length = 0;
  }

  // Appends `bytes`; the header bytes so far.
  append(bytes: Uint8Array): Uint8Array {
    const length = this.#length + bytes.byteLength;
    if (length > this.#bytes.byteLength) {
      const grown = new Uint8Array(Math.min(MAX_PART_HEADER_SIZE + 4, 2 * length));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    this.#bytes.set(bytes, this.#length);
    this.#length = length;
    return this.#bytes.subarray(0, length);
  }
}

/**
 * Reads a `multipart/form-data` body as it arrives: `write` each chunk, then `end`. The parts go
 * to the sink in order, their content as it comes, so that a part of any size is never held
 * here. `write` and `end` throw an `HttpException` as soon as the body is known to be wrong: a 400
 * saying what is malformed (as {@linkcode parseMultipart} lists), or a 413 past a limit, naming
 * it: more than `maxParts` parts (as the next one begins), a part's content over `maxFileSize`, the
 * body over `maxRequestSize`, each answered at the first byte over, before reading on. After a
 * throw the parser is done with.
 */
export class MultipartParser {
  readonly #sink: MultipartSink;
  readonly #limits: MultipartParserLimits;
  readonly #search: { write(chunk: Uint8Array): void; end(): void };
  readonly #delimiterLength: number;
  /** Bytes given to the search (the line end it starts with included), and handed back. */
  #searched = 0;
  #handedBack = 0;
  /** The index of the text between two delimiters being read; 0 is the preamble. */
  #segment = 0;
  #state = START;
  #parts = 0;
  #size = 0;
  #partSize = 0;
  #name = "";
  #file = false;
  readonly #head = new HeadBytes();

  /**
   * @param boundary the body's boundary, as {@linkcode multipartBoundary} read it
   * @param sink where the parts go
   * @param limits what the body may hold
   */
  constructor(boundary: string, sink: MultipartSink, limits: MultipartParserLimits) {
    this.#sink = sink;
    this.#limits = limits;
    const delimiter = `\r\n--${boundary}`;
    this.#delimiterLength = delimiter.length;
    this.#search = delimiterSearch(delimiter, (index, chunk) => {
      this.#handedBack += chunk.byteLength;
      this.#segmentData(index, chunk);
    });
    // The first boundary has no line end before it: one is given, so that it is a delimiter too.
    this.#search.write(CRLF);
    this.#searched = CRLF.byteLength;
  }

  /** Reads the next chunk of the body. */
  write(chunk: Uint8Array): void {
    this.#size += chunk.byteLength;
    if (this.#size > this.#limits.maxRequestSize) {
      throw new HttpException(
        HttpStatus.CONTENT_TOO_LARGE,
        `Multipart body exceeds ${this.#limits.maxRequestSize} bytes ` +
          "(server.multipart.max-request-size)",
      );
    }
    if (this.#state === CLOSED) return;
    this.#searched += chunk.byteLength;
    this.#search.write(chunk);
  }

  /** The body ended: throws unless it was whole. */
  end(): void {
    if (this.#state === CLOSED) return;
    this.#search.end();
    if (this.#size === 0) return; // an empty body has no parts
    // Delimiters followed by nothing were never handed a byte: each took its length of what was
    // searched and gave nothing back.
    const delimiters = (this.#searched - this.#handedBack) / this.#delimiterLength;
    while (this.#segment < delimiters) this.#nextSegment();
    if (this.#state === CLOSED) return;
    if (this.#segment === 0) throw malformed("it does not start with its boundary");
    throw malformed("it ends before its closing boundary");
  }

  #segmentData(index: number, chunk: Uint8Array): void {
    while (this.#segment < index && this.#state !== CLOSED) this.#nextSegment();
    if (this.#segment === 0 || this.#state === CLOSED) return; // the preamble, or the epilogue
    let at = 0;
    while (at < chunk.byteLength) {
      const state = this.#state;
      if (state === BODY) {
        this.#content(at === 0 ? chunk : chunk.subarray(at));
        return;
      }
      if (state === HEADERS) {
        at = this.#headers(chunk, at);
        continue;
      }
      const byte = chunk[at++];
      if (state === START || state === PADDING) {
        if (state === START && byte === 0x2d) this.#state = DASH;
        else if (byte === 0x20 || byte === 0x09) this.#state = PADDING;
        else if (byte === 0x0d) this.#state = CR;
        else throw neitherLineEndNorDashes();
      } else if (state === DASH) {
        if (byte !== 0x2d) throw neitherLineEndNorDashes();
        this.#state = CLOSED;
        return;
      } else if (state === CR) {
        if (byte !== 0x0a) throw neitherLineEndNorDashes();
        this.#beginPart();
      }
    }
  }

  // A delimiter ends what came after the one before it.
  #nextSegment(): void {
    const state = this.#state;
    if (this.#segment > 0) {
      if (state === BODY) this.#sink.end();
      else if (state === START || state === PADDING) {
        // The line end after the boundary was the next delimiter's: a part begins, whose headers
        // the delimiter cuts off.
        this.#beginPart();
        throw headersNotEnded(this.#parts);
      } else if (state === HEADERS) throw headersNotEnded(this.#parts);
      else throw neitherLineEndNorDashes();
    }
    this.#segment++;
    this.#state = START;
  }

  #beginPart(): void {
    if (this.#parts === this.#limits.maxParts) throw tooManyParts(this.#limits.maxParts);
    this.#parts++;
    this.#state = HEADERS;
    this.#head.clear();
  }

  // Takes header bytes from `chunk` at `at`, up to the empty line that ends them; returns where
  // the part's content starts in `chunk`, or its end when the headers go on.
  #headers(chunk: Uint8Array, at: number): number {
    const take = Math.min(MAX_PART_HEADER_SIZE + 4 - this.#head.length, chunk.byteLength - at);
    const from = this.#head.length;
    const head = this.#head.append(chunk.subarray(at, at + take));
    let end = -1;
    let contentStart = -1;
    if (head.byteLength >= 2 && head[0] === 0x0d && head[1] === 0x0a) {
      end = 0;
      contentStart = 2;
    } else {
      for (let i = Math.max(0, from - 3); i + 3 < head.byteLength; i++) {
        if (
          head[i] === 0x0d && head[i + 1] === 0x0a && head[i + 2] === 0x0d && head[i + 3] === 0x0a
        ) {
          end = i;
          contentStart = i + 4;
          break;
        }
      }
    }
    if (end === -1) {
      if (take < chunk.byteLength - at || head.byteLength > MAX_PART_HEADER_SIZE + 3) {
        throw malformed(
          `part ${this.#parts}'s headers are not ended by an empty line within ` +
            `${MAX_PART_HEADER_SIZE} bytes`,
        );
      }
      return chunk.byteLength;
    }
    const n = this.#parts;
    const text = latin1.decode(head);
    const part = partHead(text, head, 0, end, n);
    this.#name = part.name;
    this.#file = part.filename !== undefined;
    this.#partSize = 0;
    this.#state = BODY;
    this.#sink.part(part);
    // What of the chunk came after the empty line.
    return at + (contentStart - from);
  }

  #content(chunk: Uint8Array): void {
    this.#partSize += chunk.byteLength;
    const field = this.#limits.maxFieldSize;
    if (
      !this.#file && field !== undefined && field < this.#limits.maxFileSize &&
      this.#partSize > field
    ) {
      throw new HttpException(
        HttpStatus.CONTENT_TOO_LARGE,
        `Multipart field '${
          partName(this.#name)
        }' exceeds ${field} bytes (server.max-body-size); ` +
          "only a file part (one with a filename) may be larger",
      );
    }
    if (this.#partSize > this.#limits.maxFileSize) {
      throw new HttpException(
        HttpStatus.CONTENT_TOO_LARGE,
        `Multipart part '${partName(this.#name)}' exceeds ${this.#limits.maxFileSize} bytes ` +
          "(server.multipart.max-file-size)",
      );
    }
    this.#sink.data(chunk);
  }
}

function neitherLineEndNorDashes(): HttpException {
  return malformed("a boundary is followed by neither a line end nor --");
}

function headersNotEnded(n: number): HttpException {
  return malformed(`part ${n}'s headers are not ended by an empty line`);
}

/**
 * Splits a whole `multipart/form-data` body into its parts, in order, with no limit but
 * `maxParts`; an empty body has none. A body cut off before its closing boundary, a part without a
 * `form-data` `Content-Disposition` and a `name`, a header line without a colon, headers not ended
 * by an empty line (within {@linkcode MAX_PART_HEADER_SIZE} bytes), or line ends other than CRLF
 * are a 400 saying which; more than `maxParts` parts is a 413, answered as soon as the next part
 * begins. A preamble before the first boundary and an epilogue after the last are ignored, as RFC
 * 2046 says.
 *
 * Names and filenames are read as the Fetch standard's parser reads them: quoted, as UTF-8, with
 * `%22`, `%0D` and `%0A` (what a browser writes for `"`, CR and LF) decoded, and nothing else; an
 * unquoted token is taken too. Bytes that are not UTF-8 in them are a 400.
 */
export function parseMultipart(
  bytes: Uint8Array,
  boundary: string,
  maxParts: number = MAX_MULTIPART_PARTS,
): MultipartPart[] {
  const parts: MultipartPart[] = [];
  let head: PartHead | undefined;
  let chunks: Uint8Array[] = [];
  const parser = new MultipartParser(boundary, {
    part: (next) => {
      head = next;
      chunks = [];
    },
    data: (chunk) => void chunks.push(chunk),
    end: () => {
      // The parser ends a part after its head.
      if (head === undefined) throw new Error("multipart: a part ended before its head");
      parts.push({ ...head, body: joined(chunks) });
    },
  }, { maxParts, maxFileSize: Infinity, maxRequestSize: Infinity });
  parser.write(bytes);
  parser.end();
  return parts;
}

/** The chunks as one array: the one chunk itself, else a copy. */
export function joined(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
function noName(n: number): HttpException {
  return malformed(`part ${n} has no name (Content-Disposition: form-data; name="...")`);
}

/**
 * Part `n`'s name, file name and type, from its headers in `text[start, end)` (`bytes` the same,
 * as bytes). Exported for the whole-body reference parser of the tests, which frames parts its own
 * way and reads their headers with this.
 */
export function partHead(
  text: string,
  bytes: Uint8Array,
  start: number,
  end: number,
  n: number,
): PartHead {
  const headers = partHeaders(text, bytes, start, end, n);
  if (headers.disposition === undefined) throw noName(n);
  const { name, filename } = parseDisposition(headers.disposition, n);
  return { name, filename, contentType: headers.contentType };
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
  return {
    name: params.name,
    ...(params.filename === undefined ? {} : { filename: params.filename }),
  };
}
