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
  declare static readonly CONTINUE: HttpStatus;
  /** `101 Switching Protocols` */
  declare static readonly SWITCHING_PROTOCOLS: HttpStatus;
  /** `102 Processing` */
  declare static readonly PROCESSING: HttpStatus;
  /** `103 Early Hints` */
  declare static readonly EARLY_HINTS: HttpStatus;
  /** `200 OK` */
  declare static readonly OK: HttpStatus;
  /** `201 Created` */
  declare static readonly CREATED: HttpStatus;
  /** `202 Accepted` */
  declare static readonly ACCEPTED: HttpStatus;
  /** `203 Non-Authoritative Information` */
  declare static readonly NON_AUTHORITATIVE_INFORMATION: HttpStatus;
  /** `204 No Content` */
  declare static readonly NO_CONTENT: HttpStatus;
  /** `205 Reset Content` */
  declare static readonly RESET_CONTENT: HttpStatus;
  /** `206 Partial Content` */
  declare static readonly PARTIAL_CONTENT: HttpStatus;
  /** `207 Multi-Status` */
  declare static readonly MULTI_STATUS: HttpStatus;
  /** `208 Already Reported` */
  declare static readonly ALREADY_REPORTED: HttpStatus;
  /** `226 IM Used` */
  declare static readonly IM_USED: HttpStatus;
  /** `300 Multiple Choices` */
  declare static readonly MULTIPLE_CHOICES: HttpStatus;
  /** `301 Moved Permanently` */
  declare static readonly MOVED_PERMANENTLY: HttpStatus;
  /** `302 Found` */
  declare static readonly FOUND: HttpStatus;
  /** `303 See Other` */
  declare static readonly SEE_OTHER: HttpStatus;
  /** `304 Not Modified` */
  declare static readonly NOT_MODIFIED: HttpStatus;
  /** `305 Use Proxy` */
  declare static readonly USE_PROXY: HttpStatus;
  /** `307 Temporary Redirect` */
  declare static readonly TEMPORARY_REDIRECT: HttpStatus;
  /** `308 Permanent Redirect` */
  declare static readonly PERMANENT_REDIRECT: HttpStatus;
  /** `400 Bad Request` */
  declare static readonly BAD_REQUEST: HttpStatus;
  /** `401 Unauthorized` */
  declare static readonly UNAUTHORIZED: HttpStatus;
  /** `402 Payment Required` */
  declare static readonly PAYMENT_REQUIRED: HttpStatus;
  /** `403 Forbidden` */
  declare static readonly FORBIDDEN: HttpStatus;
  /** `404 Not Found` */
  declare static readonly NOT_FOUND: HttpStatus;
  /** `405 Method Not Allowed` */
  declare static readonly METHOD_NOT_ALLOWED: HttpStatus;
  /** `406 Not Acceptable` */
  declare static readonly NOT_ACCEPTABLE: HttpStatus;
  /** `407 Proxy Authentication Required` */
  declare static readonly PROXY_AUTHENTICATION_REQUIRED: HttpStatus;
  /** `408 Request Timeout` */
  declare static readonly REQUEST_TIMEOUT: HttpStatus;
  /** `409 Conflict` */
  declare static readonly CONFLICT: HttpStatus;
  /** `410 Gone` */
  declare static readonly GONE: HttpStatus;
  /** `411 Length Required` */
  declare static readonly LENGTH_REQUIRED: HttpStatus;
  /** `412 Precondition Failed` */
  declare static readonly PRECONDITION_FAILED: HttpStatus;
  /** `413 Content Too Large` */
  declare static readonly CONTENT_TOO_LARGE: HttpStatus;
  /** `414 URI Too Long` */
  declare static readonly URI_TOO_LONG: HttpStatus;
  /** `415 Unsupported Media Type` */
  declare static readonly UNSUPPORTED_MEDIA_TYPE: HttpStatus;
  /** `416 Range Not Satisfiable` */
  declare static readonly RANGE_NOT_SATISFIABLE: HttpStatus;
  /** `417 Expectation Failed` */
  declare static readonly EXPECTATION_FAILED: HttpStatus;
  /** `418 I'm a teapot` */
  declare static readonly I_AM_A_TEAPOT: HttpStatus;
  /** `421 Misdirected Request` */
  declare static readonly MISDIRECTED_REQUEST: HttpStatus;
  /** `422 Unprocessable Content` */
  declare static readonly UNPROCESSABLE_CONTENT: HttpStatus;
  /** `423 Locked` */
  declare static readonly LOCKED: HttpStatus;
  /** `424 Failed Dependency` */
  declare static readonly FAILED_DEPENDENCY: HttpStatus;
  /** `425 Too Early` */
  declare static readonly TOO_EARLY: HttpStatus;
  /** `426 Upgrade Required` */
  declare static readonly UPGRADE_REQUIRED: HttpStatus;
  /** `428 Precondition Required` */
  declare static readonly PRECONDITION_REQUIRED: HttpStatus;
  /** `429 Too Many Requests` */
  declare static readonly TOO_MANY_REQUESTS: HttpStatus;
  /** `431 Request Header Fields Too Large` */
  declare static readonly REQUEST_HEADER_FIELDS_TOO_LARGE: HttpStatus;
  /** `451 Unavailable For Legal Reasons` */
  declare static readonly UNAVAILABLE_FOR_LEGAL_REASONS: HttpStatus;
  /** `500 Internal Server Error` */
  declare static readonly INTERNAL_SERVER_ERROR: HttpStatus;
  /** `501 Not Implemented` */
  declare static readonly NOT_IMPLEMENTED: HttpStatus;
  /** `502 Bad Gateway` */
  declare static readonly BAD_GATEWAY: HttpStatus;
  /** `503 Service Unavailable` */
  declare static readonly SERVICE_UNAVAILABLE: HttpStatus;
  /** `504 Gateway Timeout` */
  declare static readonly GATEWAY_TIMEOUT: HttpStatus;
  /** `505 HTTP Version Not Supported` */
  declare static readonly HTTP_VERSION_NOT_SUPPORTED: HttpStatus;
  /** `506 Variant Also Negotiates` */
  declare static readonly VARIANT_ALSO_NEGOTIATES: HttpStatus;
  /** `507 Insufficient Storage` */
  declare static readonly INSUFFICIENT_STORAGE: HttpStatus;
  /** `508 Loop Detected` */
  declare static readonly LOOP_DETECTED: HttpStatus;
  /** `510 Not Extended` */
  declare static readonly NOT_EXTENDED: HttpStatus;
  /** `511 Network Authentication Required` */
  declare static readonly NETWORK_AUTHENTICATION_REQUIRED: HttpStatus;
  /** `413` under its older name; the same instance as {@linkcode HttpStatus.CONTENT_TOO_LARGE}. */
  declare static readonly PAYLOAD_TOO_LARGE: HttpStatus;
  /** `422` under its older name; the same instance as {@linkcode HttpStatus.UNPROCESSABLE_CONTENT}. */
  declare static readonly UNPROCESSABLE_ENTITY: HttpStatus;
  /** `416` under its older name; the same instance as {@linkcode HttpStatus.RANGE_NOT_SATISFIABLE}. */
  declare static readonly REQUESTED_RANGE_NOT_SATISFIABLE: HttpStatus;

  // The constants above, made here from one line per status (`code reason`, and `=NAME` where the
  // name is not the reason upper-cased): a bundle carries the table once, not 62 constructions.
  static {
    const constants = HttpStatus as unknown as Record<string, HttpStatus>;
    for (
      const entry
        of ("100 Continue|101 Switching Protocols|102 Processing|103 Early Hints|200 OK|" +
          "201 Created|202 Accepted|203 Non-Authoritative Information|204 No Content|" +
          "205 Reset Content|206 Partial Content|207 Multi-Status|208 Already Reported|" +
          "226 IM Used|300 Multiple Choices|301 Moved Permanently|302 Found|303 See Other|" +
          "304 Not Modified|305 Use Proxy|307 Temporary Redirect|308 Permanent Redirect|" +
          "400 Bad Request|401 Unauthorized|402 Payment Required|403 Forbidden|404 Not Found|" +
          "405 Method Not Allowed|406 Not Acceptable|407 Proxy Authentication Required|" +
          "408 Request Timeout|409 Conflict|410 Gone|411 Length Required|" +
          "412 Precondition Failed|413 Content Too Large|414 URI Too Long|" +
          "415 Unsupported Media Type|416 Range Not Satisfiable|417 Expectation Failed|" +
          "418 I'm a teapot=I_AM_A_TEAPOT|421 Misdirected Request|422 Unprocessable Content|" +
          "423 Locked|424 Failed Dependency|425 Too Early|426 Upgrade Required|" +
          "428 Precondition Required|429 Too Many Requests|431 Request Header Fields Too Large|" +
          "451 Unavailable For Legal Reasons|500 Internal Server Error|501 Not Implemented|" +
          "502 Bad Gateway|503 Service Unavailable|504 Gateway Timeout|" +
          "505 HTTP Version Not Supported|506 Variant Also Negotiates|507 Insufficient Storage|" +
          "508 Loop Detected|510 Not Extended|511 Network Authentication Required").split("|")
    ) {
      const [status, name] = entry.split("=");
      const reason = status.slice(4);
      constants[name ?? reason.toUpperCase().replace(/[^A-Z]+/g, "_")] = new HttpStatus(
        Number(status.slice(0, 3)),
        reason,
      );
    }
    constants.PAYLOAD_TOO_LARGE = constants.CONTENT_TOO_LARGE;
    constants.UNPROCESSABLE_ENTITY = constants.UNPROCESSABLE_CONTENT;
    constants.REQUESTED_RANGE_NOT_SATISFIABLE = constants.RANGE_NOT_SATISFIABLE;
  }

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
