import { HttpException } from "./http_exception.ts";
import { HttpStatus } from "./http_status.ts";
import { unsupportedJsonEncoding } from "./media_type.ts";
import { parseJson } from "./parse_json.ts";
import { queryValues } from "./query_string.ts";
import { decodeBodyText, readBodyBytes, readBodyText } from "./read_body.ts";

// A server may hand over a URL that does not parse: relative (Bun, without `Host`) or with a host
// no parser takes (Deno pastes `Host` in as sent; routing refuses such requests, but an error
// controller still gets them). The path and query count as sent; the host is then the reserved
// `unknown.invalid` (RFC 6761), which no code can take for a real one. The path is set, not
// parsed, so that `//evil/x` stays a path.
function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    const start = url.charCodeAt(0) === 0x2f ? 0 : url.indexOf("/", url.indexOf(":") + 3);
    const target = start === -1 ? "/" : url.slice(start).split("#", 1)[0];
    const query = target.indexOf("?");
    const parsed = new URL("http://unknown.invalid/");
    parsed.pathname = query === -1 ? target : target.slice(0, query);
    if (query !== -1) parsed.search = target.slice(query);
    return parsed;
  }
}

const encoder = new TextEncoder();

/** The default limit on a request body: 1 MiB. */
export const DEFAULT_MAX_BODY_SIZE = 1024 * 1024;

/** Options of {@linkcode HttpRequest}. */
export interface HttpRequestOptions {
  /** The `{var}` segments the route matched, decoded. */
  readonly pathVariables?: Readonly<Record<string, string>> | undefined;
  /** The most bytes `text()`, `bytes()` and `json()` read; defaults to 1 MiB. */
  readonly maxBodySize?: number | undefined;
  /**
   * The body's bytes when the server has read them already (Node's `incoming.rawBody`); the
   * request's own stream is then left alone.
   */
  readonly rawBody?: Uint8Array | undefined;
  /**
   * Where the body is read from when something read the request's own stream first (Hono keeps
   * what its `c.req.json()` read, for a later reader).
   */
  readonly readEarlier?: (() => Promise<Uint8Array>) | undefined;
}

/**
 * The request a handler serves: the web `Request` with its path variables, query and a body
 * reader that honours the body limit.
 *
 * Pass the class itself as a binder to receive it in a handler, and an `errorController` receives
 * one with every error.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/controllers.md#httprequest
 */
export class HttpRequest {
  readonly #raw: Request;
  readonly #pathVariables: Readonly<Record<string, string>>;
  readonly #maxBodySize: number;
  readonly #rawBody: Uint8Array | undefined;
  readonly #readEarlier: (() => Promise<Uint8Array>) | undefined;
  #url: URL | undefined;
  #text: Promise<string> | undefined;
  #bytes: Promise<Uint8Array> | undefined;

  /**
   * Wraps a web request.
   *
   * @param request the web request
   * @param options path variables and the body limit
   */
  constructor(request: Request, options: HttpRequestOptions = {}) {
    this.#raw = request;
    this.#pathVariables = options.pathVariables ?? {};
    this.#maxBodySize = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
    this.#rawBody = options.rawBody;
    this.#readEarlier = options.readEarlier;
  }

  /**
   * The web `Request` underneath.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const raw = new Request("http://localhost/");
   * assert.equal(new HttpRequest(raw).getRaw(), raw);
   * ```
   */
  getRaw(): Request {
    return this.#raw;
  }

  /**
   * The method, upper-case.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/", { method: "post" }));
   * assert.equal(r.getMethod(), "POST");
   * ```
   */
  getMethod(): string {
    return this.#raw.method;
  }

  /**
   * The parsed URL.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * assert.equal(new HttpRequest(new Request("http://localhost/a?b=1")).getUrl().search, "?b=1");
   * ```
   */
  getUrl(): URL {
    return this.#url ??= parseUrl(this.#raw.url);
  }

  /**
   * The path, without the query.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/users/1?x=2"));
   * assert.equal(r.getPath(), "/users/1");
   * ```
   */
  getPath(): string {
    return this.getUrl().pathname;
  }

  /**
   * A header's value (several values joined by `, `), or `null`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/", { headers: { "X-Id": "7" } }));
   * assert.equal(r.getHeader("x-id"), "7");
   * assert.equal(r.getHeader("x-other"), null);
   * ```
   */
  getHeader(name: string): string | null {
    return this.#raw.headers.get(name);
  }

