// TokenClient beans against a real token endpoint and a real service on loopback: one token for
// 100 concurrent calls, renewed shortly before it expires, a 401 answered with one retry and a
// new token (never for a streamed body), the provider's token endpoint found by discovery, and
// a clear error naming the registration (never the secret) when no token can be had.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap } from "../../mod.ts";
import { security, testTokens, TokenClient, TokenClientError } from "../../security.ts";
import type { ClientRegistration } from "../../src/security/client_registrations.ts";
import { memoryLogger } from "../helpers.ts";
import { ServiceServer, TokenEndpointServer } from "./token_endpoint_server.ts";

// What a wrapper that passes its own unset option on sends (typed loosely, as most code is).
const UNSET_REDIRECT = { redirect: undefined } as unknown as RequestInit;

const SECRET = "s3cret/with:odd+chars";

describe("TokenClient", () => {
  let tokens: TokenEndpointServer;
  let service: ServiceServer;
  before(async () => {
    [tokens, service] = await Promise.all([
      TokenEndpointServer.start("orders", SECRET),
      ServiceServer.start(),
    ]);
  });
  after(() => Promise.all([tokens.down(), service.down()]));

  const registration = (over: Partial<ClientRegistration> = {}): ClientRegistration => ({
    name: "billing",
    clientId: "orders",
    clientSecret: SECRET,
    scopes: ["billing:write", "billing:read"],
    endpoint: { kind: "token-uri", url: tokens.tokenUrl },
    where: "security.oauth2.client.registration.billing",
    ...over,
  });

  const reset = () => {
    tokens.requests.length = 0;
    tokens.expiresIn = 300;
    tokens.tokenType = "Bearer";
    tokens.failWith = undefined;
    tokens.accessToken = undefined;
    service.calls.length = 0;
    service.valid.clear();
  };

  it("is a bean per registration, and fetches one token for 100 concurrent calls", async () => {
    reset();
    service.valid.add("t1");
    const auth = await testTokens();
    const app = await bootstrap({
      config: {
        ...auth.config,
        security: {
          ...auth.config.security,
          oauth2: {
            ...auth.config.security.oauth2,
            client: {
              registration: {
                billing: { "client-id": "orders", "client-secret": SECRET, scope: "billing:write" },
              },
              provider: { billing: { "token-uri": tokens.tokenUrl } },
            },
          },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const client = app.getBean<TokenClient>("billing");
      assert.ok(client instanceof TokenClient);
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => client.fetch(service.url)),
      );
      assert.deepEqual(
        new Set(await Promise.all(answers.map((a) => a.text()))),
        new Set(["served t1"]),
      );
      assert.equal(tokens.issued, 1);
      assert.equal(tokens.requests[0].get("scope"), "billing:write");
      assert.equal(service.calls.length, 100);
    } finally {
      await app.close();
    }
  });

  it("renews the token shortly before it expires, not before", async () => {
    reset();
    tokens.expiresIn = 300;
    let now = Date.now();
    const client = new TokenClient(registration(), { now: () => now });
    assert.equal(await client.token(), "t1");
    now += 239_000;
    assert.equal(await client.token(), "t1");
    // Within a minute of expiry: a new one.
    now += 2_000;
    assert.equal(await client.token(), "t2");
    assert.equal(tokens.issued, 2);
    assert.equal(tokens.requests[1].get("scope"), "billing:write billing:read");
  });

  it("retries once with a new token when the service answers 401", async () => {
    reset();
    service.valid.add("t2");
    const client = new TokenClient(registration());
    const answer = await client.fetch(service.url, { method: "POST", body: "invoice 7" });
    assert.equal(await answer.text(), "served t2");
    assert.deepEqual(service.calls, [
      { authorization: "Bearer t1", body: "invoice 7" },
      { authorization: "Bearer t2", body: "invoice 7" },
    ]);
    // A service that refuses every token: two tries, then its 401.
    service.valid.clear();
    const refused = await client.fetch(service.url);
    assert.equal(refused.status, 401);
    assert.equal(service.calls.length, 4);
    assert.equal(tokens.issued, 3);
  });

  it("does not send a streamed body twice: its 401 is the answer", async () => {
    reset();
    const client = new TokenClient(registration());
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("streamed"));
        controller.close();
      },
    });
    const answer = await client.fetch(service.url, {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
    assert.equal(answer.status, 401);
    assert.deepEqual(service.calls, [{ authorization: "Bearer t1", body: "streamed" }]);
    // The refused token is dropped all the same: the next call gets a new one.
    assert.equal(await client.token(), "t2");
  });

  it("reads expires_in given as text, and asks again at once for one of 0", async () => {
    reset();
    let now = Date.now();
    tokens.expiresIn = "300";
    const client = new TokenClient(registration(), { now: () => now });
    assert.equal(await client.token(), "t1");
    now += 200_000;
    assert.equal(await client.token(), "t1");
    tokens.expiresIn = 0;
    now += 100_000;
    assert.equal(await client.token(), "t2");
    assert.equal(await client.token(), "t3");
  });

  it("reads expires_in as decimal text, and a JWT's exp where the answer says none", async () => {
    reset();
    let now = Date.now();
    tokens.expiresIn = "300.0";
    const client = new TokenClient(registration(), { now: () => now });
    assert.equal(await client.token(), "t1");
    now += 200_000;
    assert.equal(await client.token(), "t1");
    now += 100_000;
    assert.equal(await client.token(), "t2");
    // No expires_in: a JWT access token's own exp says when it is renewed (unverified: the
    // service checks it; only the timing is read here).
    tokens.expiresIn = undefined;
    const exp = Math.floor(now / 1000) + 600;
    const part = (json: unknown) => btoa(JSON.stringify(json)).replace(/=+$/, "");
    tokens.accessToken = (n) => `${part({ alg: "RS256" })}.${part({ exp, n })}.c2ln`;
    now += 300_000;
    const first = await client.token();
    assert.equal(JSON.parse(atob(first.split(".")[1])).n, 3);
    now += 200_000;
    assert.equal(await client.token(), first);
    now += 60_000;
    assert.equal(JSON.parse(atob((await client.token()).split(".")[1])).n, 4);
    // Neither: kept until a service refuses it.
    tokens.accessToken = undefined;
    for (const expiresIn of [undefined, null, "soon", "-5", "1e400"]) {
      tokens.expiresIn = expiresIn as string | undefined;
      const fresh = new TokenClient(registration(), { now: () => now });
      const held = await fresh.token();
      now += 10 * 86_400_000;
      assert.equal(await fresh.token(), held, String(expiresIn));
    }
  });

  it("does not follow a service's redirect with the token", async () => {
    reset();
    const elsewhere = await ServiceServer.start();
    service.redirectTo = elsewhere.url;
    try {
      const client = new TokenClient(registration());
      // An init that passes an unset option on says nothing of redirects either.
      for (const init of [undefined, {}, UNSET_REDIRECT, { method: "GET" }]) {
        const answer = await client.fetch(service.url, init);
        assert.equal(answer.status, 302, JSON.stringify(init));
        await answer.body?.cancel();
      }
      assert.equal(elsewhere.calls.length, 0);
    } finally {
      service.redirectTo = undefined;
      await elsewhere.down();
    }
  });

  it("gives up on a token request that never settles, and asks again at the next call", async () => {
    let asked = 0;
    const client = new TokenClient(registration(), {
      timeoutMs: 100,
      // A fetch that neither answers nor hears its abort, as one whose request went away on
      // workerd: only the client's own bound ends the wait.
      fetch: () => {
        asked++;
        return new Promise<Response>(() => {});
      },
    });
    await assert.rejects(client.token(), /the token request did not settle/);
    await assert.rejects(client.token(), /the token request did not settle/);
    assert.equal(asked, 2);
  });

  it("finds the provider's token endpoint in its discovery document", async () => {
    reset();
    service.valid.add("t1");
    const client = new TokenClient(
      registration({ endpoint: { kind: "issuer", issuer: tokens.issuer } }),
    );
    assert.equal(await (await client.fetch(service.url)).text(), "served t1");
  });

  it("says which registration got no token, and why, never with the secret", async () => {
    reset();
    const wrong = new TokenClient(registration({ clientSecret: "wrong" }));
    const refused = await assert.rejects(wrong.token(), (error: unknown) => {
      assert.ok(error instanceof TokenClientError);
      assert.equal(error.status, 401);
      assert.match(
        error.message,
        /registration\.billing: no token: the token endpoint .* answered 401 \("invalid_client"\)/,
      );
      assert.ok(!error.message.includes(SECRET) && !error.message.includes("wrong"));
      return true;
    });
    void refused;
    tokens.failWith = 503;
    await assert.rejects(
      new TokenClient(registration()).token(),
      /answered 503 \("temporarily_unavailable"\)/,
    );
    tokens.failWith = undefined;
    tokens.tokenType = "mac";
    await assert.rejects(
      new TokenClient(registration()).token(),
      /a token of type "mac", not Bearer/,
    );
    tokens.tokenType = "Bearer";
    await tokens.down();
    try {
      const client = new TokenClient(registration());
      await assert.rejects(client.token(), /the token endpoint .* did not answer/);
      await tokens.up();
      // Nothing kept from the failure: the next call fetches.
      assert.match(await client.token(), /^t\d+$/);
    } finally {
      await tokens.up();
    }
  });

  it("stops bootstrap for a registration it cannot use", async () => {
    const refused = async (client: Record<string, unknown>, said: RegExp) => {
      const auth = await testTokens();
      await assert.rejects(
        bootstrap({
          config: {
            security: { oauth2: { ...auth.config.security.oauth2, client } },
          },
          security: security(),
          logger: memoryLogger(),
        }),
        said,
      );
    };
    const base = {
      "client-id": "orders",
      "client-secret": "x",
      "token-uri": "https://id.example.com/t",
    };
    await refused(
      { registration: { billing: { ...base, "client-secret": undefined } } },
      /billing\.client-secret: give the client secret/,
    );
    await refused(
      { registration: { billing: { ...base, "token-uri": undefined } } },
      /billing: give token-uri, or a provider/,
    );
    await refused({
      registration: { billing: { ...base, "authorization-grant-type": "authorization_code" } },
    }, /only client_credentials/);
    await refused({ registration: { billing: { ...base, scpoe: "x" } } }, /unknown key "scpoe"/);
    await refused({ registration: { billing: { ...base, scope: ['a"b'] } } }, /is not a scope/);
    await refused(
      { registration: { billing: { ...base, "token-uri": "ftp://x" } } },
      /give an http\(s\) URL/,
    );
  });
});
