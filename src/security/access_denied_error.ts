/**
 * A call security refused: thrown by a guarded method inside the app, answered at the edge of a
 * request as RFC 6750 says (403 with `error="insufficient_scope"` and the scopes that would do
 * where scopes decided, 403 for a role or a check, 401 with the challenge where there was no
 * caller). A Hono `HTTPException`, so the error path answers it with its status and keeps its
 * `WWW-Authenticate`, and does not log it as a failure.
 *
 * @module
 */
import { HTTPException } from "hono/http-exception";
import { bearerAnswer, bearerResponse } from "./bearer_answer.ts";

/**
 * A call refused by `@Secured` or `@PreAuthorize`: `where` names the method; `caller` is `false`
 * when there was none (a `@Scheduled` run, a call outside any request).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AccessDeniedError } from "@thaw/thaw/security";
 *
 * const denied = new AccessDeniedError("Orders.remove()", true, ["orders:write"]);
 * assert.equal(denied.status, 403);
 * assert.equal(denied.message, "Access denied: Orders.remove()");
 * assert.equal(
 *   denied.getResponse().headers.get("www-authenticate"),
 *   'Bearer error="insufficient_scope", scope="orders:write"',
 * );
 * ```
 */
export class AccessDeniedError extends HTTPException {
  /** The method refused, `Class.method()`. */
  readonly where: string;
  /** Whether there was a caller: without one, the answer is 401. */
  readonly caller: boolean;

  /**
   * Makes the refusal and its answer.
   *
   * @param where the method refused
   * @param caller whether a caller was refused, or none was there
   * @param scopes the scopes that would have done (unprefixed), where scopes decided
   */
  constructor(where: string, caller: boolean, scopes?: readonly string[]) {
    const answer = bearerAnswer(
      !caller
        ? { kind: "missing" }
        : scopes !== undefined && scopes.length > 0
        ? { kind: "insufficient-scope", scopes }
        : { kind: "insufficient-scope" },
    );
    const res = bearerResponse(answer);
    // A refusal by a role or a check is not about scopes: no challenge but the status.
    if (caller && (scopes === undefined || scopes.length === 0)) {
      res.headers.delete("www-authenticate");
    }
    super(caller ? 403 : 401, { res, message: `Access denied: ${where}` });
    this.name = "AccessDeniedError";
    this.where = where;
    this.caller = caller;
  }
}
