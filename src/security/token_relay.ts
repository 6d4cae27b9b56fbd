/**
 * Token relay: a call to another service as the current caller, with the bearer token the caller
 * sent. The guard remembers the token of each caller it let in by one (in a `WeakMap`, gone with
 * the caller); nothing else can read it.
 *
 * @module
 */
import { type Authentication, SecurityContext } from "./security_context.ts";

const tokens = new WeakMap<Authentication, string>();

/** Remembers the bearer token `caller` came with, for {@linkcode relay}. */
export function rememberToken(caller: Authentication, token: string): void {
  tokens.set(caller, token);
}

/**
 * `fetch(input, init)` with `Authorization: Bearer` and the current caller's own token, as
 * Spring Cloud Gateway's `TokenRelay` sends it on: the next service sees the same caller. A
 * redirect is answered as it is (`redirect: "manual"`) unless `init` says otherwise. Throws
 * where there is no such token (no caller, or one of HTTP Basic or an API key).
 *
 * @example Outside a request there is no caller, and nothing is sent
 * ```ts
 * import assert from "node:assert/strict";
 * import { relay } from "@thaw/thaw/security";
 *
 * await assert.rejects(relay("http://billing.test/invoices"), /relay: no bearer token to relay/);
 * ```
 */
export async function relay(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const caller = SecurityContext.current();
  const token = caller === undefined ? undefined : tokens.get(caller);
  if (token === undefined) {
    throw new Error(
      "relay: no bearer token to relay: the current call has " +
        (caller === undefined
          ? "no caller (outside a request, or on a route anyone may reach)"
          : "a caller of HTTP Basic or an API key, not of a bearer token") +
        "; call with a TokenClient to send the app's own token",
    );
  }
  // Redirects are not followed unless the call asks: a runtime that keeps Authorization across
  // origins would hand the caller's token to whatever host the service redirects to.
  const request = new Request(input, { ...init, redirect: init?.redirect ?? "manual" });
  request.headers.set("authorization", `Bearer ${token}`);
  return await fetch(request);
}
