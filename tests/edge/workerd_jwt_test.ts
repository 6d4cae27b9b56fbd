// The resource server's verifier on real workerd: the key set fetched over workerd's own `fetch`
// from an issuer on loopback, tokens signed with RSA and ECDSA keys verified with its Web Crypto,
// the hostile ones of tests/security/hostile_tokens.ts refused with RFC 6750's answer, the cached
// keys kept while the key set's host is down or stops answering, and a flood of unknown key ids
// costing one fetch.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "../security/issuer_server.ts";
import { AUDIENCE, hostileTokens } from "../security/hostile_tokens.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";

const WORKER = fileURLToPath(new URL("../fixtures/jwt_worker.ts", import.meta.url));

describe("the JWT verifier on workerd", () => {
  let worker: ServedWorker;
  let issuer: IssuerServer;
  let rsa: SigningKey;
  let ec: SigningKey;
  /** A key the issuers do not serve (until a test rotates to it). */
  let stranger: SigningKey;

  before(async () => {
    [rsa, ec, stranger] = await Promise.all([
      signingKey("rsa1"),
      signingKey("ec1", "ES256"),
      signingKey("rsa2"),
    ]);
    issuer = await IssuerServer.start([rsa, ec]);
    worker = await serveWorker(WORKER, "jwt_worker", {
      loopbackOutbound: true,
      bindings: { JWKS_URL: issuer.jwksUrl, ISSUER: issuer.url, AUDIENCE },
      readyPath: "/failures",
    });
  });

  after(async () => {
    await worker?.close();
    await issuer?.down();
  });

  const call = (jwt: string) =>
    fetch(`${worker.origin}/orders`, { headers: { authorization: `Bearer ${jwt}` } });

  it("verifies RS256 and ES256 tokens with the fetched key set", async () => {
    for (const key of [rsa, ec]) {
      const response = await call(
        await token(key, { iss: issuer.url, aud: AUDIENCE, scope: "orders:read" }, Date.now()),
      );
      assert.equal(response.status, 200, `${await response.clone().text()}\n${worker.output()}`);
      assert.deepEqual(await response.json(), {
        name: "alice",
        authorities: ["SCOPE_orders:read"],
      });
    }
    assert.equal(issuer.count("jwks"), 1);
  });

  it("refuses each token of the shared hostile list with invalid_token and its reason", async () => {
    const hostile = await hostileTokens(rsa, stranger, issuer.url, Date.now());
    for (const { what, jwt } of hostile) {
      const response = await call(jwt);
      assert.equal(response.status, 401, what);
      assert.equal(
        response.headers.get("www-authenticate"),
        'Bearer realm="edge", error="invalid_token"',
        what,
      );
      assert.equal(await response.text(), '{"error":"invalid_token"}', what);
    }
    const failures = await (await fetch(`${worker.origin}/failures`)).json();
    assert.deepEqual(failures, hostile.map(({ reason }) => reason));
    const missing = await fetch(`${worker.origin}/orders`);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="edge"');
    await missing.body?.cancel();
  });

  it("refetches a stale key set within the request, so a rotation reaches the worker", async () => {
    const own = await IssuerServer.start([rsa]);
    const refetching = await serveWorker(WORKER, "jwt_worker_refetch", {
      loopbackOutbound: true,
      bindings: { JWKS_URL: own.jwksUrl, ISSUER: own.url, REFETCH_AT_ONCE: "true" },
      readyPath: "/failures",
    });
    try {
      const ask = async (jwt: string) => {
        const response = await fetch(`${refetching.origin}/orders`, {
          headers: { authorization: `Bearer ${jwt}` },
          signal: AbortSignal.timeout(20_000),
        });
        return [response.status, await response.text()];
      };
      const first = await token(rsa, { iss: own.url }, Date.now());
      for (let i = 1; i <= 3; i++) {
        assert.equal((await ask(first))[0], 200);
        assert.equal(own.count("jwks"), i, "each request finds the set stale and fetches it");
      }
      own.keys = [ec];
      const rotated = await token(ec, { iss: own.url }, Date.now());
      assert.deepEqual(await ask(rotated), [200, '{"name":"alice","authorities":[]}']);
      assert.deepEqual(await (await fetch(`${refetching.origin}/failures`)).json(), []);
    } finally {
      await refetching.close();
      await own.down();
    }
  });

  it("keeps verifying with the cached keys while the key set's host is down", async () => {
    const own = await IssuerServer.start([rsa]);
    // Stale at once: each request refetches the set within itself, as workerd needs.
    const served = await serveWorker(WORKER, "jwt_worker_down", {
      loopbackOutbound: true,
      bindings: { JWKS_URL: own.jwksUrl, ISSUER: own.url, REFETCH_AT_ONCE: "true" },
      readyPath: "/failures",
    });
    try {
      const ask = (key: SigningKey) => askWith(served, key, own);
      assert.equal(await ask(rsa), 200);
      await own.down();
      assert.equal(await ask(rsa), 200, "the cached key verifies");
      assert.equal(await ask(stranger), 401, "an unknown kid is refused, the host down");
      assert.equal(await ask(rsa), 200);
      const failures: string[] = await (await fetch(`${served.origin}/failures`)).json();
      // A fetch failed in each request; twice in the unknown kid's (no cooldown here): the set
      // was stale, then it had no such kid.
      assert.deepEqual(
        failures.map((f) => /the key set \(JWKS\) could not be fetched/.test(f) ? "fetch" : f),
        ["fetch", "fetch", "fetch", "unknown-key", "fetch"],
        failures.join("\n"),
      );
      // Back up, rotated: the next request's fetch brings the new key.
      own.keys = [rsa, stranger];
      await own.up();
      assert.equal(await ask(stranger), 200);
    } finally {
      await served.close();
      await own.down();
    }
  });

  it("verifies with the cached keys once a fetch from a host that stopped answering times out", async () => {
    const proxy = await tcpProxy("127.0.0.1", issuer.port);
    await proxy.up();
    const served = await serveWorker(WORKER, "jwt_worker_held", {
      loopbackOutbound: true,
      bindings: {
        JWKS_URL: issuer.jwksUrl.replace(`:${issuer.port}/`, `:${proxy.port}/`),
        ISSUER: issuer.url,
        REFETCH_AT_ONCE: "true",
        TIMEOUT_MS: "500",
      },
      readyPath: "/failures",
    });
    try {
      assert.equal(await askWith(served, rsa, issuer), 200);
      proxy.hold();
      // Within the request (workerd drops its I/O once it is answered): the fetch times out, and
      // the cached key verifies.
      assert.equal(await askWith(served, rsa, issuer), 200);
      const failures: string[] = await (await fetch(`${served.origin}/failures`)).json();
      assert.equal(failures.length, 1, failures.join("\n"));
      assert.match(failures[0], /the key set \(JWKS\) could not be fetched/);
    } finally {
      proxy.release();
      await served.close();
      await proxy.down();
    }
  });

  it("makes one fetch of a flood of unknown kids, side by side and one after the other", async () => {
    const own = await IssuerServer.start([rsa]);
    // A cooldown no run of the test outlasts: every fetch past the first is one it would allow.
    const served = await serveWorker(WORKER, "jwt_worker_flood", {
      loopbackOutbound: true,
      bindings: { JWKS_URL: own.jwksUrl, ISSUER: own.url, COOLDOWN_MS: "3600000" },
      readyPath: "/failures",
    });
    try {
      const flood = await Promise.all(
        Array.from(
          { length: 50 },
          (_, i) => token({ ...rsa, kid: `random-${i}` }, { iss: own.url }, Date.now()),
        ),
      );
      const send = async (jwt: string) => {
        const response = await fetch(`${served.origin}/orders`, {
          headers: { authorization: `Bearer ${jwt}` },
        });
        return [response.status, await response.text()];
      };
      const answers = await Promise.all(flood.map(send));
      for (const jwt of flood) answers.push(await send(jwt));
      for (const answer of answers) assert.deepEqual(answer, [401, '{"error":"invalid_token"}']);
      assert.deepEqual(
        await (await fetch(`${served.origin}/failures`)).json(),
        flood.concat(flood).map(() => "unknown-key"),
      );
      assert.equal(own.count("jwks"), 1);
      // The keys of that one fetch verify the issuer's tokens.
      assert.equal(await askWith(served, rsa, own), 200);
      assert.equal(own.count("jwks"), 1);
    } finally {
      await served.close();
      await own.down();
    }
  });
});

/** The status `served` answers a token of `key`, from `issuer`, valid but for its key. */
async function askWith(served: ServedWorker, key: SigningKey, issuer: IssuerServer) {
  const response = await fetch(`${served.origin}/orders`, {
    headers: { authorization: `Bearer ${await token(key, { iss: issuer.url }, Date.now())}` },
  });
  await response.body?.cancel();
  return response.status;
}
