/**
 * `Principal()`: the caller of the request as a handler's argument.
 *
 * @module
 */
import { sync, withResolver } from "../web/argument_resolver.ts";
import type { Binder, ParameterBinder } from "../web/binder.ts";
import { type Authentication, SecurityContext } from "./security_context.ts";

/** What makes a `Principal()` binder one: the security guard checks the routes that take it. */
export const PRINCIPAL_KIND = "principal";

const PRINCIPAL = /* @__PURE__ */ withResolver(
  { kind: PRINCIPAL_KIND } as const,
  () =>
    sync(() => {
      const caller = SecurityContext.current();
      // The guard refuses, at start, a route that binds it and lets anyone in: never met.
      if (caller === undefined) throw new Error("Principal(): no authenticated caller");
      return caller;
    }),
) as unknown as Binder<Authentication>;

/**
 * Binds the request's caller, the {@linkcode Authentication} its bearer token made: for a route
 * that needs one (`bootstrap` refuses it on a route `@PermitAll()` or `security.permit-all`
 * opens to anyone).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Principal } from "@thaw/thaw/security";
 *
 * assert.equal((Principal() as { kind?: string }).kind, "principal");
 * ```
 */
export function Principal(): Binder<Authentication> {
  return PRINCIPAL;
}

/** Whether a route's binder is {@linkcode Principal}'s. */
export function isPrincipal(binder: ParameterBinder): boolean {
  return binder === (PRINCIPAL as unknown);
}
