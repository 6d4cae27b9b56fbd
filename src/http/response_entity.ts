import { generateCookie } from "hono/cookie";
import { isBodyInit } from "./body.ts";
import { withKnownBody } from "./body_length.ts";
import type { HttpStatus } from "./http_status.ts";
import { isJsonMediaType } from "./media_type.ts";
import { checkHeaderValue, checkResponseHeaders } from "./response_headers.ts";
import { toXml } from "./xml.ts";

/** Attributes of a cookie set by {@linkcode ResponseEntity.withCookie} (Hono's cookie options). */
export interface CookieOptions {
  /** `Domain`. */
  domain?: string;
  /** `Expires`. */
  expires?: Date;
  /** `HttpOnly`. */
  httpOnly?: boolean;
  /** `Max-Age`, in seconds. */
  maxAge?: number;
  /** `Path`. */
  path?: string;
  /** `Secure`; required by `partitioned` and by the `__Secure-` and `__Host-` prefixes. */
  secure?: boolean;
  /** `SameSite`. */
  sameSite?: "Strict" | "Lax" | "None" | "strict" | "lax" | "none";
  /** `Partitioned` (CHIPS). */
  partitioned?: boolean;
  /** `Priority`. */
  priority?: "Low" | "Medium" | "High" | "low" | "medium" | "high";
  /** Adds the `__Host-` or `__Secure-` prefix to the name. */
  prefix?: "host" | "secure";
}

type BodyFormat = "json" | "xml" | undefined;

const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=utf-8";
const XML_TYPE = "application/xml";
// Statuses the fetch API refuses to give a body.
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

function checkStatusCode(code: number): number {
  if (!Number.isInteger(code) || code < 200 || code > 599) {
    throw new RangeError(`A response status must be an integer from 200 to 599, got ${code}`);
  }
  return code;
}

// `Headers` refuses a name that is no token with a message that may quote the value as well: a
// client's text would reach the log as it is.
function refusedHeader(name: string): TypeError {
  return new TypeError(`${JSON.stringify(name)} is not a valid header name`);
}

/**
 * A response under construction: status, headers and body, built fluently.
 *
 * Return one from a handler for full control of the response; an `errorController` receives one
 * to fill.
 *
 * @example Created with a location and a JSON body
 * ```ts
 * import assert from "node:assert/strict";
 * import { ResponseEntity } from "@thaw/thaw";
 *
 * const response = ResponseEntity.created("/users/7")
 *   .withJson({ id: 7, name: "Ada" })
 *   .withHeader("Cache-Control", "no-store")
 *   .toResponse();
 * assert.equal(response.status, 201);
 * assert.equal(response.headers.get("location"), "/users/7");
 * assert.equal(response.headers.get("cache-control"), "no-store");
 * assert.deepEqual(await response.json(), { id: 7, name: "Ada" });
 * ```
 */
export class ResponseEntity {
  #status: number;
  readonly #headers: Headers = new Headers();
  #body: unknown = undefined;
  #format: BodyFormat = undefined;

  private constructor(status: number) {
    this.#status = status;
  }

  /**
   * 200, with an optional body (serialised as {@linkcode ResponseEntity.setBody} describes).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok({ up: true }).toResponse();
   * assert.equal(response.status, 200);
   * assert.deepEqual(await response.json(), { up: true });
   * ```
   */
  static ok(body?: unknown): ResponseEntity {
    return new ResponseEntity(200).setBody(body);
  }

  /**
   * 201 with a `Location` header.
   *
   * The OpenAPI document cannot read a status from the code that builds an entity: a route that
   * answers with this one says so with `@ResponseStatus(HttpStatus.CREATED)` on its mapping, which
   * documents `201` in place of `200` (the entity keeps its own status and headers).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.created("/users/1").withJson({ id: 1 }).toResponse();
   * assert.equal(response.status, 201);
   * assert.equal(response.headers.get("location"), "/users/1");
   * ```
   */
  static created(location: string): ResponseEntity {
    return new ResponseEntity(201).withHeader("Location", location);
  }

  /**
   * 202.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.accepted().withJson({ job: "42" }).toResponse();
   * assert.equal(response.status, 202);
   * assert.deepEqual(await response.json(), { job: "42" });
   * ```
   */
  static accepted(): ResponseEntity {
    return new ResponseEntity(202);
  }

  /**
   * 204, no body.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.noContent().toResponse();
   * assert.equal(response.status, 204);
   * assert.equal(response.body, null);
   * ```
   */
  static noContent(): ResponseEntity {
    return new ResponseEntity(204);
  }

