// The authorities of a token's claims, against a small reference model of Spring Security's
// mapping (scope, else scp, as SCOPE_x) and of the roles claim (ROLE_x).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { authoritiesOf, type AuthorityClaims } from "../../src/security/authorities.ts";
import { propertyOptions } from "../property.ts";

/** The model: what the mapping means, written as plainly as it reads. */
function model(claims: Record<string, unknown>, mapping: AuthorityClaims): string[] {
  const split = (value: unknown): string[] =>
    typeof value === "string"
      ? value.split(" ").filter((s) => s.length > 0)
      : Array.isArray(value)
      ? value.filter((s) => typeof s === "string" && s.length > 0)
      : [];
  const has = (name: string) => Object.hasOwn(claims, name) && claims[name] != null;
  let name = mapping.authoritiesClaim;
  if (name === undefined) name = has("scope") ? "scope" : has("scp") ? "scp" : undefined;
  const out: string[] = [];
  const add = (a: string) => {
    if (!out.includes(a)) out.push(a);
  };
  if (name !== undefined && Object.hasOwn(claims, name)) {
    for (const s of split(claims[name])) add(mapping.authorityPrefix + s);
  }
  if (mapping.rolesClaim !== undefined) {
    let roles: unknown = Object.hasOwn(claims, mapping.rolesClaim)
      ? claims[mapping.rolesClaim]
      : undefined;
    if (roles === undefined) {
      roles = claims;
      for (const part of mapping.rolesClaim.split(".")) {
        roles = roles !== null && typeof roles === "object" && !Array.isArray(roles) &&
            Object.hasOwn(roles, part)
          ? (roles as Record<string, unknown>)[part]
          : undefined;
      }
    }
    for (const r of split(roles)) add(`ROLE_${r}`);
  }
  return out;
}

const word = fc.constantFrom("read", "write", "admin", "orders:read", "a", "", "__proto__", "x y");
const claimValue = fc.oneof(
  fc.array(word, { maxLength: 4 }).map((words) => words.join(" ")),
  fc.array(fc.oneof(word, fc.integer(), fc.constant(null)), { maxLength: 4 }),
  fc.constantFrom(null, 42, true, {}),
);
const claimName = fc.constantFrom(
  "scope",
  "scp",
  "roles",
  "permissions",
  "realm_access",
  "__proto__",
  "constructor",
);

describe("authoritiesOf", () => {
  it("maps scopes and roles as the reference model does", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          claimName,
          fc.oneof(claimValue, fc.dictionary(fc.constantFrom("roles", "x"), claimValue)),
        ),
        fc.record({
          authoritiesClaim: claimName,
          authorityPrefix: fc.constantFrom("SCOPE_", "", "perm:"),
          rolesClaim: fc.constantFrom(
            "roles",
            "realm_access.roles",
            "realm_access",
            "a.b.c",
            "constructor",
          ),
        }, { requiredKeys: ["authorityPrefix"] }),
        (claims, mapping) => {
          assert.deepEqual(authoritiesOf(claims, mapping), model(claims, mapping));
        },
      ),
      propertyOptions(300),
    );
  });

  it("reads Spring's cases", () => {
    const prefix = { authorityPrefix: "SCOPE_" };
    assert.deepEqual(authoritiesOf({ scope: "read  write read" }, prefix), [
      "SCOPE_read",
      "SCOPE_write",
    ]);
    assert.deepEqual(authoritiesOf({ scp: ["read", 7, "write"] }, prefix), [
      "SCOPE_read",
      "SCOPE_write",
    ]);
    // scope wins over scp, as in Spring.
    assert.deepEqual(authoritiesOf({ scope: "a", scp: ["b"] }, prefix), ["SCOPE_a"]);
    assert.deepEqual(authoritiesOf({ scope: null, scp: ["b"] }, prefix), ["SCOPE_b"]);
    assert.deepEqual(
      authoritiesOf({ permissions: ["orders:read"], scope: "x" }, {
        authoritiesClaim: "permissions",
        authorityPrefix: "",
      }),
      ["orders:read"],
    );
    // A claim named with dots (Auth0's namespaced claims) is read as it is before as a path.
    assert.deepEqual(
      authoritiesOf({ "https://example.com/roles": ["admin"] }, {
        ...prefix,
        rolesClaim: "https://example.com/roles",
      }),
      ["ROLE_admin"],
    );
    assert.deepEqual(authoritiesOf({}, { ...prefix, rolesClaim: "constructor" }), []);
    assert.deepEqual(authoritiesOf({}, { ...prefix, rolesClaim: "constructor.name" }), []);
  });
});