  /**
   * All headers.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const headers = { accept: "text/csv" };
   * const r = new HttpRequest(new Request("http://localhost/", { headers }));
   * assert.deepEqual([...r.getHeaders()], [["accept", "text/csv"]]);
   * ```
   */
  getHeaders(): Headers {
    return this.#raw.headers;
  }

  /**
   * The first value of a query parameter, or `undefined`. Read as `RequestParam` reads it: `+` is
   * a space, and percent-encoded bytes that are not UTF-8 are a 400.
   *
   * @throws {HttpException} 400 when the value's percent-encoded bytes are not UTF-8.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/?q=green+tea&q=coffee"));
   * assert.equal(r.getQueryParam("q"), "green tea");
   * assert.equal(r.getQueryParam("page"), undefined);
   * ```
   */
  getQueryParam(name: string): string | undefined {
    return queryValues(this.getUrl().search, name, true)[0];
  }

  /**
   * Every value of a query parameter, in order, read as {@linkcode HttpRequest.getQueryParam}
   * reads one.
   *
   * @throws {HttpException} 400 when a value's percent-encoded bytes are not UTF-8.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/?t=a&t=b"));
   * assert.deepEqual(r.getQueryParams("t"), ["a", "b"]);
   * ```
   */
  getQueryParams(name: string): string[] {
    return queryValues(this.getUrl().search, name);
  }

  /**
   * A `{var}` segment the route matched, decoded, or `undefined`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/u/7"), { pathVariables: { id: "7" } });
   * assert.equal(r.getPathVariable("id"), "7");
   * ```
   */
  getPathVariable(name: string): string | undefined {
    return Object.hasOwn(this.#pathVariables, name) ? this.#pathVariables[name] : undefined;
  }

  /**
   * The body as text, read once (later calls return the same text) and limited to the body size.
   *
   * @throws {HttpException} 413 over the limit, 400 for bytes that are not UTF-8.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const r = new HttpRequest(new Request("http://localhost/", { method: "POST", body: "hi" }));
   * assert.equal(await r.text(), "hi");
   * assert.equal(await r.text(), "hi"); // the body was read once, and kept
   * ```
   */
  text(): Promise<string> {
    // The body is read once, whichever of `text()` and `bytes()` asks first.
    return this.#text ??= this.#bytes === undefined
      ? readBodyText(this.#raw, this.#maxBodySize, this.#rawBody, this.#readEarlier)
      : this.#bytes.then(decodeBodyText);
  }

  /**
   * The body's bytes, read once (later calls return the same bytes, and `text()` decodes them)
   * and limited to the body size. After `text()`, they are that text's UTF-8, so a body that was
   * refused as not UTF-8 is refused here too.
   *
   * @throws {HttpException} 413 over the limit.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const body = new Uint8Array([0, 255]);
   * const r = new HttpRequest(new Request("http://localhost/", { method: "POST", body }));
   * assert.deepEqual([...await r.bytes()], [0, 255]);
   * ```
   */
  bytes(): Promise<Uint8Array> {
    return this.#bytes ??= this.#text === undefined
      ? readBodyBytes(this.#raw, this.#maxBodySize, this.#rawBody, this.#readEarlier)
      : this.#text.then((text) => encoder.encode(text));
  }

  /**
   * The body parsed as JSON (see {@linkcode HttpRequest.text} for the limits), with the same
   * protections as `RequestBody()`: `__proto__` keys, and `constructor` keys holding a
   * `prototype`, are dropped at any depth, and nesting deeper than 512 levels is refused.
   *
   * @throws {HttpException} 400 for malformed or too deeply nested JSON; 415 for a `charset`
   * other than UTF-8 or a `Content-Encoding` other than `identity`.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpRequest } from "@thaw/thaw";
   *
   * const body = '{"__proto__": {"admin": true}, "ids": [1]}';
   * const r = new HttpRequest(new Request("http://localhost/", { method: "POST", body }));
   * assert.deepEqual(await r.json(), { ids: [1] }); // `__proto__` never reaches the handler
   * ```
   */
  async json(): Promise<unknown> {
    const encoding = unsupportedJsonEncoding(
      this.getHeader("content-type") ?? "application/json",
      this.getHeader("content-encoding"),
    );
    if (encoding !== undefined) {
      throw new HttpException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, encoding);
    }
    return parseJson(await this.text());
  }
}