  /**
   * 400.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.badRequest().withJson({ message: "name is required" });
   * const response = entity.toResponse();
   * assert.equal(response.status, 400);
   * assert.deepEqual(await response.json(), { message: "name is required" });
   * ```
   */
  static badRequest(): ResponseEntity {
    return new ResponseEntity(400);
  }

  /**
   * 401.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.unauthorized()
   *   .withHeader("WWW-Authenticate", 'Bearer realm="api"')
   *   .toResponse();
   * assert.equal(response.status, 401);
   * assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="api"');
   * ```
   */
  static unauthorized(): ResponseEntity {
    return new ResponseEntity(401);
  }

  /**
   * 404.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.notFound().withJson({ message: "User not found" });
   * const response = entity.toResponse();
   * assert.equal(response.status, 404);
   * assert.deepEqual(await response.json(), { message: "User not found" });
   * ```
   */
  static notFound(): ResponseEntity {
    return new ResponseEntity(404);
  }

  /**
   * 422.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.unprocessableEntity().withJson({ message: "end is late" });
   * const response = entity.toResponse();
   * assert.equal(response.status, 422);
   * assert.deepEqual(await response.json(), { message: "end is late" });
   * ```
   */
  static unprocessableEntity(): ResponseEntity {
    return new ResponseEntity(422);
  }

  /**
   * Any status from 200 to 599, by {@linkcode HttpStatus} or by code.
   *
   * @throws {RangeError} for a code outside 200-599 (the fetch API cannot send 1xx).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus, ResponseEntity } from "@thaw/thaw";
   *
   * assert.equal(ResponseEntity.status(HttpStatus.CONFLICT).getStatusCode(), 409);
   * assert.equal(ResponseEntity.status(503).toResponse().status, 503);
   * assert.throws(() => ResponseEntity.status(101), RangeError);
   * ```
   */
  static status(status: HttpStatus | number): ResponseEntity {
    return new ResponseEntity(
      checkStatusCode(typeof status === "number" ? status : status.getValue()),
    );
  }

  /**
   * Sets the body, sent as JSON with `Content-Type: application/json`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok().withJson([1, 2, 3]).toResponse();
   * assert.equal(response.headers.get("content-type"), "application/json");
   * assert.equal(await response.text(), "[1,2,3]");
   * ```
   */
  withJson(body: unknown): this {
    this.#body = body;
    this.#format = "json";
    this.#headers.set("Content-Type", JSON_TYPE);
    return this;
  }

  /**
   * Sets the body, sent as XML with `Content-Type: application/xml`. An object with one key (not
   * a list) gives the root element; other values are wrapped in `<response>`, so the document has
   * one root; a string is sent as it is. A list under a key repeats that key's element, any other
   * list gets `<item>` elements; values are read as `JSON.stringify` reads them (a `bigint` is
   * written as its digits). A key that is not an XML name (or holds a colon), a character XML 1.0
   * cannot hold, or a cycle makes `toResponse` throw.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok().withXml({ user: { id: 1, name: "Ada" } }).toResponse();
   * assert.equal(response.headers.get("content-type"), "application/xml");
   * assert.equal(
   *   await response.text(),
   *   '<?xml version="1.0" encoding="UTF-8"?><user><id>1</id><name>Ada</name></user>',
   * );
   * ```
   */
  withXml(body: unknown): this {
    this.#body = body;
    this.#format = "xml";
    this.#headers.set("Content-Type", XML_TYPE);
    return this;
  }

  /**
   * Appends a header; an existing header of that name is kept (as `Set-Cookie` needs).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.ok().withHeader("Vary", "Accept").withHeader("Vary", "Origin");
   * assert.equal(entity.getHeaders().get("vary"), "Accept, Origin");
   * ```
   */
  withHeader(name: string, value: string): this {
    checkHeaderValue(name, value);
    try {
      this.#headers.append(name, value);
    } catch {
      throw refusedHeader(name);
    }
    return this;
  }

  /**
   * Replaces the status.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus, ResponseEntity } from "@thaw/thaw";
   *
   * assert.equal(ResponseEntity.ok().withStatus(HttpStatus.ACCEPTED).getStatusCode(), 202);
   * ```
   */
  withStatus(status: HttpStatus): this {
    this.#status = checkStatusCode(status.getValue());
    return this;
  }

  /**
   * Replaces the status by numeric code (200-599; unregistered codes are allowed).
   *
   * @throws {RangeError} for a code outside 200-599.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * assert.equal(ResponseEntity.ok().withStatusCode(299).toResponse().status, 299);
   * assert.throws(() => ResponseEntity.ok().withStatusCode(600), RangeError);
   * ```
   */
  withStatusCode(code: number): this {
    this.#status = checkStatusCode(code);
    return this;
  }

