// The resource server's token check against an identity provider on loopback (its discovery
// document and key set over real HTTP), with hostile tokens, key rotation and the host going down.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as jose from "jose";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_keys.ts";
import { type JwtSettings, jwtSettings } from "../../src/security/jwt_settings.ts";
import { JwtVerifier, type JwtVerifierOptions } from "../../src/security/jwt_verifier.ts";
import { TokenFailure, type TokenFailureReason } from "../../src/security/token_failure.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";
import { AUDIENCE, hostileTokens } from "./hostile_tokens.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { freePort } from "../free_port.ts";
import { createServer } from "node:http";

function settingsOf(jwt: Record<string, unknown>): JwtSettings {
  const settings = jwtSettings(
    readSettings(resolveConfig({ security: { oauth2: { resourceserver: { jwt } } } }, () => {
      return undefined;
    })),
  );
  assert.ok(settings !== undefined);
  return settings;
}

/** Time the test moves: the wall clock for `exp`, the monotonic one for the key set. */
function testClock(): { now(): number; monotonic(): number; advance(ms: number): void } {
  let wall = Date.UTC(2026, 10, 28, 12);
  let mono = 1_000_000;
  return {
    now: () => wall,
    monotonic: () => mono,
    advance(ms) {
      wall += ms;
      mono += ms;
    },
  };
}

async function refusal(verifier: JwtVerifier, jwt: string): Promise<TokenFailureReason> {
  try {
    await verifier.verify(jwt);
  } catch (error) {
    assert.ok(error instanceof TokenFailure, String(error));
    // Nothing of the token reaches the message, and jose's error (which holds its claims) is not kept.
    for (const part of jwt.split(".")) {
      if (part.length > 8) assert.ok(!error.message.includes(part), error.message);
    }
    if (error.reason !== "keys-unavailable") assert.equal(error.cause, undefined);
    return error.reason;
  }
  assert.fail("the token was accepted");
}

function unsigned(claims: jose.JWTPayload): string {
  const part = (value: unknown) => jose.base64url.encode(JSON.stringify(value));
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
}

