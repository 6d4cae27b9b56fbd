/**
 * The registered HTTP status codes (IANA, RFC 9110) as named constants.
 *
 * Each constant is the single instance for its code, so `===` compares statuses.
 *
 * @module
 */

/** The class of a status code: its first digit. */
export type HttpStatusSeries =
  | "INFORMATIONAL"
  | "SUCCESSFUL"
  | "REDIRECTION"
  | "CLIENT_ERROR"
  | "SERVER_ERROR";

const SERIES: readonly HttpStatusSeries[] = [
  "INFORMATIONAL",
  "SUCCESSFUL",
  "REDIRECTION",
  "CLIENT_ERROR",
  "SERVER_ERROR",
];

const BY_CODE = new Map<number, HttpStatus>();

/**
 * An HTTP status: its numeric code and its reason phrase.
 *
 * @example Use a named status and read it back
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpStatus } from "@thaw/thaw";
 *
 * const status = HttpStatus.CONFLICT;
 * assert.equal(status.getValue(), 409);
 * assert.equal(status.getReasonPhrase(), "Conflict");
 * assert.equal(HttpStatus.valueOf(409), status);
 * assert.equal(`${status}`, "409 Conflict");
 * assert.equal(JSON.stringify({ status }), '{"status":409}');
 * ```
 */