  /**
   * Sets `Content-Type`, replacing any earlier one.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok("a,b\n1,2").withContentType("text/csv").toResponse();
   * assert.equal(response.headers.get("content-type"), "text/csv");
   * assert.equal(await response.text(), "a,b\n1,2");
   * ```
   */
  withContentType(type: string): this {
    checkHeaderValue("Content-Type", type);
    try {
      this.#headers.set("Content-Type", type);
    } catch {
      throw refusedHeader("Content-Type");
    }
    return this;
  }

  /**
   * Appends a `Set-Cookie` header, serialised by Hono's cookie helper (which also enforces the
   * `__Secure-` and `__Host-` prefix rules).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.ok().withCookie("session", "abc", { httpOnly: true, path: "/" });
   * assert.deepEqual(entity.getHeaders().getSetCookie(), ["session=abc; Path=/; HttpOnly"]);
   * ```
   */
  withCookie(name: string, value: string, options?: CookieOptions): this {
    return this.withHeader(
      "Set-Cookie",
      generateCookie(name, value, options as Parameters<typeof generateCookie>[2]),
    );
  }

  /**
   * Sets the body without touching `Content-Type`. When the response is built, a string is sent
   * as text (`text/plain; charset=utf-8` unless a type was set), bytes and streams as they are,
   * and anything else as JSON.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok().setBody("plain words").toResponse();
   * assert.equal(response.headers.get("content-type"), "text/plain; charset=utf-8");
   * assert.equal(await response.text(), "plain words");
   * ```
   */
  setBody(body: unknown): this {
    this.#body = body;
    return this;
  }

  /**
   * The status code.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * assert.equal(ResponseEntity.notFound().getStatusCode(), 404);
   * ```
   */
  getStatusCode(): number {
    return this.#status;
  }

  /**
   * The headers, live: changing them changes the response.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const entity = ResponseEntity.created("/a");
   * assert.equal(entity.getHeaders().get("Location"), "/a");
   * entity.getHeaders().set("Location", "/b");
   * assert.equal(entity.toResponse().headers.get("Location"), "/b");
   * ```
   */
  getHeaders(): Headers {
    return this.#headers;
  }

  /**
   * The body as it was given, before serialisation.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const body = { a: 1 };
   * assert.equal(ResponseEntity.ok(body).getBody(), body);
   * ```
   */
  getBody(): unknown {
    return this.#body;
  }

  /**
   * Builds the web `Response`.
   *
   * The framing headers (`Content-Length`, `Transfer-Encoding`, `Connection`, `Keep-Alive`,
   * `Proxy-Connection`, `Upgrade`) are dropped: the server writes them from the body it sends.
   *
   * @throws {TypeError} when the body cannot be sent: a body on a 204, 205 or 304, an object with a
   * non-JSON `Content-Type`, or a value JSON cannot represent; or when a header value holds a
   * character HTTP does not allow (a control character other than tab, or DEL).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ResponseEntity } from "@thaw/thaw";
   *
   * const response = ResponseEntity.ok("hi").toResponse();
   * assert.equal(await response.text(), "hi");
   * assert.throws(() => ResponseEntity.noContent().setBody("hi").toResponse(), TypeError);
   * ```
   */
  toResponse(): Response {
    const body = this.#serialiseBody();
    if (body !== null && NULL_BODY_STATUSES.has(this.#status)) {
      throw new TypeError(`A ${this.#status} response cannot have a body`);
    }
    checkResponseHeaders(this.#headers);
    // A Blob's length is known: Deno would otherwise stream it without one.
    if (body instanceof Blob) this.#headers.set("Content-Length", String(body.size));
    return withKnownBody(
      new Response(body, { status: this.#status, headers: this.#headers }),
      body,
    );
  }

  #serialiseBody(): BodyInit | null {
    const body = this.#body;
    if (this.#format === "json") return body === undefined ? null : JSON.stringify(body);
    if (this.#format === "xml") return body === undefined ? null : toXml(body);
    if (body === undefined || body === null) return null;
    const type = this.#headers.get("Content-Type");
    if (typeof body === "string") {
      if (type === null) this.#headers.set("Content-Type", TEXT_TYPE);
      return body;
    }
    if (isBodyInit(body)) return body;
    if (type === null) this.#headers.set("Content-Type", JSON_TYPE);
    else if (!isJsonMediaType(type)) {
      throw new TypeError(`Cannot send a ${typeof body} body as ${type}; give a string or bytes`);
    }
    return JSON.stringify(body);
  }
}