describe("JwtVerifier", () => {
  let k1: SigningKey;
  let k2: SigningKey;
  let ec: SigningKey;
  let issuer: IssuerServer;

  before(async () => {
    [k1, k2, ec] = await Promise.all([
      signingKey("k1"),
      signingKey("k2"),
      signingKey("ec1", "ES256"),
    ]);
    issuer = await IssuerServer.start([k1, ec]);
  });
  after(async () => await issuer.down());

  const make = (jwt: Record<string, unknown>, options: JwtVerifierOptions) =>
    JwtVerifier.create(settingsOf(jwt), options);

  it("verifies a token of the issuer found through discovery, RS256 and ES256", async () => {
    const clock = testClock();
    const before = issuer.count("discovery");
    const verifier = await make({ "issuer-uri": issuer.url }, { clock });
    assert.equal(issuer.count("discovery"), before, "nothing is fetched before the first token");
    const verified = await verifier.verify(await token(k1, { iss: issuer.url }, clock.now()));
    assert.equal(verified.claims.sub, "alice");
    assert.equal(verified.header.kid, "k1");
    assert.equal(
      (await verifier.verify(await token(ec, { iss: issuer.url }, clock.now()))).claims.sub,
      "alice",
    );
    assert.equal(issuer.count("discovery"), before + 1);
  });

  it("refuses expired and not yet valid tokens, beyond the clock skew only", async () => {
    const clock = testClock();
    const verifier = await make({ "issuer-uri": issuer.url }, { clock });
    const now = Math.floor(clock.now() / 1000);
    const at = (claims: jose.JWTPayload) => token(k1, { iss: issuer.url, ...claims }, clock.now());
    assert.equal(await refusal(verifier, await at({ exp: now - 61 })), "expired");
    await verifier.verify(await at({ exp: now - 59 }));
    assert.equal(await refusal(verifier, await at({ nbf: now + 61 })), "not-yet-valid");
    await verifier.verify(await at({ nbf: now + 59 }));
    const strict = await make({ "issuer-uri": issuer.url, "clock-skew": "0s" }, { clock });
    assert.equal(await refusal(strict, await at({ exp: now - 1 })), "expired");
    // A token without `exp` never expires: refused.
    const forever = await new jose.SignJWT({ sub: "alice", iss: issuer.url })
      .setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(k1.privateKey);
    assert.equal(await refusal(verifier, forever), "missing-claim");
  });

  it("refuses another issuer and another audience", async () => {
    const clock = testClock();
    const verifier = await make({ "issuer-uri": issuer.url, audiences: ["orders", "users"] }, {
      clock,
    });
    const at = (claims: jose.JWTPayload) => token(k1, claims, clock.now());
    assert.equal(
      await refusal(verifier, await at({ iss: "http://evil.example", aud: "orders" })),
      "wrong-issuer",
    );
    assert.equal(
      await refusal(verifier, await at({ iss: issuer.url, aud: "billing" })),
      "wrong-audience",
    );
    assert.equal(await refusal(verifier, await at({ iss: issuer.url })), "missing-claim");
    await verifier.verify(await at({ iss: issuer.url, aud: ["billing", "users"] }));
  });

  it("names the claim a token lacks", async () => {
    const clock = testClock();
    const verifier = await make({ "issuer-uri": issuer.url, audiences: ["orders"] }, { clock });
    const failure = async (jwt: string): Promise<TokenFailure> => {
      const error = await verifier.verify(jwt).then(() => undefined, (error: unknown) => error);
      assert.ok(error instanceof TokenFailure, String(error));
      return error;
    };
    const signed = (claims: jose.JWTPayload) =>
      new jose.SignJWT({ sub: "alice", ...claims })
        .setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(k1.privateKey);
    const exp = Math.floor(clock.now() / 1000) + 600;
    const lacking = {
      exp: await signed({ iss: issuer.url, aud: "orders" }),
      iss: await signed({ aud: "orders", exp }),
      aud: await signed({ iss: issuer.url, exp }),
    };
    for (const [claim, jwt] of Object.entries(lacking)) {
      const { reason, message, claim: named } = await failure(jwt);
      assert.equal(reason, "missing-claim", claim);
      assert.equal(named, claim);
      assert.equal(
        message,
        `bearer token refused (missing-claim): the token lacks the claim "${claim}"`,
      );
    }
  });

  it("refuses alg none, HS256 signed with the public key, and a forged signature", async () => {
    const clock = testClock();
    const pem = await jose.exportSPKI(k1.publicKey);
    const verifiers = [
      await make({ "issuer-uri": issuer.url }, { clock }),
      await make({ "public-key": pem, "issuer-uri": issuer.url }, { clock }),
    ];
    const claims = { iss: issuer.url, sub: "mallory" };
    const secrets = [
      new TextEncoder().encode(pem),
      new TextEncoder().encode(JSON.stringify(k1.jwk)),
      jose.base64url.decode(k1.jwk.n!),
    ];
    for (const verifier of verifiers) {
      assert.equal(
        await refusal(verifier, unsigned({ ...claims, exp: 2e9 })),
        "algorithm-not-allowed",
      );
      for (const secret of secrets) {
        const hs = await token(
          { kid: "k1", alg: "HS256", privateKey: secret },
          claims,
          clock.now(),
        );
        assert.equal(await refusal(verifier, hs), "algorithm-not-allowed");
      }
      // k2 signs, claiming to be k1 (k2 is not served yet).
      const forged = await token({ ...k2, kid: "k1" }, claims, clock.now());
      assert.equal(await refusal(verifier, forged), "bad-signature");
      // The payload changed after signing.
      const [h, , s] = (await token(k1, claims, clock.now())).split(".");
      const changed = `${h}.${
        jose.base64url.encode(JSON.stringify({ ...claims, sub: "root", exp: 2e9 }))
      }.${s}`;
      assert.equal(await refusal(verifier, changed), "bad-signature");
      assert.equal(await refusal(verifier, "not.a.token"), "malformed");
      assert.equal(await refusal(verifier, ""), "malformed");
      assert.equal(await refusal(verifier, "x".repeat(70_000)), "malformed");
    }
    // An algorithm left out of jws-algorithms is refused before any key is looked at.
    const rsOnly = await make({ "issuer-uri": issuer.url, "jws-algorithms": "RS256" }, { clock });
    assert.equal(
      await refusal(rsOnly, await token(ec, { iss: issuer.url }, clock.now())),
      "algorithm-not-allowed",
    );
  });

  it("refuses each token of the shared hostile list with its reason", async () => {
    const clock = testClock();
    const verifier = await make({ "issuer-uri": issuer.url, audiences: [AUDIENCE] }, { clock });
    for (const { what, jwt, reason } of await hostileTokens(k1, k2, issuer.url, clock.now())) {
      assert.equal(await refusal(verifier, jwt), reason, what);
    }
    // Each is refused for what it tries alone: the same claims, signed by the issuer, verify.
    await verifier.verify(await token(k1, { iss: issuer.url, aud: AUDIENCE }, clock.now()));
  });

  it("fetches the key set again for an unknown kid, once per cooldown, and takes a rotated key", async () => {
    const clock = testClock();
    issuer.keys = [k1];
    const verifier = await make({ "jwk-set-uri": issuer.jwksUrl }, { clock, cooldownMs: 30_000 });
    const start = issuer.count("jwks");
    await verifier.verify(await token(k1, {}, clock.now()));
    assert.equal(issuer.count("jwks"), start + 1);
    // The issuer rotates: k2 signs from now on.
    issuer.keys = [k1, k2];
    const rotated = await token(k2, {}, clock.now());
    // Within the cooldown of the first fetch, the set is not fetched again.
    assert.equal(await refusal(verifier, rotated), "unknown-key");
    assert.equal(issuer.count("jwks"), start + 1);
    clock.advance(30_000);
    assert.equal((await verifier.verify(rotated)).header.kid, "k2");
    assert.equal(issuer.count("jwks"), start + 2);
    await verifier.verify(await token(k1, {}, clock.now()));
    assert.equal(issuer.count("jwks"), start + 2, "known keys need no fetch");
    issuer.keys = [k1, ec];
  });

  it("makes one fetch of a flood of unknown kids", async () => {
    const clock = testClock();
    const verifier = await make({ "issuer-uri": issuer.url }, { clock });
    await verifier.verify(await token(k1, { iss: issuer.url }, clock.now()));
    clock.advance(30_000);
    const start = issuer.count("jwks");
    const discovered = issuer.count("discovery");
    const flood = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) => token({ ...k1, kid: `random-${i}` }, { iss: issuer.url }, clock.now()),
      ),
    );
    // Side by side, then one after the other.
    const reasons = await Promise.all(flood.map((jwt) => refusal(verifier, jwt)));
    for (const jwt of flood) reasons.push(await refusal(verifier, jwt));
    assert.deepEqual(new Set(reasons), new Set(["unknown-key"]));
    assert.equal(issuer.count("jwks"), start + 1);
    assert.equal(issuer.count("discovery"), discovered, "the discovery document is read once");
  });

  it("keeps verifying with the cached keys while the key set's host is down", async () => {
    const clock = testClock();
    const own = await IssuerServer.start([k1]);
    const failures: Error[] = [];
    let failed: () => void = () => {};
    const verifier = await make({ "issuer-uri": own.url }, {
      clock,
      maxAgeMs: 300_000,
      onKeyFetchFailed: (error) => {
        failures.push(error);
        failed();
      },
    });
    try {
      await verifier.verify(await token(k1, { iss: own.url }, clock.now()));
      await own.down();
      // Past the set's age: a refetch starts, and fails, while the cached keys verify.
      clock.advance(300_000);
      const seen = new Promise<void>((resolve) => failed = resolve);
      assert.equal(
        (await verifier.verify(await token(k1, { iss: own.url }, clock.now()))).claims.sub,
        "alice",
      );
      await seen;
      assert.match(failures[0].message, /the key set \(JWKS\) could not be fetched/);
      assert.doesNotMatch(failures[0].message, /eyJ/);
      // Still down, an unknown kid within the cooldown tries no fetch; the known key still verifies.
      assert.equal(
        await refusal(verifier, await token(k2, { iss: own.url }, clock.now())),
        "unknown-key",
      );
      assert.equal(failures.length, 1);
      await verifier.verify(await token(k1, { iss: own.url }, clock.now()));
      // Back up, rotated: the next allowed fetch brings the new key.
      own.keys = [k1, k2];
      await own.up();
      clock.advance(30_000);
      assert.equal(
        (await verifier.verify(await token(k2, { iss: own.url }, clock.now()))).header.kid,
        "k2",
      );
    } finally {
      await own.down();
    }
  });

  it("says the keys are unavailable when the first fetch fails, and tries again a second later", async () => {
    const clock = testClock();
    const own = await IssuerServer.start([k1]);
    await own.down();
    const verifier = await make({ "issuer-uri": own.url }, { clock });
    const jwt = await token(k1, { iss: own.url }, clock.now());
    assert.equal(await refusal(verifier, jwt), "keys-unavailable");
    await own.up();
    try {
      assert.equal(await refusal(verifier, jwt), "keys-unavailable");
      assert.equal(own.count("discovery"), 0, "within the wait");
      clock.advance(1_000);
      await verifier.verify(jwt);
    } finally {
      await own.down();
    }
  });

  it("refuses a discovery document that names another issuer", async () => {
    const clock = testClock();
    const own = await IssuerServer.start([k1]);
    own.issuerClaim = "http://evil.example/realms/test";
    const errors: Error[] = [];
    const verifier = await make({ "issuer-uri": own.url }, {
      clock,
      onKeyFetchFailed: (error) => errors.push(error),
    });
    try {
      assert.equal(
        await refusal(verifier, await token(k1, { iss: own.url }, clock.now())),
        "keys-unavailable",
      );
      assert.match(
        errors[0].message,
        /names the issuer "http:\/\/evil\.example\/realms\/test", not http/,
      );
      assert.equal(own.count("jwks"), 0);
    } finally {
      await own.down();
    }
  });

  it("verifies with one public key, given inline or as a file", async () => {
    const clock = testClock();
    const pem = await jose.exportSPKI(ec.publicKey);
    const inline = await make({ "public-key": pem }, { clock });
    assert.equal((await inline.verify(await token(ec, {}, clock.now()))).claims.sub, "alice");
    assert.equal(await refusal(inline, await token(k1, {}, clock.now())), "unknown-key");
    const file = await make({ "public-key-location": "/keys/issuer.pem" }, {
      clock,
      readFile: (path) =>
        path === "/keys/issuer.pem" ? Promise.resolve(pem) : Promise.reject(new Error("no file")),
    });
    await file.verify(await token(ec, {}, clock.now()));
    await assert.rejects(
      make({ "public-key": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----" }, {
        clock,
      }),
      /public-key: not a PEM public key/,
    );
    await assert.rejects(
      make({ "public-key-location": "/nowhere/issuer.pem" }, { clock }),
      /public-key-location \(\/nowhere\/issuer\.pem\): cannot be read/,
    );
  });

  it("verifies with the cached keys at once while the key set's host stops answering", async () => {
    const proxy = await tcpProxy("127.0.0.1", issuer.port);
    await proxy.up();
    const jwksUrl = issuer.jwksUrl.replace(`:${issuer.port}/`, `:${proxy.port}/`);
    try {
      // The first fetch, through the proxy still open, must answer within the fetch's timeout,
      // which a loaded machine can miss: the timeout doubles (to at most 30 s) until it did.
      const warmed = async (staleInRequest: boolean, timeoutMs = 300) => {
        const clock = testClock();
        let failed: (error: Error) => void = () => {};
        const failure = new Promise<Error>((resolve) => failed = resolve);
        const verifier = await make({ "jwk-set-uri": jwksUrl }, {
          clock,
          timeoutMs,
          staleInRequest,
          onKeyFetchFailed: (error) => failed(error),
        });
        try {
          await verifier.verify(await token(k1, {}, clock.now()));
        } catch (error) {
          const late = error instanceof TokenFailure && error.reason === "keys-unavailable";
          if (!late || timeoutMs === 30_000) throw error;
          return warmed(staleInRequest, Math.min(timeoutMs * 2, 30_000));
        }
        return { clock, failure, verifier };
      };
      for (const staleInRequest of [false, true]) {
        proxy.release();
        const { clock, failure, verifier } = await warmed(staleInRequest);
        proxy.hold();
        clock.advance(300_000);
        // Stale: refetched in the background (or, as on workerd, within the request, which then
        // waits out the fetch's timeout); either way the cached key verifies.
        const verified = verifier.verify(await token(k1, {}, clock.now()));
        if (!staleInRequest) assert.equal((await verified).claims.sub, "alice");
        assert.match((await failure).message, /could not be fetched/);
        assert.equal((await verified).claims.sub, "alice");
      }
    } finally {
      await proxy.down();
    }
  });

  it("gives up on a fetch that never settles, as workerd leaves one whose request went away", async () => {
    const clock = testClock();
    let fetches = 0;
    const verifier = await make({ "jwk-set-uri": issuer.jwksUrl }, {
      clock,
      timeoutMs: 10,
      fetch: () => {
        fetches++;
        return new Promise<Response>(() => {});
      },
    });
    const jwt = await token(k1, {}, clock.now());
    const reasons = await Promise.all([refusal(verifier, jwt), refusal(verifier, jwt)]);
    assert.deepEqual(reasons, ["keys-unavailable", "keys-unavailable"]);
    assert.equal(fetches, 1);
  });
  it("tries each key of the set that fits a token without a kid", async () => {
    const clock = testClock();
    issuer.keys = [k1, k2];
    try {
      const verifier = await make({ "jwk-set-uri": issuer.jwksUrl }, { clock });
      for (const key of [k1, k2]) {
        const anonymous = await token(
          { ...key, kid: undefined as unknown as string },
          {},
          clock.now(),
        );
        assert.equal(JSON.parse(atob(anonymous.split(".")[0])).kid, undefined);
        assert.equal((await verifier.verify(anonymous)).claims.sub, "alice");
      }
      // Signed by neither: refused as a forged signature.
      const forged = await token(
        { ...ec, alg: "ES256", kid: undefined as unknown as string },
        {},
        clock.now(),
      );
      const [head, body] = (await token(
        { ...k1, kid: undefined as unknown as string },
        { sub: "mallory" },
        clock.now(),
      )).split(".");
      const wrong = `${head}.${body}.${
        (await token({ ...k2, kid: undefined as unknown as string }, {}, clock.now())).split(".")[2]
      }`;
      assert.equal(await refusal(verifier, wrong), "bad-signature");
      assert.equal(await refusal(verifier, forged), "unknown-key");
    } finally {
      issuer.keys = [k1, ec];
    }
  });

  it("takes no key set from where the key set's host redirects", async () => {
    // Another party's keys, which the configured host sends clients to.
    const elsewhere = await IssuerServer.start([k2]);
    const port = await freePort();
    const redirecting = createServer((_req, res) =>
      res.writeHead(302, { location: elsewhere.jwksUrl }).end()
    );
    await new Promise<void>((resolve) => redirecting.listen(port, "127.0.0.1", resolve));
    try {
      const clock = testClock();
      const failures: Error[] = [];
      const verifier = await make({ "jwk-set-uri": `http://127.0.0.1:${port}/keys` }, {
        clock,
        onKeyFetchFailed: (error) => failures.push(error),
      });
      assert.equal(await refusal(verifier, await token(k2, {}, clock.now())), "keys-unavailable");
      assert.match(failures[0]?.message ?? "", /the key set \(JWKS\) answered 302, not 200/);
      assert.equal(elsewhere.count("jwks"), 0);
    } finally {
      redirecting.closeAllConnections();
      await new Promise((resolve) => redirecting.close(resolve));
      await elsewhere.down();
    }
  });

  it("keeps a later fetch joined when one given up on settles at last", async () => {
    const clock = testClock();
    // Each fetch answers when the test says so: the first is given up on (as workerd leaves a
    // fetch whose request went away), then settles while the second is under way.
    const answers: ((response: Response) => void)[] = [];
    let called: () => void = () => {};
    const verifier = await make({ "jwk-set-uri": issuer.jwksUrl }, {
      clock,
      timeoutMs: 10,
      fetch: () => {
        called();
        return new Promise<Response>((resolve) => answers.push(resolve));
      },
    });
    const jwt = await token(k1, {}, clock.now());
    assert.equal(await refusal(verifier, jwt), "keys-unavailable");
    clock.advance(30_000);
    const second = new Promise<void>((resolve) => called = resolve);
    const joined = verifier.verify(jwt);
    await second;
    answers[0](new Response("", { status: 503 }));
    // The first fetch's handlers are microtasks: a task of its own runs once they all have.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const later = verifier.verify(jwt);
    answers[1](await fetch(issuer.jwksUrl));
    assert.equal((await joined).claims.sub, "alice");
    assert.equal(
      (await later).claims.sub,
      "alice",
      "a call made meanwhile joins the fetch under way",
    );
    assert.equal(answers.length, 2);
  });
});
