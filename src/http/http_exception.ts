import { HttpStatus } from "./http_status.ts";

/**
 * An error that carries the HTTP status it should produce.
 *
 * Thrown from a handler (or a service it calls), it reaches the `errorController` with that status
 * instead of 500. Its message is meant for the client: unlike other errors it is shown even on a
 * 5xx.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/errors.md#httpexception
 */
export class HttpException extends Error {
  /** The status the response gets. */
  readonly status: HttpStatus;

  /**
   * Creates the error.
   *
   * @param status a registered status, or its numeric code (400-599)
   * @param message a message for the client; defaults to the reason phrase
   * @param options the standard `cause`
   */
  constructor(status: HttpStatus | number, message?: string, options?: ErrorOptions) {
    const resolved = typeof status === "number" ? HttpStatus.valueOf(status) : status;
    super(message ?? resolved.getReasonPhrase(), options);
    this.name = "HttpException";
    this.status = resolved;
  }

  /**
   * The numeric status code.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpException } from "@thaw/thaw";
   *
   * assert.equal(new HttpException(409).getStatusCode(), 409);
   * ```
   */
  getStatusCode(): number {
    return this.status.getValue();
  }
}

/** One problem found while validating a request body against a Standard Schema. */
export interface ValidationIssue {
  /** What is wrong, as the schema library worded it. */
  readonly message: string;
  /** Where in the body, as a list of keys and indices; empty for the body itself. */
  readonly path: readonly PropertyKey[];
}

/**
 * A 400 raised when a request body fails its Standard Schema; `issues` says why.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ValidationException } from "@thaw/thaw";
 *
 * const e = new ValidationException([{ message: "Expected string", path: ["name"] }]);
 * assert.equal(e.getStatusCode(), 400);
 * assert.deepEqual(e.issues[0].path, ["name"]);
 * ```
 */
export class ValidationException extends HttpException {
  /** The schema's issues, in its order. */
  readonly issues: readonly ValidationIssue[];

  /**
   * Creates the error.
   *
   * @param issues the problems the schema reported
   */
  constructor(issues: readonly ValidationIssue[]) {
    super(HttpStatus.BAD_REQUEST, "Request body failed validation");
    this.name = "ValidationException";
    this.issues = issues;
  }
}
