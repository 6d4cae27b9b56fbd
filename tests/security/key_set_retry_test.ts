// The key set's first fetch failing (the issuer down, slow, or answering junk): a token is
// accepted seconds after the issuer is back, not a whole cooldown later, while a flood of tokens
// meanwhile costs a handful of fetches, each wait longer than the last.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_keys.ts";
import { jwtSettings } from "../../src/security/jwt_settings.ts";
import { JwtVerifier, type JwtVerifierOptions } from "../../src/security/jwt_verifier.ts";
import { TokenFailure } from "../../src/security/token_failure.ts";
import { type SigningKey, signingKey, token } from "./issuer_server.ts";

/** How the key set's host answers: refusing, with what is not JSON, or with the keys. */
type Mode = "503" | "junk" | "keys";

/** A key set's host on loopback whose answers the test switches, recording when it was asked. */
async function flakyKeySet(key: SigningKey) {
  const state = { mode: "503" as Mode, asked: [] as number[] };
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    state.asked.push(performance.now());
    if (state.mode === "503") res.writeHead(503).end();
    else if (state.mode === "junk") res.writeHead(200).end("<html>maintenance</html>");
    else {
      res.writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: [key.jwk] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    state,
    url: `http://127.0.0.1:${port}/keys`,
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function verifierOf(url: string, options: JwtVerifierOptions = {}): Promise<JwtVerifier> {
  const settings = jwtSettings(
    readSettings(resolveConfig({
      security: { oauth2: { resourceserver: { jwt: { "jwk-set-uri": url } } } },
    }, () => undefined)),
  );
  assert.ok(settings !== undefined);
  return JwtVerifier.create(settings, options);
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

async function reasonOf(verifier: JwtVerifier, jwt: string): Promise<string> {
  try {
    await verifier.verify(jwt);
    return "accepted";
  } catch (error) {
    assert.ok(error instanceof TokenFailure, String(error));
    return error.reason;
  }
}

describe("the key set before its first fetch succeeds", () => {
  it("accepts tokens seconds after the issuer is back, with a few fetches under a flood", async () => {
    const key = await signingKey("k1");
    const host = await flakyKeySet(key);
    try {
      // The real clock and the default cooldown (30 s), as an app has them.
      const verifier = await verifierOf(host.url);
      const jwt = await token(key, {}, Date.now());
      let requests = 0;
      const outcomes = new Set<string>();
      // Batches of tokens side by side, a turn of the event loop between them (the fetch needs
      // one to be answered), until `done` holds or `withinMs` is over.
      const flood = async (done: () => boolean, withinMs: number): Promise<boolean> => {
        const until = performance.now() + withinMs;
        while (!done() && performance.now() < until) {
          const batch = await Promise.all(
            Array.from({ length: 20 }, () => reasonOf(verifier, jwt)),
          );
          for (const outcome of batch) outcomes.add(outcome);
          requests += batch.length;
          await nextTurn();
        }
        return done();
      };
      assert.equal(await flood(() => host.state.asked.length >= 1, 10_000), true);
      host.state.mode = "junk";
      assert.equal(
        await flood(() => host.state.asked.length >= 2, 10_000),
        true,
        `asked ${host.state.asked.length} time(s) in 10 s after the first fetch failed`,
      );
      host.state.mode = "keys";
      const back = performance.now();
      assert.equal(
        await flood(() => outcomes.has("accepted"), 15_000),
        true,
        `no token accepted ${Math.round(performance.now() - back)} ms after the issuer was back`,
      );
      const [first, second, third] = host.state.asked;
      assert.ok(performance.now() - back < 5_000, `${performance.now() - back} ms`);
      assert.deepEqual([...outcomes].sort(), ["accepted", "keys-unavailable"]);
      // Thousands of tokens while the keys were missing; three fetches, each wait longer.
      assert.ok(requests > 500, `${requests} requests`);
      assert.equal(host.state.asked.length, 3);
      assert.ok(second - first >= 900, `${second - first} ms between the first two fetches`);
      assert.ok(third - second > second - first + 500, `then ${third - second} ms`);
    } finally {
      await host.close();
    }
  });

  it("waits 1 s, then twice as long after each failure up to the cooldown, timed from the failure", async () => {
    const clock = testClock();
    const key = await signingKey("k1");
    const fetched: number[] = [];
    let answer: "slow" | "503" | "keys" = "slow";
    const verifier = await verifierOf("https://id.example.com/keys", {
      clock,
      timeoutMs: 5_000,
      fetch: () => {
        fetched.push(clock.monotonic());
        if (answer === "keys") return Promise.resolve(Response.json({ keys: [key.jwk] }));
        // A slow host: the fetch fails once its whole timeout is spent.
        if (answer === "slow") clock.advance(5_000);
        return Promise.resolve(new Response(null, { status: 503 }));
      },
    });
    const jwt = await token(key, {}, clock.now());
    const start = clock.monotonic();
    assert.equal(await reasonOf(verifier, jwt), "keys-unavailable");
    answer = "503";
    // After each failure: nothing a moment before the wait is over, a fetch once it is.
    for (const wait of [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]) {
      const count = fetched.length;
      clock.advance(wait - 1);
      assert.equal(await reasonOf(verifier, jwt), "keys-unavailable");
      assert.equal(fetched.length, count, `within ${wait} ms`);
      clock.advance(1);
      assert.equal(await reasonOf(verifier, jwt), "keys-unavailable");
      assert.equal(fetched.length, count + 1, `after ${wait} ms`);
    }
    // The slow one was tried again a second after it failed, not 30 s after it began.
    assert.equal(fetched[1] - start, 6_000);
    answer = "keys";
    clock.advance(30_000);
    assert.equal(await reasonOf(verifier, jwt), "accepted");
    // Keys in hand, an unknown key id waits the whole cooldown again.
    const stranger = await token({ ...key, kid: "k2" }, {}, clock.now());
    const count = fetched.length;
    clock.advance(1_000);
    assert.equal(await reasonOf(verifier, stranger), "unknown-key");
    assert.equal(fetched.length, count);
    clock.advance(29_000);
    assert.equal(await reasonOf(verifier, stranger), "unknown-key");
    assert.equal(fetched.length, count + 1);
  });

  it("backs off the same when the failure's listener throws", async () => {
    const clock = testClock();
    const key = await signingKey("k1");
    let fetched = 0;
    let told = 0;
    const verifier = await verifierOf("https://id.example.com/keys", {
      clock,
      fetch: () => {
        fetched++;
        return Promise.resolve(new Response(null, { status: 503 }));
      },
      onKeyFetchFailed: () => {
        told++;
        throw new Error("the logger broke");
      },
    });
    const jwt = await token(key, {}, clock.now());
    assert.equal(await reasonOf(verifier, jwt), "keys-unavailable");
    assert.deepEqual([fetched, told], [1, 1]);
    // The first retry a second later, not a whole cooldown.
    clock.advance(1_000);
    assert.equal(await reasonOf(verifier, jwt), "keys-unavailable");
    assert.deepEqual([fetched, told], [2, 2]);
  });
});
