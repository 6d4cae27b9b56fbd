/**
 * The authorities of a verified token, as Spring Security's `JwtGrantedAuthoritiesConverter`
 * makes them: each scope of the `scope` claim (else `scp`; or the claim `authorities-claim-name`
 * names), a space-separated text or a list, prefixed `SCOPE_` (or `authority-prefix`); and, Thaw's
 * addition, each role of the claim `roles-claim-name` names, prefixed `ROLE_`, so that
 * `@Secured("ROLE_ADMIN")` reads roles an issuer puts in a claim of its own. Pure.
 *
 * @module
 */

/** Which claims hold authorities, and their prefix: from the resource server's settings. */
export interface AuthorityClaims {
  /** The claim of the authorities; none: `scope`, else `scp`. */
  readonly authoritiesClaim?: string;
  /** Prefixed to each of them. */
  readonly authorityPrefix: string;
  /**
   * The claim of the roles. A name holding dots is looked up as it is first (`https://example.com/roles`,
   * as Auth0 names claims), then as a path into nested objects (`realm_access.roles`, Keycloak's).
   */
  readonly rolesClaim?: string;
}

/** Spring Security's well-known names of the scope claim, in the order it tries them. */
const SCOPE_CLAIMS = ["scope", "scp"] as const;

/**
 * The authorities of `claims`, each once, in the order met: the scopes' then the roles'. A claim
 * that is neither a text nor a list gives none; so does an entry of a list that is not a text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authoritiesOf } from "./authorities.ts";
 *
 * assert.deepEqual(
 *   authoritiesOf(
 *     { scope: "orders:read orders:write", realm_access: { roles: ["admin"] } },
 *     { authorityPrefix: "SCOPE_", rolesClaim: "realm_access.roles" },
 *   ),
 *   ["SCOPE_orders:read", "SCOPE_orders:write", "ROLE_admin"],
 * );
 * assert.deepEqual(authoritiesOf({ scp: ["read"] }, { authorityPrefix: "SCOPE_" }), ["SCOPE_read"]);
 * ```
 */
export function authoritiesOf(
  claims: Readonly<Record<string, unknown>>,
  mapping: AuthorityClaims,
): readonly string[] {
  const found = new Set<string>();
  const name = mapping.authoritiesClaim ??
    SCOPE_CLAIMS.find((claim) => claims[claim] !== undefined && claims[claim] !== null);
  if (name !== undefined) {
    for (const value of entries(own(claims, name))) found.add(`${mapping.authorityPrefix}${value}`);
  }
  if (mapping.rolesClaim !== undefined) {
    for (const role of entries(claimAt(claims, mapping.rolesClaim))) found.add(`ROLE_${role}`);
  }
  return [...found];
}

/** A claim's entries: a text split on spaces, or a list's texts; empty ones left out. */
function entries(value: unknown): string[] {
  if (typeof value === "string") return value.split(" ").filter((part) => part !== "");
  if (Array.isArray(value)) {
    return value.filter((part): part is string => typeof part === "string" && part !== "");
  }
  return [];
}

/** The claim named `name`, else the one its dotted path reaches through nested objects. */
function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  const direct = own(claims, name);
  if (direct !== undefined || !name.includes(".")) return direct;
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = own(value as Record<string, unknown>, part);
  }
  return value;
}

/** An own property only: a claim named `constructor` or `__proto__` reads nothing inherited. */
function own(object: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
