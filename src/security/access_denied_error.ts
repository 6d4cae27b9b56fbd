/**
 * A call security refused: thrown by a guarded method inside the app, answered at the edge of a
 * request as RFC 6750 says (403 with `error="insufficient_scope"` and the scopes that would do
 * where scopes decided, 403 for a role or a check, 401 with the challenges of the schemes that
 * are on where there was no caller). A Hono `HTTPException`, so the error path answers it with its
 * status and keeps its `WWW-Authenticate`, and does not log it as a failure. Its message, which
 * the answer's body carries, names no method: which one refused is `where`, for the app's log.
 *
 * @module
 */
import { HTTPException } from "hono/http-exception";
import { deniedResponse } from "./challenges.ts";

// Where no scheme is said: the resource server's alone, as before there were others.
const BEARER_ONLY = Object.freeze({ bearer: true, others: Object.freeze([]) });

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
 * assert.equal(denied.message, "Access denied");
 * assert.equal(denied.where, "Orders.remove()");
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
   * @param challenges the schemes that are on, as method security knows them: bearer tokens
   *   alone, without a realm, when not given
   */
  constructor(
    where: string,
    caller: boolean,
    scopes?: readonly string[],
    // Spelt out rather than named: the entry point exports no type of the challenges.
    challenges: {
      /** Whether bearer tokens are checked. */
      readonly bearer: boolean;
      /** The bearer challenge's `realm`. */
      readonly realm?: string | undefined;
      /** The other schemes' challenges, as sent. */
      readonly others: readonly string[];
    } = BEARER_ONLY,
  ) {
    const res = deniedResponse(caller, scopes, challenges);
    // The message is the body's: a client learns nothing of the app's classes from it.
    super(caller ? 403 : 401, { res, message: "Access denied" });
    this.name = "AccessDeniedError";
    this.where = where;
    this.caller = caller;
  }
}
