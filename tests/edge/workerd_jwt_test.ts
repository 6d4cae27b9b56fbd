// The resource server's verifier on real workerd: the key set fetched over workerd's own `fetch`
// from an issuer on loopback, tokens signed with RSA and ECDSA keys verified with its Web Crypto,
// hostile ones refused with RFC 6750's answer.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "../security/issuer_server.ts";

const WORKER = fileURLToPath(new URL("../fixtures/jwt_worker.ts", import.meta.url));

describe("the JWT verifier on workerd", () => {
  let worker: ServedWorker;
  let issuer: IssuerServer;
  let rsa: SigningKey;
  let ec: SigningKey;

  before(async () => {
    [rsa, ec] = await Promise.all([signingKey("rsa1"), signingKey("ec1", "ES256")]);
    issuer = await IssuerServer.start([rsa, ec]);
    worker = await serveWorker(WORKER, "jwt_worker", {
      loopbackOutbound: true,
      bindings: { JWKS_URL: issuer.jwksUrl, ISSUER: issuer.url },
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
        await token(key, { iss: issuer.url, scope: "orders:read" }, Date.now()),
      );
      assert.equal(response.status, 200, `${await response.clone().text()}\n${worker.output()}`);
      assert.deepEqual(await response.json(), {
        name: "alice",
        authorities: ["SCOPE_orders:read"],
      });
    }
    assert.equal(issuer.count("jwks"), 1);
  });

  it("refuses expired, foreign and unsigned tokens with invalid_token", async () => {
    const now = Date.now();
    const seconds = Math.floor(now / 1000);
    const none =
      [{ alg: "none", typ: "JWT" }, { sub: "mallory", iss: issuer.url, exp: seconds + 60 }]
        .map((part) =>
          btoa(JSON.stringify(part)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")
        )
        .join(".") + ".";
    const hostile = [
      await token(rsa, { iss: issuer.url, exp: seconds - 3600 }, now),
      await token(rsa, { iss: "http://evil.example" }, now),
      none,
    ];
    for (const jwt of hostile) {
      const response = await call(jwt);
      assert.equal(response.status, 401);
      assert.equal(
        response.headers.get("www-authenticate"),
        'Bearer realm="edge", error="invalid_token"',
      );
      assert.equal(await response.text(), '{"error":"invalid_token"}');
    }
    const failures = await (await fetch(`${worker.origin}/failures`)).json();
    assert.deepEqual(failures, ["expired", "wrong-issuer", "algorithm-not-allowed"]);
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
});
