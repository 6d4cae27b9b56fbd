/**
 * The caller of the current request, bound to the async call that serves it: every call the
 * request's handler makes, awaited or not, in any bean, reads it, and nothing outside it does.
 * AsyncLocalStorage, which Deno, Bun, Node and workerd all have, carries it across awaits (as
 * the transactions' scope is carried).
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** Who calls: what a verified bearer token says of its holder, or HTTP Basic's user, or an API key's. */
export interface Authentication {
  /**
   * The caller's name: the token's `sub`, or the claim `principal-claim-name` names; HTTP Basic:
   * the `username` the `UserDetailsService` gave; an API key: its name in the configuration.
   */
  readonly name: string;
  /**
   * `SCOPE_x` for each scope of the token, `ROLE_x` for each role of `roles-claim-name`; HTTP
   * Basic: the user's authorities; an API key: its configured ones.
   */
  readonly authorities: readonly string[];
  /** Every claim of the token; none for HTTP Basic and API keys. */
  readonly claims: Readonly<Record<string, unknown>>;
}

const callers = new AsyncLocalStorage<Authentication>();

/**
 * The caller of the current call: `SecurityContext.current()` in any bean.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SecurityContext } from "@thaw/thaw/security";
 *
 * // Outside a request that a caller made (a test, a scheduled run): no one.
 * assert.equal(SecurityContext.current(), undefined);
 * ```
 */
export class SecurityContext {
  private constructor() {}

  /** The caller of the request the current call serves; `undefined` outside one. */
  static current(): Authentication | undefined {
    return callers.getStore();
  }
}

/** Runs `fn` as a call of `caller`'s: it and every async call it makes see them. */
export function runAs<T>(caller: Authentication, fn: () => T): T {
  return callers.run(caller, fn);
}

/**
 * What a stream or a socket the current request opens keeps of it for its later calls: its
 * caller, bound again around each (src/web/call_context.ts); nothing outside a request.
 */
export function keepCaller(): (<T>(fn: () => T) => T) | undefined {
  const caller = callers.getStore();
  return caller === undefined ? undefined : (fn) => callers.run(caller, fn);
}
