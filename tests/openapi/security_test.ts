import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { SecurityRequirement } from "../../mod.ts";
import { allOf, guardOf } from "../../src/openapi/security.ts";
import { propertyOptions } from "../property.ts";

/** Whether a client holding `held` (scheme -> its scopes) gets past `requirements`. */
function satisfied(
  requirements: readonly SecurityRequirement[],
  held: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  return requirements.length === 0 ||
    requirements.some((requirement) =>
      Object.entries(requirement).every(([scheme, scopes]) =>
        held.has(scheme) && scopes.every((scope) => held.get(scheme)!.has(scope))
      )
    );
}

const scheme = fc.constantFrom("bearer", "apiKey", "oauth", "__proto__");
const scopes = fc.uniqueArray(fc.constantFrom("read", "write", "admin"), { maxLength: 2 });
const requirement = fc.dictionary(scheme, scopes, { maxKeys: 3 }).map((r) =>
  Object.fromEntries(Object.entries(r)) as SecurityRequirement
);
const requirements = fc.array(requirement, { maxLength: 3 });
const held = fc.array(fc.tuple(scheme, scopes), { maxLength: 4 }).map((pairs) =>
  new Map(pairs.map(([s, sc]) => [s, new Set(sc)]))
);

describe("allOf: what several guards in a row require", () => {
  it("lets a client through exactly when each guard would (property)", () => {
    fc.assert(
      fc.property(fc.array(requirements, { maxLength: 4 }), held, (lists, credentials) => {
        const combined = allOf(lists);
        assert.equal(
          satisfied(combined, credentials),
          lists.every((list) => satisfied(list, credentials)),
        );
      }),
      propertyOptions(300),
    );
  });

  it("lists each alternative once, and nothing for guards that require nothing", () => {
    assert.deepEqual(allOf([]), []);
    assert.deepEqual(allOf([[], []]), []);
    assert.deepEqual(allOf([[{ a: [] }], [{ a: [] }]]), [{ a: [] }]);
    assert.deepEqual(allOf([[{ a: ["r"] }, { b: [] }], [{ c: [] }]]), [
      { a: ["r"], c: [] },
      { b: [], c: [] },
    ]);
    // One scheme needed by two guards: the scopes of both.
    assert.deepEqual(allOf([[{ o: ["read"] }], [{ o: ["write", "read"] }]]), [
      { o: ["read", "write"] },
    ]);
  });

  it("keeps a scheme named __proto__ as a scheme", () => {
    const [only] = allOf([[JSON.parse('{"__proto__": ["x"]}')]]);
    assert.deepEqual(Object.keys(only), ["__proto__"]);
    assert.equal(JSON.stringify(only), '{"__proto__":["x"]}');
  });
});

describe("guardOf: a middleware's describe() answer, checked", () => {
  const bearer = { type: "http", scheme: "bearer" } as const;

  it("requires any one of its schemes unless it says otherwise", () => {
    const guard = guardOf({
      securitySchemes: { bearer, key: { type: "apiKey", name: "x-key", in: "header" } },
      responses: { 401: "No token", 403: { description: "Not yours" } },
    }, "Guard")!;
    assert.deepEqual(guard.security, [{ bearer: [] }, { key: [] }]);
    assert.deepEqual([...guard.responses], [[401, { description: "No token" }], [403, {
      description: "Not yours",
    }]]);
    assert.deepEqual(guardOf({ securitySchemes: { bearer }, security: [] }, "G")!.security, []);
    assert.equal(guardOf(undefined, "G"), undefined);
  });

  it("refuses what would make a wrong document, naming the middleware", () => {
    const cases: [unknown, RegExp][] = [
      [null, /Middleware Guard: describe\(\) returned null, not an object/],
      [{ securitySchemas: {} }, /unknown key "securitySchemas".*securitySchemes/],
      [{ securitySchemes: { b: { type: "http" } } }, /securitySchemes\.b: .*scheme/],
      [{ securitySchemes: { b: { type: "bearer" } } }, /securitySchemes\.b: type "bearer"/],
      [{ securitySchemes: { k: { type: "apiKey", name: "k", in: "body" } } }, /in: "body"/],
      [{ securitySchemes: { o: { type: "oauth2" } } }, /securitySchemes\.o: .*flows/],
      [{ securitySchemes: { "": bearer } }, /a scheme needs a name/],
      [{ security: {} }, /security: an array of requirements/],
      [{ security: [{ b: "read" }] }, /security\[0\]\.b: an array of scope names/],
      [{ responses: { 99: "x" } }, /responses: status 99 is not 100 to 599/],
      [{ responses: { abc: "x" } }, /responses: status abc is not 100 to 599/],
      [{ responses: { 401: 5 } }, /responses\.401: a description or/],
    ];
    for (const [value, message] of cases) {
      assert.throws(() => guardOf(value, "Guard"), message, JSON.stringify(value));
    }
  });
});
