// Many trusted issuers on one app, each a real identity provider on loopback: tokens of each are
// accepted with that issuer's keys and audiences; a token naming an issuer not listed is refused
// before anything is fetched (its issuer, up and listening, is never asked); one issuer down
// leaves the others' tokens accepted.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { type Authentication, Principal, security } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

@RestController()
class Me {
  @GetMapping("/me", Principal())
  me(caller: Authentication): string {
    return `${caller.name} of ${String(caller.claims.iss)}`;
  }
}

const hits = (issuer: IssuerServer): number => [...issuer.hits.values()].reduce((a, b) => a + b, 0);

describe("many trusted issuers", () => {
  let keyA: SigningKey, keyB: SigningKey, keyC: SigningKey;
  let a: IssuerServer, b: IssuerServer, c: IssuerServer;
  before(async () => {
    [keyA, keyB, keyC] = await Promise.all([
      signingKey("a"),
      signingKey("b", "ES256"),
      signingKey("c"),
    ]);
    [a, b, c] = await Promise.all([
      IssuerServer.start([keyA]),
      IssuerServer.start([keyB]),
      IssuerServer.start([keyC]),
    ]);
  });
  after(() => Promise.all([a.down(), b.down(), c.down()]));

  const start = () => {
    const logger = memoryLogger();
    const app = bootstrap({
      controllers: [Me],
      config: {
        security: {
          oauth2: {
            resourceserver: {
              jwt: {
                issuers: [
                  { "issuer-uri": a.url },
                  { issuer: b.url, "jwk-set-uri": b.jwksUrl, audiences: ["orders"] },
                ],
              },
            },
          },
        },
      },
      security: security({
        validators: [(claims) => claims.banned === true ? "the caller is banned" : undefined],
      }),
      logger,
    });
    return { app, logger };
  };
  const me = async (
    app: { fetch(request: Request): Response | Promise<Response> },
    jwt: string,
  ) =>
    await app.fetch(
      new Request("http://localhost/me", { headers: { authorization: `Bearer ${jwt}` } }),
    );

  it("accepts each issuer's tokens, checked with its own keys and audiences", async () => {
    const { app: starting } = start();
    const app = await starting;
    try {
      const fromA = await me(app, await token(keyA, { iss: a.url, sub: "ann" }, Date.now()));
      assert.equal(await fromA.text(), `ann of ${a.url}`);
      const fromB = await me(
        app,
        await token(keyB, { iss: b.url, sub: "bob", aud: "orders" }, Date.now()),
      );
      assert.equal(await fromB.text(), `bob of ${b.url}`);
      // B's own audience: another is refused.
      const otherAudience = await me(
        app,
        await token(keyB, { iss: b.url, aud: "billing" }, Date.now()),
      );
      assert.equal(otherAudience.status, 401);
      // A's iss with B's key: A's keys check it, and do not have it.
      const crossed = await me(app, await token(keyB, { iss: a.url }, Date.now()));
      assert.equal(crossed.status, 401);
      // The validators hold for every issuer.
      const banned = await me(app, await token(keyA, { iss: a.url, banned: true }, Date.now()));
      assert.match(banned.headers.get("www-authenticate") ?? "", /the caller is banned/);
      assert.equal(a.count("discovery"), 1);
      assert.ok(a.count("jwks") >= 1);
      // B is reached by its key set's URL alone.
      assert.equal(b.count("discovery"), 0);
    } finally {
      await app.close();
    }
  });

  it("refuses a token of an issuer not listed before fetching anything", async () => {
    const { app: starting, logger } = start();
    const app = await starting;
    try {
      const before = { a: hits(a), b: hits(b), c: hits(c) };
      const refusals = [
        await token(keyC, { iss: c.url }, Date.now()),
        // The URL of a listed issuer, spelt otherwise: not the same issuer.
        await token(keyC, { iss: `${a.url}/` }, Date.now()),
        await token(keyC, { iss: a.url.toUpperCase() }, Date.now()),
        await token(keyC, { iss: ["x", a.url] as unknown as string }, Date.now()),
        await token(keyC, {}, Date.now()),
        "not.a.jwt",
        `${"e".repeat(70_000)}.e.e`,
      ];
      for (const jwt of refusals) {
        const refused = await me(app, jwt);
        assert.equal(refused.status, 401, jwt.slice(0, 40));
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
      }
      assert.deepEqual({ a: hits(a), b: hits(b), c: hits(c) }, before);
      const logged = logger.lines.map(([line]) => String(line)).join("\n");
      assert.match(logged, /\(wrong-issuer\)/);
      assert.match(logged, /\(missing-claim\): the token lacks the claim "iss"/);
      assert.match(logged, /\(malformed\)/);
    } finally {
      await app.close();
    }
  });

  it("keeps accepting one issuer's tokens while another is down", async () => {
    const { app: starting } = start();
    const app = await starting;
    await a.down();
    try {
      const fromA = await me(app, await token(keyA, { iss: a.url }, Date.now()));
      assert.equal(fromA.status, 401);
      const fromB = await me(
        app,
        await token(keyB, { iss: b.url, sub: "bob", aud: "orders" }, Date.now()),
      );
      assert.equal(fromB.status, 200);
    } finally {
      await app.close();
      await a.up();
    }
  });

  it("stops bootstrap for a list beside a single issuer's keys", async () => {
    await assert.rejects(
      bootstrap({
        config: {
          security: {
            oauth2: {
              resourceserver: { jwt: { "issuer-uri": a.url, issuers: [{ "issuer-uri": b.url }] } },
            },
          },
        },
        security: security(),
        logger: memoryLogger(),
      }),
      /issuers and .*issuer-uri: give one/,
    );
  });
});
