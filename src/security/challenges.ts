/**
 * The answer to a refused request when several schemes are on: one challenge per scheme that is
 * (RFC 7235, 4.1: a 401 lists every scheme the client may retry with), the bearer token's first
 * with RFC 6750's error code where a token was refused, then HTTP Basic's, then the API key's.
 * The challenges are appended to one `WWW-Authenticate` field: the Fetch API's `Headers` joins
 * them with `, ` and every runtime sends them so, as the `1#challenge` list RFC 7235 allows. The
 * route guard's refusals and method security's are answered here alike. Pure.
 *
 * @module
 */
import { bearerAnswer, type BearerRefusal } from "./bearer_answer.ts";

/** The challenges of the schemes that are on: the route guard's and method security's. */
export interface Challenges {
  /** Whether bearer tokens are checked (a JWT key source is set). */
  readonly bearer: boolean;
  /** The bearer challenge's `realm` (`security({ realm })`). */
  readonly realm?: string | undefined;
  /** The other schemes' challenges, as sent: HTTP Basic's, then the API key's. */
  readonly others: readonly string[];
}

/**
 * The challenge of the API key scheme. No registered scheme exists for API keys: `ApiKey` with the
 * header to send it in tells a client what to do, and keeps a 401 of an app whose only scheme is
 * API keys with the challenge RFC 7235 requires. The header name is a token (checked by the
 * settings), so it needs no escaping.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { apiKeyChallenge } from "./challenges.ts";
 *
 * assert.equal(apiKeyChallenge("X-API-Key"), 'ApiKey header="X-API-Key"');
 * ```
 */
export function apiKeyChallenge(header: string): string {
  return `ApiKey header="${header}"`;
}

/**
 * The answer to `refusal` with `challenges`' schemes on. A refused token, or a `Bearer` header
 * that is no token, only happens with bearer tokens on; a refusal of the other schemes is
 * answered as no credentials are (`missing`): the log says which, the client learns nothing more.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refusalResponse } from "./challenges.ts";
 *
 * const others = ['Basic realm="Realm", charset="UTF-8"', 'ApiKey header="X-API-Key"'];
 * const refused = refusalResponse({ kind: "invalid-token" }, { bearer: true, others });
 * assert.equal(refused.status, 401);
 * assert.equal(
 *   refused.headers.get("www-authenticate"),
 *   'Bearer error="invalid_token", Basic realm="Realm", charset="UTF-8", ApiKey header="X-API-Key"',
 * );
 * assert.equal(await refused.text(), '{"error":"invalid_token"}');
 * const missing = refusalResponse({ kind: "missing" }, { bearer: false, others });
 * assert.equal(missing.headers.get("www-authenticate"), others.join(", "));
 * ```
 */
export function refusalResponse(refusal: BearerRefusal, challenges: Challenges): Response {
  const answer = bearerAnswer(refusal, challenges.realm);
  const headers = new Headers();
  // A scope may be refused to a caller of another scheme: RFC 6750's code then helps no one.
  if (challenges.bearer || refusal.kind === "invalid-request" || refusal.kind === "invalid-token") {
    headers.append("www-authenticate", answer.headers["www-authenticate"]);
  }
  // A 400 (a malformed bearer header) is no challenge to retry with another scheme.
  if (answer.status === 401) {
    for (const challenge of challenges.others) headers.append("www-authenticate", challenge);
  }
  const type = answer.headers["content-type"];
  if (type !== undefined) headers.set("content-type", type);
  return new Response(answer.body === "" ? null : answer.body, { status: answer.status, headers });
}

/**
 * The answer to a call `@Secured` or `@PreAuthorize` refused, with `challenges`' schemes on.
 * Without a caller, the 401 a guarded route gives a request without credentials (the challenge of
 * every scheme that is on, each with its realm); with one, a 403, which names the scopes that
 * would do (RFC 6750's `insufficient_scope`) where scopes decided and bearer tokens are on, and
 * carries no challenge otherwise (a role or a check is no scheme's to retry with).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deniedResponse } from "./challenges.ts";
 *
 * const basicOnly = { bearer: false, others: ['Basic realm="Realm", charset="UTF-8"'] };
 * const anonymous = deniedResponse(false, undefined, basicOnly);
 * assert.equal(anonymous.status, 401);
 * assert.equal(anonymous.headers.get("www-authenticate"), 'Basic realm="Realm", charset="UTF-8"');
 * assert.equal(deniedResponse(true, ["orders:write"], basicOnly).headers.get("www-authenticate"), null);
 * assert.equal(
 *   deniedResponse(true, ["orders:write"], { bearer: true, realm: "orders", others: [] })
 *     .headers.get("www-authenticate"),
 *   'Bearer realm="orders", error="insufficient_scope", scope="orders:write"',
 * );
 * ```
 */
export function deniedResponse(
  caller: boolean,
  scopes: readonly string[] | undefined,
  challenges: Challenges,
): Response {
  if (!caller) return refusalResponse({ kind: "missing" }, challenges);
  if (challenges.bearer && scopes !== undefined && scopes.length > 0) {
    return refusalResponse({ kind: "insufficient-scope", scopes }, challenges);
  }
  return new Response(null, { status: 403 });
}
