// Opaque tokens checked by a real introspection endpoint on loopback (RFC 7662): an active token
// lets its caller in and is introspected once while kept, never past its exp nor cache-ttl; an
// inactive, unknown or expired one is 401; an endpoint that is down, answers an error or junk, or
// hangs is 503 with the log saying why; 100 concurrent requests with one token cost one
// introspection.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { type Authentication, Principal, security } from "../../security.ts";
import { TokenIntrospector } from "../../src/security/token_introspector.ts";
import { TokenFailure } from "../../src/security/token_failure.ts";
import { memoryLogger } from "../helpers.ts";
import { IntrospectionServer } from "./introspection_server.ts";

@RestController()
class Me {
  @GetMapping("/me", Principal())
  me(caller: Authentication): { name: string; authorities: readonly string[] } {
    return { name: caller.name, authorities: [...caller.authorities].sort() };
  }
}

// A secret whose form-encoding differs from itself: the endpoint takes it only encoded right.
const SECRET = "s3cret:with+odd&chars";
const SHARED = { principalClaim: "sub", authorityPrefix: "SCOPE_", algorithms: [], clockSkewMs: 0 };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe("opaque tokens", () => {
  let endpoint: IntrospectionServer;
  before(async () => {
    endpoint = await IntrospectionServer.start("orders-api", SECRET);
  });
  after(() => endpoint.down());

  const start = async (opaquetoken: Record<string, unknown> = {}) => {
    const logger = memoryLogger();
    const app = await bootstrap({
      controllers: [Me],
      config: {
        security: {
          oauth2: {
            resourceserver: {
              opaquetoken: {
                "introspection-uri": endpoint.url,
                "client-id": "orders-api",
                "client-secret": SECRET,
                ...opaquetoken,
              },
            },
          },
        },
      },
      security: security({
        validators: [(claims) => claims.client_id === "evil" ? "not for this client" : undefined],
      }),
      logger,
    });
    const me = (token: string) =>
      app.fetch(
        new Request("http://localhost/me", { headers: { authorization: `Bearer ${token}` } }),
      );
    return { app, logger, me };
  };

  it("lets an active token's caller in, and asks once while it is kept", async () => {
    endpoint.fault = { kind: "none" };
    endpoint.tokens.set("a+b/c=", {
      active: true,
      sub: "ann",
      scope: "orders:read",
      exp: inAnHour(),
    });
    const { app, me } = await start();
    try {
      const before = endpoint.asked.length;
      for (let i = 0; i < 3; i++) {
        const answer = await me("a+b/c=");
        assert.equal(answer.status, 200);
        assert.deepEqual(await answer.json(), { name: "ann", authorities: ["SCOPE_orders:read"] });
      }
      // The token arrived as it is, whatever form-encoding does to + / =.
      assert.deepEqual(endpoint.asked.slice(before), ["a+b/c="]);
      assert.equal(endpoint.refusedClients, 0);
    } finally {
      await app.close();
    }
  });

  it("refuses an inactive, unknown, expired or not-yet-valid token, and one a validator refuses", async () => {
    endpoint.fault = { kind: "none" };
    const now = Math.floor(Date.now() / 1000);
    endpoint.tokens.set("revoked", { active: false, sub: "ann" });
    endpoint.tokens.set("stale", { active: true, sub: "ann", exp: now - 3600 });
    endpoint.tokens.set("early", { active: true, sub: "ann", nbf: now + 3600 });
    endpoint.tokens.set("evil", { active: true, sub: "eve", client_id: "evil" });
    endpoint.tokens.set("nameless", { active: true, scope: "x" });
    endpoint.tokens.set("truthy", { active: "true", sub: "ann" });
    const { app, logger, me } = await start();
    try {
      for (const token of ["revoked", "unknown", "stale", "early", "evil", "nameless", "truthy"]) {
        const refused = await me(token);
        assert.equal(refused.status, 401, token);
        assert.match(
          refused.headers.get("www-authenticate") ?? "",
          /^Bearer error="invalid_token"/,
        );
        await refused.body?.cancel();
      }
      const logged = logger.lines.map(([line]) => String(line)).join("\n");
      for (const reason of ["inactive", "expired", "not-yet-valid", "validator", "missing-claim"]) {
        assert.match(logged, new RegExp(`\\(${reason}\\)`));
      }
      assert.ok(!logged.includes("revoked"), "a token reached the log");
    } finally {
      await app.close();
    }
  });

  it("answers 503 while the endpoint cannot answer, saying why in the log", async () => {
    endpoint.tokens.set("good", { active: true, sub: "ann", exp: inAnHour() });
    const { app, logger, me } = await start({ "cache-ttl": 0 });
    try {
      const faults = [
        { kind: "status", status: 500 },
        { kind: "status", status: 401 },
        { kind: "junk", body: "<html>" },
        { kind: "junk", body: "[1]" },
      ] as const;
      for (const fault of faults) {
        endpoint.fault = fault;
        const answer = await me("good");
        assert.equal(answer.status, 503, JSON.stringify(fault));
        assert.equal(answer.headers.get("retry-after"), "1");
        assert.match(await answer.text(), /the token could not be checked now; try again/);
      }
      const logged = logger.lines.map(([line]) => String(line)).join("\n");
      assert.match(logged, /\(introspection-unavailable\).*answered 500, not 200/);
      assert.match(logged, /answered something that is not JSON/);
      assert.match(logged, /answered JSON that is not an object/);
      assert.ok(!logged.includes(SECRET), "the client secret reached the log");
      // Back: taken again, nothing kept from the faults.
      endpoint.fault = { kind: "none" };
      assert.equal((await me("good")).status, 200);
      await endpoint.down();
      const down = await me("good");
      assert.equal(down.status, 503);
      await down.body?.cancel();
      assert.match(logger.lines.map(([l]) => String(l)).join("\n"), /no answer/);
    } finally {
      await endpoint.up();
      await app.close();
    }
  });

  it("gives up on an endpoint that never answers within its timeout", async () => {
    endpoint.fault = { kind: "hang" };
    const introspector = new TokenIntrospector(
      {
        introspectionUri: endpoint.url,
        clientId: "orders-api",
        clientSecret: SECRET,
        cacheTtlMs: 0,
      },
      SHARED,
      [],
      { timeoutMs: 200 },
    );
    try {
      await assert.rejects(
        introspector.authenticate("good"),
        (error: unknown) =>
          error instanceof TokenFailure && error.reason === "introspection-unavailable",
      );
    } finally {
      endpoint.fault = { kind: "none" };
    }
  });

  it("checks an active token's aud against jwt.audiences, and keeps its caller frozen", async () => {
    endpoint.fault = { kind: "none" };
    endpoint.tokens.set("for-orders", {
      active: true,
      sub: "ann",
      aud: ["orders"],
      exp: inAnHour(),
    });
    endpoint.tokens.set("for-billing", {
      active: true,
      sub: "ann",
      aud: "billing",
      exp: inAnHour(),
    });
    endpoint.tokens.set("for-nobody", { active: true, sub: "ann", exp: inAnHour() });
    const introspector = new TokenIntrospector(
      {
        introspectionUri: endpoint.url,
        clientId: "orders-api",
        clientSecret: SECRET,
        cacheTtlMs: 60_000,
      },
      SHARED,
      [],
      { audiences: ["orders"] },
    );
    const caller = await introspector.authenticate("for-orders");
    assert.equal(caller.name, "ann");
    // One caller serves every request with the token: none may change it for the next.
    assert.ok(Object.isFrozen(caller) && Object.isFrozen(caller.claims));
    assert.ok(Object.isFrozen(caller.authorities) && Object.isFrozen(caller.claims.aud));
    for (const token of ["for-billing", "for-nobody"]) {
      await assert.rejects(introspector.authenticate(token), /\(wrong-audience\)/);
    }
  });

  it("gives up on an introspection that never settles, and asks again at the next request", async () => {
    let asked = 0;
    const introspector = new TokenIntrospector(
      {
        introspectionUri: endpoint.url,
        clientId: "orders-api",
        clientSecret: SECRET,
        cacheTtlMs: 0,
      },
      SHARED,
      [],
      {
        timeoutMs: 100,
        // Neither answers nor hears its abort, as a fetch whose request went away on workerd.
        fetch: () => {
          asked++;
          return new Promise<Response>(() => {});
        },
      },
    );
    for (let i = 0; i < 2; i++) {
      await assert.rejects(introspector.authenticate("stuck"), /\(introspection-unavailable\)/);
    }
    assert.equal(asked, 2);
  });

  it("keeps an answer no longer than cache-ttl, nor past the token's exp", async () => {
    endpoint.fault = { kind: "none" };
    let now = Date.now();
    const exp = Math.floor(now / 1000) + 30;
    endpoint.tokens.set("short", { active: true, sub: "ann", exp });
    endpoint.tokens.set("long", { active: true, sub: "bob", exp: exp + 3600 });
    const introspector = new TokenIntrospector(
      {
        introspectionUri: endpoint.url,
        clientId: "orders-api",
        clientSecret: SECRET,
        cacheTtlMs: 60_000,
      },
      SHARED,
      [],
      { now: () => now },
    );
    const asked = (token: string) => endpoint.asked.filter((t) => t === token).length;
    const before = { short: asked("short"), long: asked("long") };
    await introspector.authenticate("short");
    await introspector.authenticate("long");
    now += 20_000;
    await introspector.authenticate("short");
    await introspector.authenticate("long");
    assert.deepEqual({ short: asked("short"), long: asked("long") }, {
      short: before.short + 1,
      long: before.long + 1,
    });
    // Past the short token's exp: asked again, and refused as expired.
    now = exp * 1000 + 1;
    await assert.rejects(introspector.authenticate("short"), /\(expired\)/);
    assert.equal(asked("short"), before.short + 2);
    // Past cache-ttl: the long one is asked again.
    now += 45_000;
    await introspector.authenticate("long");
    assert.equal(asked("long"), before.long + 2);
  });

  it("introspects once for 100 concurrent requests with one token", async () => {
    endpoint.fault = { kind: "none" };
    endpoint.tokens.set("busy", { active: true, sub: "ann", exp: inAnHour() });
    const { app, me } = await start();
    try {
      const before = endpoint.asked.filter((t) => t === "busy").length;
      const answers = await Promise.all(Array.from({ length: 100 }, () => me("busy")));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      await Promise.all(answers.map((a) => a.body?.cancel()));
      assert.equal(endpoint.asked.filter((t) => t === "busy").length, before + 1);
    } finally {
      await app.close();
    }
  });

  it("stops bootstrap for settings it cannot use", async () => {
    const refused = async (
      opaquetoken: Record<string, unknown>,
      extra: Record<string, unknown>,
      said: RegExp,
    ) =>
      await assert.rejects(
        bootstrap({
          config: { security: { oauth2: { resourceserver: { opaquetoken, ...extra } } } },
          security: security(),
          logger: memoryLogger(),
        }),
        said,
      );
    const full = { "introspection-uri": endpoint.url, "client-id": "a", "client-secret": "b" };
    await refused(
      { ...full, "client-secret": undefined },
      {},
      /client-secret: give the resource server's/,
    );
    await refused({ "client-id": "a" }, {}, /client-id: set introspection-uri too/);
    await refused({ ...full, "introspection-uri": "file:///x" }, {}, /give an http\(s\) URL/);
    await refused({ ...full, "cache-ttl": "2h" }, {}, /cache-ttl/);
    await refused(
      full,
      { jwt: { "jwk-set-uri": "https://k.example.com" } },
      /either JWTs .* or opaque/,
    );
  });
});
