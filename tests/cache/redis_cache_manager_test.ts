// integration test: redis-server from Debian's redis-server package (tools/system_packages.sh)
// RedisCacheManager against a real Redis: a redis-server this file starts on a free loopback port
// (no persistence), stopped, frozen and restarted by the tests themselves. Every wait is on a
// state (a key gone, a call answered), bounded only against one that never comes; none orders
// events by sleeping.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createServer, type Server, type Socket } from "node:net";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { createClient } from "redis";
import { Bean, bootstrap, Cacheable, CacheManager, Configuration, Service } from "../../mod.ts";
import { RedisCacheManager, type RedisCacheManagerOptions } from "../../cache-redis.ts";
import { propertyOptions } from "../property.ts";
import { RedisServer, until } from "./redis_server.ts";
import { freePort } from "../helpers.ts";

// What a call bounded by its timeout may take past it on a loaded machine (both cores busy, the
// event loop seconds late): timers fire late, never early. A call that hangs takes forever.
const SLACK_MS = 2000;

// Anything that escapes a test (an `error` event no one heard, a rejection no one caught) would
// end the process on some runtime; here it fails the suite instead, naming it.
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);

/** Every message the manager logged, with its level. */
function recorder() {
  const lines: string[] = [];
  const logger = {
    error: (message: string) => void lines.push(`error ${message}`),
    warn: (message: string) => void lines.push(`warn ${message}`),
    info: (message: string) => void lines.push(`info ${message}`),
  };
  return { lines, logger, count: (pattern: RegExp) => lines.filter((l) => pattern.test(l)).length };
}

/** How long `promise` took to settle, and whether it rejected. */
async function timed(promise: Promise<unknown>): Promise<{ ms: number; rejected: boolean }> {
  const start = performance.now();
  const rejected = await promise.then(() => false, () => true);
  return { ms: performance.now() - start, rejected };
}

