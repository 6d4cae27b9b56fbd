// testTokens(): a test acts as a caller in one line. What the app makes of each token it signs
// (name, scopes, roles), that the app trusts only its key, and that its issuer and audience are
// checked once given.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { type Authentication, Principal, security, testTokens } from "../../security.ts";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { memoryLogger } from "../helpers.ts";

@RestController()
class Me {
  @GetMapping("/me", Principal())
  me(caller: Authentication): { name: string; authorities: readonly string[] } {
    return { name: caller.name, authorities: [...caller.authorities].sort() };
  }
}

async function appOf(config: Record<string, unknown>) {
  return await bootstrap({
    controllers: [Me],
    config,
    security: security(),
    logger: memoryLogger(),
  });
}

const me = (
  app: { fetch(request: Request): Response | Promise<Response> },
  authorization: string,
) => app.fetch(new Request("http://localhost/me", { headers: { authorization } }));

describe("testTokens", () => {
  it("signs tokens the app takes as the caller they name, with their scopes and roles", async () => {
    const tokens = await testTokens();
    const app = await appOf(tokens.config);
    try {
      const answer = await me(
        app,
        await tokens.bearer({
          sub: "ann",
          scope: ["orders:read", "orders:write"],
          roles: ["ADMIN"],
        }),
      );
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), {
        name: "ann",
        authorities: ["ROLE_ADMIN", "SCOPE_orders:read", "SCOPE_orders:write"],
      });
      // A scope as text, and the default name.
      const plain = await me(app, await tokens.bearer({ scope: "a b" }));
      assert.deepEqual(await plain.json(), { name: "user", authorities: ["SCOPE_a", "SCOPE_b"] });
    } finally {
      await app.close();
    }
  });

  it("makes a token that claims what it is given, valid for five minutes unless exp says", async () => {
    const tokens = await testTokens();
    const before = Math.floor(Date.now() / 1000);
    const token = await tokens.token({ sub: "ann", tenant: "t1" });
    const after = Math.floor(Date.now() / 1000);
    const claims = decodeJwt(token);
    assert.equal(claims.sub, "ann");
    assert.equal(claims.tenant, "t1");
    assert.ok(claims.iat! >= before && claims.iat! <= after);
    assert.equal(claims.exp! - claims.iat!, 300);
    assert.equal(decodeProtectedHeader(token).alg, "ES256");
    assert.equal(claims.iss, undefined);
    assert.equal((await tokens.bearer()).startsWith("Bearer ey"), true);
  });

  it("is refused by an app that trusts another key, and when expired", async () => {
    const tokens = await testTokens();
    const other = await testTokens();
    const app = await appOf(tokens.config);
    try {
      assert.equal((await me(app, await other.bearer({ sub: "ann" }))).status, 401);
      const expired = await tokens.bearer({ exp: Math.floor(Date.now() / 1000) - 3600 });
      const refused = await me(app, expired);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get("www-authenticate") ?? "", /invalid_token/);
    } finally {
      await app.close();
    }
  });

  it("has the app check its issuer and audience once given, and a roles claim of another name", async () => {
    const tokens = await testTokens({
      issuer: "https://id.example.com",
      audience: "orders",
      rolesClaim: "groups",
    });
    assert.equal(
      tokens.config.security.oauth2.resourceserver.jwt["issuer-uri"],
      "https://id.example.com",
    );
    const app = await appOf(tokens.config);
    try {
      const answer = await me(app, await tokens.bearer({ sub: "ann", roles: ["CLERK"] }));
      assert.equal(answer.status, 200);
      assert.deepEqual((await answer.json()).authorities, ["ROLE_CLERK"]);
      assert.deepEqual(decodeJwt(await tokens.token()).groups, undefined);
      // Another issuer or audience, claimed on purpose: refused.
      assert.equal(
        (await me(app, await tokens.bearer({ iss: "https://evil.example" }))).status,
        401,
      );
      assert.equal((await me(app, await tokens.bearer({ aud: "billing" }))).status, 401);
    } finally {
      await app.close();
    }
  });

  it("keeps its private key out of reach", async () => {
    const tokens = await testTokens();
    assert.deepEqual(Object.keys(tokens), ["config"]);
    assert.doesNotMatch(JSON.stringify(tokens.config), /PRIVATE/);
  });
});