export class HttpStatus {
  /** `100 Continue` */
  static readonly CONTINUE: HttpStatus = new HttpStatus(100, "Continue");
  /** `101 Switching Protocols` */
  static readonly SWITCHING_PROTOCOLS: HttpStatus = new HttpStatus(101, "Switching Protocols");
  /** `102 Processing` */
  static readonly PROCESSING: HttpStatus = new HttpStatus(102, "Processing");
  /** `103 Early Hints` */
  static readonly EARLY_HINTS: HttpStatus = new HttpStatus(103, "Early Hints");
  /** `200 OK` */
  static readonly OK: HttpStatus = new HttpStatus(200, "OK");
  /** `201 Created` */
  static readonly CREATED: HttpStatus = new HttpStatus(201, "Created");
  /** `202 Accepted` */
  static readonly ACCEPTED: HttpStatus = new HttpStatus(202, "Accepted");
  /** `203 Non-Authoritative Information` */
  static readonly NON_AUTHORITATIVE_INFORMATION: HttpStatus = new HttpStatus(
    203,
    "Non-Authoritative Information",
  );
  /** `204 No Content` */
  static readonly NO_CONTENT: HttpStatus = new HttpStatus(204, "No Content");
  /** `205 Reset Content` */
  static readonly RESET_CONTENT: HttpStatus = new HttpStatus(205, "Reset Content");
  /** `206 Partial Content` */
  static readonly PARTIAL_CONTENT: HttpStatus = new HttpStatus(206, "Partial Content");
  /** `207 Multi-Status` */
  static readonly MULTI_STATUS: HttpStatus = new HttpStatus(207, "Multi-Status");
  /** `208 Already Reported` */
  static readonly ALREADY_REPORTED: HttpStatus = new HttpStatus(208, "Already Reported");
  /** `226 IM Used` */
  static readonly IM_USED: HttpStatus = new HttpStatus(226, "IM Used");
  /** `300 Multiple Choices` */
  static readonly MULTIPLE_CHOICES: HttpStatus = new HttpStatus(300, "Multiple Choices");
  /** `301 Moved Permanently` */
  static readonly MOVED_PERMANENTLY: HttpStatus = new HttpStatus(301, "Moved Permanently");
  /** `302 Found` */
  static readonly FOUND: HttpStatus = new HttpStatus(302, "Found");
  /** `303 See Other` */
  static readonly SEE_OTHER: HttpStatus = new HttpStatus(303, "See Other");
  /** `304 Not Modified` */
  static readonly NOT_MODIFIED: HttpStatus = new HttpStatus(304, "Not Modified");
  /** `305 Use Proxy` */
  static readonly USE_PROXY: HttpStatus = new HttpStatus(305, "Use Proxy");
  /** `307 Temporary Redirect` */
  static readonly TEMPORARY_REDIRECT: HttpStatus = new HttpStatus(307, "Temporary Redirect");
  /** `308 Permanent Redirect` */
  static readonly PERMANENT_REDIRECT: HttpStatus = new HttpStatus(308, "Permanent Redirect");
  /** `400 Bad Request` */
  static readonly BAD_REQUEST: HttpStatus = new HttpStatus(400, "Bad Request");
  /** `401 Unauthorized` */
  static readonly UNAUTHORIZED: HttpStatus = new HttpStatus(401, "Unauthorized");
  /** `402 Payment Required` */
  static readonly PAYMENT_REQUIRED: HttpStatus = new HttpStatus(402, "Payment Required");
  /** `403 Forbidden` */
  static readonly FORBIDDEN: HttpStatus = new HttpStatus(403, "Forbidden");
  /** `404 Not Found` */
  static readonly NOT_FOUND: HttpStatus = new HttpStatus(404, "Not Found");
  /** `405 Method Not Allowed` */
  static readonly METHOD_NOT_ALLOWED: HttpStatus = new HttpStatus(405, "Method Not Allowed");
  /** `406 Not Acceptable` */
  static readonly NOT_ACCEPTABLE: HttpStatus = new HttpStatus(406, "Not Acceptable");
  /** `407 Proxy Authentication Required` */
  static readonly PROXY_AUTHENTICATION_REQUIRED: HttpStatus = new HttpStatus(
    407,
    "Proxy Authentication Required",
  );
  /** `408 Request Timeout` */
  static readonly REQUEST_TIMEOUT: HttpStatus = new HttpStatus(408, "Request Timeout");
  /** `409 Conflict` */
  static readonly CONFLICT: HttpStatus = new HttpStatus(409, "Conflict");
  /** `410 Gone` */
  static readonly GONE: HttpStatus = new HttpStatus(410, "Gone");
  /** `411 Length Required` */
  static readonly LENGTH_REQUIRED: HttpStatus = new HttpStatus(411, "Length Required");
  /** `412 Precondition Failed` */
  static readonly PRECONDITION_FAILED: HttpStatus = new HttpStatus(412, "Precondition Failed");
  /** `413 Content Too Large` */
  static readonly CONTENT_TOO_LARGE: HttpStatus = new HttpStatus(413, "Content Too Large");
  /** `414 URI Too Long` */
  static readonly URI_TOO_LONG: HttpStatus = new HttpStatus(414, "URI Too Long");
  /** `415 Unsupported Media Type` */
  static readonly UNSUPPORTED_MEDIA_TYPE: HttpStatus = new HttpStatus(
    415,
    "Unsupported Media Type",
  );
  /** `416 Range Not Satisfiable` */
  static readonly RANGE_NOT_SATISFIABLE: HttpStatus = new HttpStatus(416, "Range Not Satisfiable");
  /** `417 Expectation Failed` */
  static readonly EXPECTATION_FAILED: HttpStatus = new HttpStatus(417, "Expectation Failed");
  /** `418 I'm a teapot` */
  static readonly I_AM_A_TEAPOT: HttpStatus = new HttpStatus(418, "I'm a teapot");
  /** `421 Misdirected Request` */
  static readonly MISDIRECTED_REQUEST: HttpStatus = new HttpStatus(421, "Misdirected Request");
  /** `422 Unprocessable Content` */
  static readonly UNPROCESSABLE_CONTENT: HttpStatus = new HttpStatus(422, "Unprocessable Content");
  /** `423 Locked` */
  static readonly LOCKED: HttpStatus = new HttpStatus(423, "Locked");
  /** `424 Failed Dependency` */
  static readonly FAILED_DEPENDENCY: HttpStatus = new HttpStatus(424, "Failed Dependency");
  /** `425 Too Early` */
  static readonly TOO_EARLY: HttpStatus = new HttpStatus(425, "Too Early");
  /** `426 Upgrade Required` */
  static readonly UPGRADE_REQUIRED: HttpStatus = new HttpStatus(426, "Upgrade Required");
  /** `428 Precondition Required` */
  static readonly PRECONDITION_REQUIRED: HttpStatus = new HttpStatus(428, "Precondition Required");
  /** `429 Too Many Requests` */
  static readonly TOO_MANY_REQUESTS: HttpStatus = new HttpStatus(429, "Too Many Requests");
  /** `431 Request Header Fields Too Large` */
  static readonly REQUEST_HEADER_FIELDS_TOO_LARGE: HttpStatus = new HttpStatus(
    431,
    "Request Header Fields Too Large",
  );
  /** `451 Unavailable For Legal Reasons` */
  static readonly UNAVAILABLE_FOR_LEGAL_REASONS: HttpStatus = new HttpStatus(
    451,
    "Unavailable For Legal Reasons",
  );
  /** `500 Internal Server Error` */
  static readonly INTERNAL_SERVER_ERROR: HttpStatus = new HttpStatus(500, "Internal Server Error");
  /** `501 Not Implemented` */
  static readonly NOT_IMPLEMENTED: HttpStatus = new HttpStatus(501, "Not Implemented");
  /** `502 Bad Gateway` */
  static readonly BAD_GATEWAY: HttpStatus = new HttpStatus(502, "Bad Gateway");
  /** `503 Service Unavailable` */
  static readonly SERVICE_UNAVAILABLE: HttpStatus = new HttpStatus(503, "Service Unavailable");
  /** `504 Gateway Timeout` */
  static readonly GATEWAY_TIMEOUT: HttpStatus = new HttpStatus(504, "Gateway Timeout");
  /** `505 HTTP Version Not Supported` */
  static readonly HTTP_VERSION_NOT_SUPPORTED: HttpStatus = new HttpStatus(
    505,
    "HTTP Version Not Supported",
  );
  /** `506 Variant Also Negotiates` */
  static readonly VARIANT_ALSO_NEGOTIATES: HttpStatus = new HttpStatus(
    506,
    "Variant Also Negotiates",
  );
  /** `507 Insufficient Storage` */
  static readonly INSUFFICIENT_STORAGE: HttpStatus = new HttpStatus(507, "Insufficient Storage");
  /** `508 Loop Detected` */
  static readonly LOOP_DETECTED: HttpStatus = new HttpStatus(508, "Loop Detected");
  /** `510 Not Extended` */
  static readonly NOT_EXTENDED: HttpStatus = new HttpStatus(510, "Not Extended");
  /** `511 Network Authentication Required` */
  static readonly NETWORK_AUTHENTICATION_REQUIRED: HttpStatus = new HttpStatus(
    511,
    "Network Authentication Required",
  );
  /** `413` under its older name; the same instance as {@linkcode HttpStatus.CONTENT_TOO_LARGE}. */
  static readonly PAYLOAD_TOO_LARGE: HttpStatus = HttpStatus.CONTENT_TOO_LARGE;
  /** `422` under its older name; the same instance as {@linkcode HttpStatus.UNPROCESSABLE_CONTENT}. */
  static readonly UNPROCESSABLE_ENTITY: HttpStatus = HttpStatus.UNPROCESSABLE_CONTENT;
  /** `416` under its older name; the same instance as {@linkcode HttpStatus.RANGE_NOT_SATISFIABLE}. */
  static readonly REQUESTED_RANGE_NOT_SATISFIABLE: HttpStatus = HttpStatus.RANGE_NOT_SATISFIABLE;

