// The `security` health component against real issuers and a real introspection endpoint on
// loopback: each issuer UP once its keys are fetched (the health check fetches them when none
// are held), DOWN while none are and its fetch fails, UP again once it answers; the
// introspection endpoint UP while it answers the client, DOWN naming why. A public key reports
// nothing.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { security, testTokens } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { IssuerServer, signingKey } from "./issuer_server.ts";
import { IntrospectionServer } from "./introspection_server.ts";

const management = {
  endpoint: { health: { "show-details": "always" } },
  health: { diskspace: { enabled: false } },
};

async function health(app: { fetch(request: Request): Response | Promise<Response> }) {
  const answer = await app.fetch(new Request("http://localhost/actuator/health"));
  return { status: answer.status, body: await answer.json() };
}

describe("the security health component", () => {
  let a: IssuerServer, b: IssuerServer;
  let endpoint: IntrospectionServer;
  before(async () => {
    const [keyA, keyB] = await Promise.all([signingKey("a"), signingKey("b")]);
    [a, b, endpoint] = await Promise.all([
      IssuerServer.start([keyA]),
      IssuerServer.start([keyB]),
      IntrospectionServer.start("orders-api", "s3cret"),
    ]);
  });
  after(() => Promise.all([a.down(), b.down(), endpoint.down()]));

  it("reports each issuer: UP once its keys are held, DOWN while none are and it is down", async () => {
    await b.down();
    const app = await bootstrap({
      config: {
        management,
        security: {
          oauth2: {
            resourceserver: {
              jwt: {
                issuers: [{ "issuer-uri": a.url }, { issuer: b.url, "jwk-set-uri": b.jwksUrl }],
              },
            },
          },
        },
      },
      actuator: actuator(),
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const down = await health(app);
      assert.equal(down.status, 503);
      assert.equal(down.body.components.security.status, "DOWN");
      const said = JSON.stringify(down.body.components.security.details);
      assert.ok(said.includes(`${b.jwksUrl}: the key set (JWKS) could not be fetched`), said);
      assert.ok(!said.includes(a.url), said);
      // The check fetched A's keys: held now.
      assert.ok(a.count("jwks") >= 1);
      await b.up();
      // B's next fetch waits out its backoff (a second after the failure): asked until it is due.
      let up = await health(app);
      while (up.status !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        up = await health(app);
      }
      assert.deepEqual(up.body.components.security.details.sources, [
        { kind: "issuer", url: a.url, status: "UP" },
        { kind: "issuer", url: b.jwksUrl, status: "UP" },
      ]);
      // Keys held: B going down does not make it DOWN.
      await b.down();
      assert.equal((await health(app)).status, 200);
    } finally {
      await b.up();
      await app.close();
    }
  });

  it("reports the introspection endpoint, DOWN naming its answer", async () => {
    const config = (secret: string) => ({
      management,
      security: {
        oauth2: {
          resourceserver: {
            opaquetoken: {
              "introspection-uri": endpoint.url,
              "client-id": "orders-api",
              "client-secret": secret,
            },
          },
        },
      },
    });
    const app = await bootstrap({
      config: config("s3cret"),
      actuator: actuator(),
      security: security(),
      logger: memoryLogger(),
    });
    const wrong = await bootstrap({
      config: config("wrong"),
      actuator: actuator(),
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const up = await health(app);
      assert.equal(up.status, 200);
      assert.deepEqual(up.body.components.security.details.sources, [
        { kind: "introspection", url: endpoint.url, status: "UP" },
      ]);
      const refused = await health(wrong);
      assert.equal(refused.status, 503);
      assert.match(JSON.stringify(refused.body.components.security), /answered 401, not 200/);
      assert.doesNotMatch(JSON.stringify(refused.body), /wrong/);
      await endpoint.down();
      const down = await health(app);
      assert.equal(down.status, 503);
      assert.match(JSON.stringify(down.body.components.security), /no answer/);
    } finally {
      await endpoint.up();
      await app.close();
      await wrong.close();
    }
  });

  it("has no component for a public key, which fetches nothing", async () => {
    const tokens = await testTokens();
    const app = await bootstrap({
      config: { ...tokens.config, management },
      actuator: actuator(),
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const { body } = await health(app);
      assert.equal(body.components?.security, undefined);
      assert.equal(body.status, "UP");
    } finally {
      await app.close();
    }
  });
});
