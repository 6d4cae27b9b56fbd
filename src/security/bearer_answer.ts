/**
 * The answers of a resource server that refuses a request (RFC 6750, section 3): 401 with
 * `WWW-Authenticate: Bearer` for a missing or refused token, `error="invalid_token"` for a refused
 * one, 403 with `error="insufficient_scope"` (and the scopes that would do) when the caller lacks
 * an authority, 400 with `error="invalid_request"` for a request that gives a token wrongly. The
 * body holds the RFC's code and nothing else: why a token was refused is the log line's, never
 * the client's (a reason would help a forger), but for the words of a validator the app wrote,
 * sent as `error_description`. Pure; the realm, the scopes and a description are made safe for a
 * header whatever they hold.
 *
 * @module
 */

/** Why a request is refused, as the answer tells it. */
export type BearerRefusal =
  /** No token was given: a challenge without an error code (RFC 6750, 3.1). */
  | { readonly kind: "missing" }
  /** The `Authorization` header is not one `Bearer <token>`, or the token came twice. */
  | { readonly kind: "invalid-request" }
  /**
   * The token was refused (expired, forged, for another audience...): the log says which.
   * `description`: the app's own words (a validator's), sent as `error_description`.
   */
  | { readonly kind: "invalid-token"; readonly description?: string | undefined }
  /** The caller is known but lacks what the route needs; `scopes`: those that would do. */
  | { readonly kind: "insufficient-scope"; readonly scopes?: readonly string[] };

/** The parts of the answer, to make a `Response` of (see {@linkcode bearerResponse}). */
export interface BearerAnswer {
  readonly status: 400 | 401 | 403;
  /** `www-authenticate`, and the body's `content-type` when there is a body. */
  readonly headers: Readonly<Record<string, string>>;
  /** `{"error":"<code>"}`, or empty for a missing token. */
  readonly body: string;
}

const CODES = {
  "invalid-request": ["invalid_request", 400],
  "invalid-token": ["invalid_token", 401],
  "insufficient-scope": ["insufficient_scope", 403],
} as const;

/**
 * The answer to a refused request. `realm`, where given, is sent as the challenge's `realm`: its
 * `"` and `\` escaped, and every character a header cannot carry (controls, `DEL`, non-ASCII)
 * left out. A scope is sent only when it is a `scope-token` (RFC 6749, printable ASCII but space,
 * `"` and `\`), so no scope name can add a parameter or a header line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bearerAnswer } from "./bearer_answer.ts";
 *
 * const answer = bearerAnswer({ kind: "invalid-token" }, "orders");
 * assert.equal(answer.status, 401);
 * assert.equal(answer.headers["www-authenticate"], 'Bearer realm="orders", error="invalid_token"');
 * assert.equal(answer.body, '{"error":"invalid_token"}');
 * assert.equal(
 *   bearerAnswer({ kind: "insufficient-scope", scopes: ["orders:write"] }).headers["www-authenticate"],
 *   'Bearer error="insufficient_scope", scope="orders:write"',
 * );
 * ```
 */
export function bearerAnswer(refusal: BearerRefusal, realm?: string): BearerAnswer {
  const params: string[] = [];
  if (realm !== undefined) params.push(`realm="${quotable(realm)}"`);
  if (refusal.kind === "missing") {
    return {
      status: 401,
      headers: { "www-authenticate": params.length === 0 ? "Bearer" : `Bearer ${params[0]}` },
      body: "",
    };
  }
  const [code, status] = CODES[refusal.kind];
  params.push(`error="${code}"`);
  if (refusal.kind === "invalid-token" && refusal.description !== undefined) {
    const description = describable(refusal.description);
    if (description !== "") params.push(`error_description="${description}"`);
  }
  if (refusal.kind === "insufficient-scope") {
    const scopes = (refusal.scopes ?? []).filter((scope) => SCOPE_TOKEN.test(scope));
    if (scopes.length > 0) params.push(`scope="${scopes.join(" ")}"`);
  }
  return {
    status,
    headers: {
      "www-authenticate": `Bearer ${params.join(", ")}`,
      "content-type": "application/json",
    },
    body: `{"error":"${code}"}`,
  };
}

/** The answer as a `Response`. */
export function bearerResponse(answer: BearerAnswer): Response {
  return new Response(answer.body === "" ? null : answer.body, {
    status: answer.status,
    headers: answer.headers,
  });
}

/** The longest `error_description` sent: a sentence, not a document. */
const MAX_DESCRIPTION = 200;

/**
 * An `error_description` (RFC 6750, 3: `%x20-21 / %x23-5B / %x5D-7E`, so neither `"` nor `\`):
 * every other character left out, cut at {@linkcode MAX_DESCRIPTION} characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describable } from "./bearer_answer.ts";
 *
 * assert.equal(describable('tenant "x"\r\nSet-Cookie: y'), "tenant xSet-Cookie: y");
 * ```
 */
export function describable(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "").slice(0, MAX_DESCRIPTION);
}

// RFC 6749, appendix A.4: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * The text of a quoted-string (RFC 9110, 5.6.4): printable ASCII, `"` and `\` escaped, the rest
 * (controls, `DEL`, non-ASCII) left out; every challenge's `realm` goes through it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quotable } from "./bearer_answer.ts";
 *
 * assert.equal(quotable('a "b"\\\r\nSet-Cookie: x'), 'a \\"b\\"\\\\Set-Cookie: x');
 * ```
 */
export function quotable(text: string): string {
  return text.replace(/[^\x20-\x7E]/g, "").replace(/["\\]/g, "\\$&");
}