describe("RedisCacheManager", () => {
  let redis: RedisServer;
  // The test's own view of Redis: raw keys and values, as another program sees them.
  let raw: ReturnType<typeof createClient>;
  let prefixes = 0;
  const managers: RedisCacheManager[] = [];

  /** A manager over the file's Redis, with a key prefix no other test uses. */
  function manager(options: RedisCacheManagerOptions = {}): RedisCacheManager {
    const made = new RedisCacheManager({
      url: redis.url,
      keyPrefix: `t${++prefixes}:`,
      logger: recorder().logger,
      ...options,
    });
    managers.push(made);
    return made;
  }

  async function keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (
      const batch of raw.scanIterator({ MATCH: `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*` })
    ) {
      keys.push(...batch);
    }
    return keys.sort();
  }

  before(async () => {
    process.on("unhandledRejection", onEscape);
    process.on("uncaughtException", onEscape);
    redis = await RedisServer.start();
    raw = createClient({ url: redis.url, RESP: 2 });
    raw.on("error", () => {});
    await raw.connect();
  });

  after(async () => {
    for (const made of managers) await made.close();
    raw?.destroy();
    await redis?.kill();
    process.off("unhandledRejection", onEscape);
    process.off("uncaughtException", onEscape);
    assert.deepEqual(escaped, []);
  });

  it("stores JSON under prefix + name + ':' + key, and reads, evicts and clears it", async () => {
    const cacheManager = manager({ keyPrefix: "app:" });
    const users = cacheManager.getCache("users");
    assert.equal(cacheManager.getCache("users"), users);
    assert.equal(await users.get("[7]"), undefined);
    await users.put("[7]", { id: 7, name: "Ada", tags: ["x"], nothing: null }, undefined);
    assert.equal(
      await raw.get("app:users:[7]"),
      '{"id":7,"name":"Ada","tags":["x"],"nothing":null}',
    );
    assert.equal(await raw.pTTL("app:users:[7]"), -1);
    assert.deepEqual(await users.get("[7]"), { id: 7, name: "Ada", tags: ["x"], nothing: null });
    for (const value of ["text", 0, -1.5, true, false, null, [], {}]) {
      await users.put("[8]", value, undefined);
      assert.deepEqual(await users.get("[8]"), value);
    }
    await users.evict("[7]");
    assert.equal(await users.get("[7]"), undefined);
    assert.equal(await raw.exists("app:users:[7]"), 0);
    await users.clear();
    assert.deepEqual(await keysUnder("app:"), []);
  });

  it("keeps caches apart whatever their names hold: ':' and '%' are written %3A and %25", async () => {
    const cacheManager = manager({ keyPrefix: "sep:" });
    const [a, ab, a25] = ["a", "a:b", "a%3Ab"].map((name) => cacheManager.getCache(name));
    await a.put("b:c", 1, undefined);
    await ab.put("c", 2, undefined);
    await a25.put("c", 3, undefined);
    assert.deepEqual(await keysUnder("sep:"), ["sep:a%253Ab:c", "sep:a%3Ab:c", "sep:a:b:c"]);
    await a.clear();
    assert.equal(await a.get("b:c"), undefined);
    assert.equal(await ab.get("c"), 2);
    assert.equal(await a25.get("c"), 3);
  });

  it("matches a model Map over random calls on three caches (property)", async () => {
    const names = ["a*", "ab", "a:b"];
    const key = fc.constantFrom("[1]", "[2]", '["*"]', "[?]", "\\", "\u0000", "é");
    const NOT_DATA: unknown[] = [new Date(0), new Map(), [undefined], NaN, { n: 1n }];
    const value = fc.oneof(
      { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      { weight: 1, arbitrary: fc.constantFrom(...NOT_DATA) },
    );
    const name = fc.constantFrom(...names);
    const step = fc.oneof(
      fc.record({ op: fc.constant("get" as const), name, key }),
      fc.record({ op: fc.constant("put" as const), name, key, value }),
      fc.record({ op: fc.constant("evict" as const), name, key }),
      fc.record({ op: fc.constant("clear" as const), name }),
    );
    const cacheManager = manager({ keyPrefix: "model:" });
    const caches = new Map(names.map((n) => [n, cacheManager.getCache(n)] as const));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        for (const cache of caches.values()) await cache.clear();
        const model = new Map(names.map((n) => [n, new Map<string, unknown>()]));
        for (const s of steps) {
          const cache = caches.get(s.name)!;
          const entries = model.get(s.name)!;
          switch (s.op) {
            case "get":
              assert.deepStrictEqual(await cache.get(s.key), entries.get(s.key));
              break;
            case "put": {
              await cache.put(s.key, s.value, undefined);
              // What is not JSON data is not stored, and what the key held is gone; JSON has one
              // zero, so -0 reads back as 0.
              if (NOT_DATA.includes(s.value)) entries.delete(s.key);
              else entries.set(s.key, JSON.parse(JSON.stringify([s.value]))[0]);
              break;
            }
            case "evict":
              await cache.evict(s.key);
              entries.delete(s.key);
              break;
            case "clear":
              await cache.clear();
              entries.clear();
              break;
          }
        }
        for (const [n, entries] of model) {
          for (const k of ["[1]", "[2]", '["*"]', "[?]", "\\", "\u0000", "é"]) {
            assert.deepStrictEqual(await caches.get(n)!.get(k), entries.get(k), `${n} ${k}`);
          }
        }
        // And nothing else is in Redis: each model entry is one key.
        const expected = [...model].flatMap(([n, entries]) =>
          [...entries.keys()].map((k) => `model:${n.replace(":", "%3A")}:${k}`)
        );
        assert.deepEqual(await keysUnder("model:"), expected.sort());
      }),
      propertyOptions(60),
    );
  });

  it("an entry with a ttl expires (PX): read from Redis until it is gone", async () => {
    const cacheManager = manager({ keyPrefix: "ttl:" });
    const sessions = cacheManager.getCache("sessions");
    await sessions.put("[1]", "long", 60_000);
    const pttl = await raw.pTTL("ttl:sessions:[1]");
    assert.ok(pttl > 0 && pttl <= 60_000, `PTTL ${pttl}`);
    // A fraction of a millisecond is rounded up: PX takes whole ones.
    await sessions.put("[2]", "short", 20.5);
    await until("the short entry to expire", async () => await sessions.get("[2]") === undefined);
    assert.equal(await raw.exists("ttl:sessions:[2]"), 0);
    assert.equal(await sessions.get("[1]"), "long");
    await assert.rejects(sessions.put("[3]", "x", 0), RangeError);
    await assert.rejects(sessions.put("[3]", "x", Infinity), RangeError);
  });

  it("keys and names of every character, glob ones included: clear of 'a*' leaves 'ab'", async () => {
    const cacheManager = manager({ keyPrefix: "p*[?]\\:" });
    const names = ["a*", "ab", "a?", "[ab]", "a\\", "a", "a]"];
    const caches = names.map((n) => cacheManager.getCache(n));
    const keys = [
      ...Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)),
      "*",
      "[a-z]",
      "\\*",
      "\u{1F600}",
      "\uFFFF",
      "",
    ];
    for (const [i, cache] of caches.entries()) {
      for (const key of keys) await cache.put(key, [i, key], undefined);
    }
    for (const [i, cache] of caches.entries()) {
      for (const key of keys) assert.deepEqual(await cache.get(key), [i, key]);
    }
    // The exact bytes Redis holds: prefix, name, ':', key, in UTF-8.
    assert.equal(await raw.get("p*[?]\\:a*:\u00ff"), JSON.stringify([0, "\u00ff"]));
    await caches[0].clear();
    for (const [i, cache] of caches.entries()) {
      for (const key of keys) {
        assert.deepEqual(await cache.get(key), i === 0 ? undefined : [i, key], `${names[i]}`);
      }
    }
    // A lone surrogate has no UTF-8: two such keys would be one in Redis.
    await assert.rejects(caches[1].get("\uD800"), TypeError);
    assert.throws(() => cacheManager.getCache("\uDC00"), TypeError);
  });

  it("stores JSON data only: a Date is not stored, what the key held is removed, warned once", async () => {
    const log = recorder();
    const cacheManager = manager({ keyPrefix: "json:", logger: log.logger });
    const events = cacheManager.getCache("events");
    await events.put("[1]", { at: "2020-01-01" }, undefined);
    await events.put("[1]", { at: new Date(0) }, undefined);
    assert.equal(await raw.exists("json:events:[1]"), 0);
    assert.equal(await events.get("[1]"), undefined);
    await events.put("[2]", new Date(0), undefined);
    assert.deepEqual(log.lines, [
      'warn RedisCacheManager: cache "events": a Date at .at is not JSON data, so its value is not stored (the method runs uncached). Store plain objects, arrays, strings, finite numbers, booleans and null',
    ]);
    // Once per cache: another cache's first one is logged too.
    await cacheManager.getCache("tags").put("[1]", new Set(["a"]), undefined);
    assert.equal(log.count(/cache "tags": a Set is not JSON data/), 1);
    assert.equal(log.lines.length, 2);
  });

  it("a key something else wrote (not JSON, not UTF-8, not a string) is a miss, removed, logged once", async () => {
    const log = recorder();
    const cacheManager = manager({ keyPrefix: "foreign:", logger: log.logger });
    const users = cacheManager.getCache("users");
    await raw.set("foreign:users:[1]", "not json");
    await raw.set("foreign:users:[2]", Buffer.from([0x22, 0xff, 0x22]));
    await raw.hSet("foreign:users:[3]", "a", "1");
    for (const key of ["[1]", "[2]", "[3]"]) {
      assert.equal(await users.get(key), undefined);
      assert.equal(await raw.exists(`foreign:users:${key}`), 0, key);
    }
    assert.equal(
      log.count(/cache "users": the Redis value of "foreign:users:\[1\]" is not JSON text/),
      1,
    );
    assert.equal(log.lines.length, 1);
  });

  it("Redis killed mid-run: calls reject within timeoutMs, logged once; restarted: they work again", async () => {
    const log = recorder();
    // Calls to a Redis that is down reject at once: the timeout only bounds them, and is long
    // enough that a loaded machine's late event loop does not pass it.
    const timeoutMs = 2000;
    const cacheManager = manager({ keyPrefix: "crash:", timeoutMs, logger: log.logger });
    const users = cacheManager.getCache("users");
    await users.put("[1]", 1, undefined);
    await redis.kill();
    try {
      for (let i = 0; i < 5; i++) {
        const calls = [
          () => users.get("[1]"),
          () => users.put("[2]", 2, undefined),
          () => users.clear(),
        ];
        for (const call of calls) {
          const { ms, rejected } = await timed(call());
          assert.ok(rejected, "a call to a Redis that is down resolved");
          assert.ok(ms < timeoutMs, `a call took ${ms} ms`);
        }
      }
      assert.equal(
        log.count(/Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable/),
        1,
        log.lines.join("\n"),
      );
    } finally {
      await redis.restart();
    }
    await until("the manager to reconnect", async () => {
      await users.put("[3]", 3, undefined);
      return true;
    });
    // A new Redis, nothing saved: the entry before is gone.
    assert.equal(await users.get("[1]"), undefined);
    assert.equal(await users.get("[3]"), 3);
    assert.equal(log.count(/^info .* answers again$/), 1, log.lines.join("\n"));
    assert.equal(log.lines.length, 2, log.lines.join("\n"));
  });

  it("Redis frozen (SIGSTOP): a call rejects after timeoutMs, the next at once, logged once; thawed: they work again", async () => {
    const log = recorder();
    // Long enough that "at once" (under half of it) holds with a loaded machine's late event loop.
    const timeoutMs = 2000;
    const cacheManager = manager({ keyPrefix: "frozen:", timeoutMs, logger: log.logger });
    const users = cacheManager.getCache("users");
    await users.put("[1]", 1, undefined);
    redis.freeze();
    try {
      const first = await timed(users.get("[1]"));
      assert.ok(first.rejected, "a call to a frozen Redis resolved");
      assert.ok(
        first.ms >= timeoutMs - 5 && first.ms < timeoutMs + SLACK_MS,
        `it took ${first.ms} ms`,
      );
      // The silent connection is dropped: the calls after it reject at once.
      for (let i = 0; i < 3; i++) {
        const { ms, rejected } = await timed(users.get("[1]"));
        assert.ok(rejected, "a call to a frozen Redis resolved");
        assert.ok(ms < timeoutMs / 2, `a call took ${ms} ms`);
      }
      assert.equal(log.count(/is unavailable/), 1, log.lines.join("\n"));
    } finally {
      redis.thaw();
    }
    await until("the manager to be answered", async () => await users.get("[1]") === 1);
    assert.equal(log.count(/^info .* answers again$/), 1, log.lines.join("\n"));
  });

  it("a host that takes the connection and never answers: calls reject within timeoutMs", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("data", () => {});
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const log = recorder();
    const timeoutMs = 300;
    const own = new RedisCacheManager({
      url: `redis://127.0.0.1:${port}`,
      timeoutMs,
      logger: log.logger,
    });
    // An app's client, queueing commands while it is not connected: only the timeout ends them.
    const appClient = createClient({ url: `redis://127.0.0.1:${port}`, RESP: 2 });
    appClient.on("error", () => {});
    const connecting = appClient.connect().catch(() => {});
    const given = new RedisCacheManager({ client: appClient, timeoutMs, logger: log.logger });
    try {
      await own.open();
      for (const cacheManager of [own, given]) {
        const cache = cacheManager.getCache("users");
        const calls = [
          () => cache.get("[1]"),
          () => cache.put("[1]", 1, undefined),
          () => cache.evict("[1]"),
        ];
        for (const call of calls) {
          const { ms, rejected } = await timed(call());
          assert.ok(rejected, "a call to a silent host resolved");
          assert.ok(ms < timeoutMs + SLACK_MS, `a call took ${ms} ms`);
        }
      }
      assert.ok(sockets.size >= 2, "neither client reached the silent host");
      const closing = await timed(own.close());
      assert.ok(closing.ms < timeoutMs * 2 + SLACK_MS, `close took ${closing.ms} ms`);
    } finally {
      await own.close();
      appClient.destroy();
      await connecting;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("closed while its connection is still being made: the connection ends, and says nothing", async () => {
    // A host that records what reaches it and answers nothing: a client that went on after close
    // would send its handshake, and keep its socket (and its pings) going with no one to end them.
    const sockets = new Set<Socket>();
    let closed = 0;
    let received = "";
    const host: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("data", (chunk) => (received += chunk));
      socket.on("close", () => closed++);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    const port = (host.address() as { port: number }).port;
    const log = recorder();
    const cacheManager = new RedisCacheManager({
      url: `redis://127.0.0.1:${port}`,
      timeoutMs: 300,
      logger: log.logger,
    });
    try {
      // open() resolves once the socket is asked for; its `connect` event comes at a later turn.
      await cacheManager.open();
      await cacheManager.close();
      await until(
        "the host to see the connection end",
        () => Promise.resolve(sockets.size > 0 && closed === sockets.size),
      );
      assert.equal(received, "", "the closed manager went on with its handshake");
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => host.close(resolve));
    }
  });

  it("escapes what a failing client says before it logs it: no forged line", async () => {
    const log = recorder();
    const lying = {
      sendCommand: () => Promise.reject(new Error("gone\r\nINFO forged line\u2028\u202e")),
    };
    const cacheManager = new RedisCacheManager({ client: lying, logger: log.logger });
    await assert.rejects(cacheManager.getCache("users").get("[1]"));
    assert.equal(log.lines.length, 1, log.lines.join("\n"));
    assert.doesNotMatch(log.lines[0], /[\r\n\u2028\u202e]/);
    assert.match(log.lines[0], /gone\\u000d\\u000aINFO forged line\\u2028\\u202e/);
    await cacheManager.close();
  });

  it("a client the app made is used as it is, and stays open when the manager closes", async () => {
    const appClient = createClient({ url: redis.url });
    appClient.on("error", () => {});
    await appClient.connect();
    try {
      const cacheManager = new RedisCacheManager({ client: appClient, keyPrefix: "given:" });
      const users = cacheManager.getCache("users");
      await users.put("[1]", { id: 1 }, undefined);
      assert.deepEqual(await users.get("[1]"), { id: 1 });
      await users.clear();
      assert.equal(await users.get("[1]"), undefined);
      await cacheManager.close();
      assert.equal(await appClient.ping(), "PONG");
    } finally {
      appClient.destroy();
    }
  });

  it("checks its options", () => {
    assert.throws(() => new RedisCacheManager({ uri: "x" } as never), /unknown option "uri"/);
    assert.throws(
      () => new RedisCacheManager({ url: redis.url, client: raw }),
      /give url or client, not both/,
    );
    assert.throws(
      () => new RedisCacheManager({ url: "http://app:s3cret@x" }),
      (error: Error) =>
        /redis:\/\/ or rediss:\/\//.test(error.message) && !/s3cret/.test(error.message),
    );
    assert.throws(() => new RedisCacheManager({ timeoutMs: 0 }), /timeoutMs must be/);
    assert.throws(() => new RedisCacheManager({ keyPrefix: 1 as never }), /keyPrefix must be/);
    assert.throws(() => new RedisCacheManager({ client: {} as never }), /client must be/);
  });

  describe("as the app's CacheManager bean, under @Cacheable", () => {
    // Long enough that a call that does not wait for a dead Redis beats it on a loaded machine.
    const E2E_TIMEOUT_MS = 2000;
    let calls = 0;

    @Service()
    class Users {
      @Cacheable("users")
      async find(id: number): Promise<{ id: number; name: string }> {
        calls++;
        return await Promise.resolve({ id, name: `user ${id}` });
      }
    }

    function config(url: string, logger: ReturnType<typeof recorder>["logger"]) {
      @Configuration()
      class CacheConfig {
        @Bean()
        cacheManager(): RedisCacheManager {
          return new RedisCacheManager({
            url,
            keyPrefix: "e2e:",
            timeoutMs: E2E_TIMEOUT_MS,
            logger,
          });
        }
      }
      return CacheConfig;
    }

    it("the second call is served from Redis; Redis killed, the method runs uncached", async () => {
      calls = 0;
      const log = recorder();
      const app = await bootstrap({
        components: [Users, config(redis.url, log.logger)],
        logger: log.logger,
      });
      try {
        assert.ok(app.getBean(CacheManager) instanceof RedisCacheManager);
        const users = app.getBean(Users);
        assert.deepEqual(await users.find(7), { id: 7, name: "user 7" });
        assert.deepEqual(await users.find(7), { id: 7, name: "user 7" });
        assert.equal(calls, 1);
        // One entry, under the key @Cacheable made of the argument.
        const [key, ...more] = await keysUnder("e2e:users:");
        assert.deepEqual(more, []);
        assert.equal(await raw.get(key), '{"id":7,"name":"user 7"}');
        await redis.kill();
        try {
          const { ms, rejected } = await timed(users.find(7));
          assert.ok(!rejected && ms < E2E_TIMEOUT_MS, `the call took ${ms} ms`);
          assert.deepEqual(await users.find(8), { id: 8, name: "user 8" });
          assert.equal(calls, 3);
        } finally {
          await redis.restart();
        }
      } finally {
        await app.close();
      }
    });

    it("Redis down at startup: bootstrap succeeds, calls run uncached, close returns", async () => {
      calls = 0;
      const log = recorder();
      const app = await bootstrap({
        // A password, which no line logged may show.
        components: [Users, config(`redis://:s3cret@127.0.0.1:${await freePort()}`, log.logger)],
        logger: log.logger,
      });
      const users = app.getBean(Users);
      assert.deepEqual(await users.find(1), { id: 1, name: "user 1" });
      assert.deepEqual(await users.find(1), { id: 1, name: "user 1" });
      assert.equal(calls, 2);
      assert.ok(log.lines.every((line) => !line.includes("s3cret")), log.lines.join("\n"));
      assert.equal(
        log.count(/RedisCacheManager: Redis at redis:\/\/\*\*\*@127\.0\.0\.1:\d+ is unavailable/),
        1,
        log.lines.join("\n"),
      );
      const closing = await timed(app.close());
      // Close waits at most timeoutMs twice (the closing, then the connection attempts' end).
      assert.ok(
        !closing.rejected && closing.ms < E2E_TIMEOUT_MS * 2 + SLACK_MS,
        `close took ${closing.ms} ms`,
      );
    });
  });
});
