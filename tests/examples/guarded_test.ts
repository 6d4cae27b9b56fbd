// The middleware page's example (docs/middleware.md) is examples/guarded/app.ts, word for word: this holds the two
// together and checks that the app does what the README says, over app.fetch and a real socket.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { app } from "../../examples/guarded/app.ts";
import { type Client, reach, TRANSPORTS } from "../helpers.ts";

const root = new URL("../../", import.meta.url);
const ORIGIN = "https://app.example.com";

describe("the middleware page's example", () => {
  it("is examples/guarded/app.ts, importing @thaw/thaw", () => {
    const section = readFileSync(new URL("docs/middleware.md", root), "utf8");
    const block = /A complete app:[^`]*```ts\n([\s\S]*?)```/.exec(section)?.[1];
    const file = readFileSync(new URL("examples/guarded/app.ts", root), "utf8");
    assert.equal(block, file.replace('"../../mod.ts"', '"@thaw/thaw"'));
  });
});

for (const transport of TRANSPORTS) {
  describe(`the guarded example over ${transport}`, () => {
    let client: Client;
    before(async () => {
      client = await reach(app, transport);
    });
    after(() => client.close());

    it("answers an open route with CORS headers for its origin only", async () => {
      const ours = await client.send("GET", "/status", { headers: { origin: ORIGIN } });
      assert.deepEqual(await ours.json(), { up: true });
      assert.equal(ours.headers.get("access-control-allow-origin"), ORIGIN);
      const theirs = await client.send("GET", "/status", {
        headers: { origin: "https://evil.test" },
      });
      await theirs.arrayBuffer();
      assert.equal(theirs.headers.get("access-control-allow-origin"), null);
    });

    it("answers a preflight on the guarded controller's path, without a token", async () => {
      const preflight = await client.send("OPTIONS", "/accounts/7/withdraw", {
        headers: {
          origin: ORIGIN,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization",
        },
      });
      await preflight.arrayBuffer();
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), ORIGIN);
      assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    });

    it("refuses the guarded route without the right token, with CORS headers on the 401", async () => {
      for (const authorization of [undefined, "Bearer wrong", "s3cret"]) {
        const headers: Record<string, string> = { origin: ORIGIN };
        if (authorization !== undefined) headers.authorization = authorization;
        const refused = await client.send("POST", "/accounts/7/withdraw", { headers });
        assert.equal(refused.status, 401, String(authorization));
        assert.equal(refused.headers.get("www-authenticate"), "Bearer");
        assert.equal(refused.headers.get("access-control-allow-origin"), ORIGIN);
        assert.deepEqual(await refused.json(), { error: "a valid bearer token is needed" });
      }
    });

    it("lets the token through to the route, whose domain error the advice answers as 422", async () => {
      const answer = await client.send("POST", "/accounts/7/withdraw", {
        headers: { authorization: "Bearer s3cret", origin: ORIGIN },
      });
      assert.equal(answer.status, 422);
      assert.equal(answer.headers.get("access-control-allow-origin"), ORIGIN);
      assert.deepEqual(await answer.json(), { problem: "account 7 cannot cover it" });
    });
  });
}
