// Bearer tokens of more than one kind on real workerd, against real servers on loopback
// (tests/fixtures/token_services_edge.ts): tokens of two trusted issuers accepted on one app and a
// third issuer's refused with no fetch made; opaque tokens introspected (active, inactive,
// expired, the endpoint down: 503 with the reason in the log, one introspection for 100
// concurrent requests); a client-credentials token fetched once for 100 concurrent calls and
// renewed before it expires; a relayed token reaching the next service; a @PostAuthorize refusal
// that leaks nothing. workerd runs each request's I/O in that request: these are the cases where
// one request waits on a fetch another one started.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "../security/issuer_server.ts";
import { IntrospectionServer } from "../security/introspection_server.ts";
import { ServiceServer, TokenEndpointServer } from "../security/token_endpoint_server.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/token_services_edge.ts", import.meta.url));
const SECRET = "s3cret:with+odd&chars";
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe("bearer tokens of many kinds on workerd", () => {
  let worker: ServedWorker;
  let keyA: SigningKey;
  let keyB: SigningKey;
  let issuerA: IssuerServer;
  let issuerB: IssuerServer;
  let stranger: IssuerServer;
  let introspection: IntrospectionServer;
  let tokens: TokenEndpointServer;
  let service: ServiceServer;
  let next: ServiceServer;

  before(async () => {
    [keyA, keyB] = await Promise.all([signingKey("a1"), signingKey("b1", "ES256")]);
    [issuerA, issuerB, stranger, introspection, tokens, service, next] = await Promise.all([
      IssuerServer.start([keyA]),
      IssuerServer.start([keyB]),
      IssuerServer.start([keyA]),
      IntrospectionServer.start("orders-api", SECRET),
      TokenEndpointServer.start("orders", SECRET),
      ServiceServer.start(),
      ServiceServer.start(),
    ]);
    worker = await serveWorker(FIXTURE, "token_services_edge", {
      flags: ["nodejs_als"],
      loopbackOutbound: true,
      bindings: {
        ISSUER_A: issuerA.url,
        ISSUER_B: issuerB.url,
        AUDIENCE_B: "orders",
        TOKEN_URL: tokens.tokenUrl,
        SERVICE_URL: service.url,
        NEXT_URL: next.url,
        INTROSPECTION_URL: introspection.url,
      },
      readyPath: "/ready",
    });
  });

  after(async () => {
    await worker?.close();
    await Promise.all(
      [issuerA, issuerB, stranger, introspection, tokens, service, next].map((s) => s?.down()),
    );
  });

  const call = async (path: string, bearer?: string) => {
    const response = await fetch(`${worker.origin}${path}`, {
      headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
    });
    return { status: response.status, headers: response.headers, body: await response.text() };
  };
  const ok = async (path: string, bearer: string) => {
    const answer = await call(path, bearer);
    assert.equal(answer.status, 200, `${path}: ${answer.body}\n${worker.output()}`);
    return answer.body;
  };

  it("accepts each trusted issuer's tokens, and refuses a third's with no fetch made", async () => {
    const a = await token(keyA, { iss: issuerA.url, sub: "ann", scope: "orders:read" }, Date.now());
    const b = await token(keyB, { iss: issuerB.url, sub: "bob", aud: "orders" }, Date.now());
    assert.equal(await ok("/jwt/me", a), '{"name":"ann","authorities":["SCOPE_orders:read"]}');
    assert.equal(await ok("/jwt/me", b), '{"name":"bob","authorities":[]}');
    // Issuer B asks for its audience; A's key does not verify B's tokens.
    const noAudience = await token(keyB, { iss: issuerB.url }, Date.now());
    const crossed = await token(keyA, { iss: issuerB.url, aud: "orders" }, Date.now());
    for (const refused of [noAudience, crossed]) {
      const answer = await call("/jwt/me", refused);
      assert.equal(answer.status, 401);
      assert.match(answer.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    }
    // Signed by a key issuer A trusts, naming a host of the caller's choosing: refused unseen.
    const third = await token(keyA, { iss: stranger.url }, Date.now());
    const answer = await call("/jwt/me", third);
    assert.equal(answer.status, 401);
    assert.match(answer.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal(stranger.hits.size, 0, "the app fetched from the issuer no one trusts");
    assert.equal(issuerA.count("jwks"), 1);
    assert.equal(issuerB.count("jwks"), 1);
  });

  it("lets an active opaque token in and refuses an inactive or expired one", async () => {
    introspection.fault = { kind: "none" };
    const now = Math.floor(Date.now() / 1000);
    introspection.tokens.set("live+/=", {
      active: true,
      sub: "ann",
      scope: "orders:read",
      exp: inAnHour(),
    });
    introspection.tokens.set("revoked", { active: false, sub: "ann" });
    introspection.tokens.set("stale", { active: true, sub: "ann", exp: now - 3600 });
    assert.equal(
      await ok("/opaque/me", "live+/="),
      '{"name":"ann","authorities":["SCOPE_orders:read"]}',
    );
    for (const refused of ["revoked", "stale", "unknown"]) {
      const answer = await call("/opaque/me", refused);
      assert.equal(answer.status, 401, refused);
      assert.match(answer.headers.get("www-authenticate") ?? "", /^Bearer error="invalid_token"/);
    }
    assert.deepEqual(
      introspection.asked.filter((t) => t === "live+/=" || t === "revoked"),
      ["live+/=", "revoked"],
    );
    assert.equal(introspection.refusedClients, 0);
  });

  it("introspects once for 100 concurrent requests with one token", async () => {
    introspection.fault = { kind: "none" };
    introspection.tokens.set("busy", { active: true, sub: "ann", exp: inAnHour() });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => call("/opaque/me", "busy")),
    );
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]), worker.output());
    assert.equal(introspection.asked.filter((t) => t === "busy").length, 1);
  });

  it("answers 503 while the introspection endpoint is down, saying why in the log", async () => {
    introspection.tokens.set("later", { active: true, sub: "ann", exp: inAnHour() });
    await introspection.down();
    try {
      const answer = await call("/opaque/me", "later");
      assert.equal(answer.status, 503, answer.body);
      assert.equal(answer.headers.get("retry-after"), "1");
      assert.match(answer.body, /the token could not be checked now; try again/);
      assert.match(worker.output(), /\(introspection-unavailable\).*no answer/);
      assert.doesNotMatch(worker.output(), /s3cret/);
    } finally {
      await introspection.up();
    }
    // Back: nothing of the outage was kept.
    assert.equal(await ok("/opaque/me", "later"), '{"name":"ann","authorities":[]}');
  });

  it("fetches one client-credentials token for 100 concurrent calls", async () => {
    tokens.requests.length = 0;
    tokens.expiresIn = 300;
    service.valid.add("t1");
    const caller = await token(keyA, { iss: issuerA.url }, Date.now());
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => call("/jwt/billing", caller)),
    );
    assert.deepEqual(
      new Set(answers.map((a) => `${a.status} ${a.body}`)),
      new Set(["200 200 served t1"]),
      worker.output(),
    );
    assert.equal(tokens.issued, 1);
    assert.equal(tokens.requests[0].get("scope"), "billing:write");
    assert.equal(service.calls.length, 100);
  });

  it("renews the token before it expires", async () => {
    // Renewed halfway through a lifetime this short: two seconds in.
    tokens.expiresIn = 4;
    service.valid.add("t2").add("t3");
    const caller = await token(keyA, { iss: issuerA.url }, Date.now());
    // The token held is the one of the last test: its lifetime is 300 s. Drop it: a 401.
    service.valid.delete("t1");
    assert.equal(await ok("/jwt/billing", caller), "200 served t2");
    const heldSince = Date.now();
    const seen: { sentAt: number; body: string }[] = [];
    // Until the worker renews it; a renewal that never comes fails at the test's own timeout.
    for (;;) {
      const sentAt = Date.now();
      const body = await ok("/jwt/billing", caller);
      seen.push({ sentAt, body });
      if (body !== "200 served t2") break;
    }
    assert.equal(seen.at(-1)?.body, "200 served t3");
    // A call sent once t2 had expired (it was issued before heldSince) could not have used it.
    for (const { sentAt, body } of seen.slice(0, -1)) {
      assert.equal(body, "200 served t2");
      assert.ok(sentAt < heldSince + 4_000, "the token was sent past its expiry");
    }
    assert.equal(tokens.issued, 3);
  });

  it("relays the caller's own token to the next service", async () => {
    const caller = await token(keyB, { iss: issuerB.url, aud: "orders", sub: "bob" }, Date.now());
    next.valid.add(caller);
    const before = next.calls.length;
    assert.equal(await ok("/jwt/relay", caller), `200 served ${caller}`);
    assert.deepEqual(next.calls.slice(before).map((c) => c.authorization), [`Bearer ${caller}`]);
  });

  it("refuses a @PostAuthorize result with a bare 403 that leaks nothing", async () => {
    const ann = await token(keyA, { iss: issuerA.url, sub: "ann" }, Date.now());
    assert.equal(await ok("/jwt/secret/ann", ann), '{"owner":"ann","code":"code-of-ann-7b1d"}');
    const bob = await token(keyA, { iss: issuerA.url, sub: "bob" }, Date.now());
    const refused = await call("/jwt/secret/ann", bob);
    assert.equal(refused.status, 403);
    assert.doesNotMatch(refused.body, /code-of/);
    assert.doesNotMatch(JSON.stringify([...refused.headers]), /code-of/);
    assert.doesNotMatch(worker.output(), /code-of/);
  });
});