  readonly #value: number;
  readonly #reasonPhrase: string;

  private constructor(value: number, reasonPhrase: string) {
    this.#value = value;
    this.#reasonPhrase = reasonPhrase;
    BY_CODE.set(value, this);
  }

  /**
   * The status registered for `code`.
   *
   * @throws {RangeError} when no status is registered for that code.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.valueOf(404).getReasonPhrase(), "Not Found");
   * assert.throws(() => HttpStatus.valueOf(299), RangeError);
   * ```
   */
  static valueOf(code: number): HttpStatus {
    const status = BY_CODE.get(code);
    if (status === undefined) {
      throw new RangeError(`No HTTP status is registered for code ${code}`);
    }
    return status;
  }

  /**
   * The status registered for `code`, or `undefined` when there is none.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.resolve(404), HttpStatus.NOT_FOUND);
   * assert.equal(HttpStatus.resolve(299), undefined);
   * ```
   */
  static resolve(code: number): HttpStatus | undefined {
    return BY_CODE.get(code);
  }

  /**
   * Every registered status, in ascending order of code.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * const codes = HttpStatus.values().map((status) => status.getValue());
   * assert.equal(codes.length, 62);
   * assert.deepEqual(codes.slice(0, 3), [100, 101, 102]);
   * ```
   */
  static values(): HttpStatus[] {
    return [...BY_CODE.values()].sort((a, b) => a.#value - b.#value);
  }

  /**
   * The numeric code.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.CREATED.getValue(), 201);
   * ```
   */
  getValue(): number {
    return this.#value;
  }

  /**
   * The reason phrase, as registered.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.NOT_FOUND.getReasonPhrase(), "Not Found");
   * ```
   */
  getReasonPhrase(): string {
    return this.#reasonPhrase;
  }

  /**
   * The class of this status (its first digit).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.BAD_GATEWAY.series(), "SERVER_ERROR");
   * assert.equal(HttpStatus.NO_CONTENT.series(), "SUCCESSFUL");
   * ```
   */
  series(): HttpStatusSeries {
    return SERIES[Math.floor(this.#value / 100) - 1];
  }

  /**
   * Whether this is a 4xx or 5xx status.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpStatus } from "@thaw/thaw";
   *
   * assert.equal(HttpStatus.OK.isError(), false);
   * assert.equal(HttpStatus.NOT_FOUND.isError(), true);
   * ```
   */
  isError(): boolean {
    return this.#value >= 400;
  }

  /** `"404 Not Found"`. */
  toString(): string {
    return `${this.#value} ${this.#reasonPhrase}`;
  }

  /** Serialises as the numeric code. */
  toJSON(): number {
    return this.#value;
  }
}
