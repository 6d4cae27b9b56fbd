// integration test: redis-server from Debian's redis-server package (tools/system_packages.sh)
// RedisLockManager against a real Redis: a redis-server this file starts on a free loopback port,
// each manager over a client of its own, as in a process of its own, and three real processes of
// the runtime running the suite (tests/fixtures/tasks/lock_contender.ts). Every wait is on a
// state (an acquire that resolves, a key that changes), bounded only against one that never comes.
import assert from "node:assert/strict";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { createClient } from "redis";
import { RedisLockManager, type RedisLockManagerOptions } from "../../cache-redis.ts";
import type { HeldLock, LockRequest } from "../../src/tasks/lock_manager.ts";
import { freePort } from "../helpers.ts";
import { RedisServer } from "./redis_server.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { assertNoOverlap, contender, startTogether } from "../tasks/lock_contenders.ts";

const LONG_WAIT = 120_000;

const request = (key: string, waitMs = 0, leaseMs = 60_000): LockRequest => ({
  key,
  waitMs,
  leaseMs,
});

async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

function held(lock: HeldLock | undefined): HeldLock {
  assert.notEqual(lock, undefined, "expected the lock to be taken");
  return lock!;
}

/** A node-redis client; `down`: one that queues nothing while disconnected, and retries often. */
function makeClient(url: string, down = false) {
  const client = down
    ? createClient({
      url,
      RESP: 2,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: () => 50 },
    })
    : createClient({ url, RESP: 2 });
  client.on("error", () => {});
  return client;
}

type Client = ReturnType<typeof makeClient>;

describe("RedisLockManager", () => {
  let redis: RedisServer;
  let raw: Client;
  const clients: Client[] = [];
  let prefixes = 0;

  before(async () => {
    redis = await RedisServer.start();
    raw = await connected(redis.url);
  });
  after(async () => {
    for (const client of clients) client.destroy();
    await redis.kill();
  });

  async function connected(url: string): Promise<Client> {
    const client = makeClient(url);
    clients.push(client);
    await client.connect();
    return client;
  }

  /** Managers over clients of their own (processes of their own), with a prefix of this test's. */
  async function replicas(count: number, options: RedisLockManagerOptions = {}) {
    const keyPrefix = `t${++prefixes}:`;
    const made: RedisLockManager[] = [];
    for (let i = 0; i < count; i++) {
      made.push(new RedisLockManager(await connected(redis.url), { keyPrefix, ...options }));
    }
    return { keyPrefix, locks: made };
  }

  it("one key: a second try gets nothing, a waiting one gets it once released", async () => {
    const { locks: [a, b] } = await replicas(2);
    const first = held(await a!.acquire(request("order-42")));
    assert.equal(await b!.acquire(request("order-42")), undefined);
    const other = held(await b!.acquire(request("order-43")));
    const waiting = b!.acquire(request("order-42", LONG_WAIT));
    assert.equal(await settled(waiting), false);
    await first.release();
    const second = held(await waiting);
    assert.equal(await a!.acquire(request("order-42")), undefined);
    await second.release();
    await other.release();
  });

  it("release twice is once, and a late release never frees another's lock", async () => {
    const { keyPrefix, locks: [a, b, c] } = await replicas(3);
    const first = held(await a!.acquire(request("k")));
    await first.release();
    await first.release();
    const second = held(await b!.acquire(request("k")));
    await first.release();
    assert.equal(await c!.acquire(request("k")), undefined);
    await second.release();

    const late = held(await a!.acquire(request("late", 0, 1)));
    const taken = held(await b!.acquire(request("late", LONG_WAIT)));
    const token = await raw.get(`${keyPrefix}late`);
    await late.release(); // late: the lock is B's now
    assert.equal(await raw.get(`${keyPrefix}late`), token);
    assert.equal(await c!.acquire(request("late")), undefined);
    await taken.release();
    held(await c!.acquire(request("late")));
  });

  it("fenced: each new holder's token is greater; a lease renews only while held", async () => {
    const { keyPrefix, locks: [a, b] } = await replicas(2);
    const fenced = (key: string, leaseMs: number, waitMs = LONG_WAIT): LockRequest => ({
      key,
      waitMs,
      leaseMs,
      fenced: true,
    });
    const tokens: number[] = [];
    for (let i = 0; i < 4; i++) {
      const lock = held(await (i % 2 === 0 ? a : b)!.acquire(fenced("daemon", 60_000)));
      tokens.push(lock.token!);
      assert.equal(await lock.renew!(60_000), true);
      await lock.release();
      assert.equal(await lock.renew!(60_000), false);
    }
    const lapsed = held(await a!.acquire(fenced("daemon", 1)));
    const next = held(await b!.acquire(fenced("daemon", 60_000)));
    tokens.push(lapsed.token!, next.token!);
    // Redis's time in ms at least, one more than the last otherwise.
    for (const [i, token] of tokens.entries()) {
      assert.ok(
        Number.isSafeInteger(token) && Math.abs(token - Date.now()) < 3_600_000,
        `${token}`,
      );
      if (i > 0) assert.ok(token > tokens[i - 1], `tokens ${tokens}`);
    }
    // A counter lost (evicted, flushed) starts again above every token given.
    await raw.del(keyPrefix);
    assert.equal(await lapsed.renew!(60_000), false, "lapsed, and another's now");
    assert.equal(await next.renew!(5_000), true);
    const ttl = await raw.pTTL(`${keyPrefix}daemon`);
    assert.ok(ttl > 0 && ttl <= 5_000, `pttl ${ttl}`);
    // A key whose name ends as another's counter would is a lock of its own.
    const other = held(await a!.acquire(fenced("daemon:fence", 60_000)));
    assert.ok(other.token! > 0);
    await other.release();
    await next.release();
    // Redis's clock (this machine's) past the last token: a counter lost in the millisecond of
    // many takings would start again at that millisecond.
    while (Date.now() <= tokens.at(-1)!) await new Promise((resolve) => setTimeout(resolve, 1));
    const after = held(await a!.acquire(fenced("daemon", 60_000)));
    assert.ok(after.token! > tokens.at(-1)!, `${after.token} after ${tokens}`);
    await after.release();
    // Unfenced locks keep no counter, and have no token.
    const plain = held(await a!.acquire(request("plain")));
    assert.equal(plain.token, undefined);
    assert.equal(await raw.hGet(keyPrefix, "plain"), null);
    assert.equal(await raw.hGet(keyPrefix, "daemon"), String(after.token));
    await plain.release();
  });

  it("minHoldMs keeps a released lock until that long after its taking", async () => {
    const { keyPrefix, locks: [a, b] } = await replicas(2);
    const kept = held(await a!.acquire({ ...request("kept", 0, 120_000), minHoldMs: 60_000 }));
    const token = await raw.get(`${keyPrefix}kept`);
    await kept.release();
    assert.equal(await raw.get(`${keyPrefix}kept`), token, "still this taking's");
    const ttl = await raw.pTTL(`${keyPrefix}kept`);
    assert.ok(ttl > 0 && ttl <= 60_000, `the lease left is the hold's: ${ttl} ms`);
    assert.equal(await b!.acquire(request("kept")), undefined);

    const takenAt = performance.now();
    const brief = held(await a!.acquire({ ...request("brief"), minHoldMs: 300 }));
    await brief.release();
    const next = held(await b!.acquire(request("brief", LONG_WAIT)));
    assert.ok(performance.now() - takenAt >= 300, "not before its least hold");
    await next.release();
    assert.equal(await raw.exists(`${keyPrefix}brief`), 0, "minHoldMs 0: deleted at once");
  });

  it("serves @SchedulerLock: one run per tick across two apps, lockAtLeastFor kept", async () => {
    const { bootstrap, Bean, Configuration, Scheduled, SchedulerLock, Service } = await import(
      "../../mod.ts"
    );
    const { LockManager } = await import("../../tasks.ts");
    const { keyPrefix, locks } = await replicas(2);
    const runs: number[] = [];
    const apps = await Promise.all(locks.map(async (manager, replica) => {
      @Service()
      class Jobs {
        @Scheduled({ cron: "0 0 * * *" })
        @SchedulerLock({ name: "nightly", lockAtMostFor: "10m", lockAtLeastFor: "5m" })
        nightly(): void {
          runs.push(replica);
        }
      }
      @Configuration()
      class Locks {
        @Bean()
        lockManager(): InstanceType<typeof LockManager> {
          return manager;
        }
      }
      return await bootstrap({ components: [Jobs, Locks] });
    }));
    try {
      for (const app of apps) await app.scheduled({ cron: "0 0 * * *" });
      assert.deepEqual(runs, [0]);
      const ttl = await raw.pTTL(`${keyPrefix}nightly`);
      assert.ok(ttl > 0 && ttl <= 300_000, `held for lockAtLeastFor: ${ttl} ms`);
    } finally {
      for (const app of apps) await app.close();
    }
  });

  it("every character and very long keys are locks of their own, stored as they are", async () => {
    const { keyPrefix, locks: [a, b] } = await replicas(2);
    const keys = [
      ...Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)),
      "\uFFFD",
      "😀",
      "Tick",
      "tick",
      "tick ",
      "a*b?[c]",
      "x".repeat(100_000),
    ];
    const locks: HeldLock[] = [];
    for (const key of keys) {
      const lock = await a!.acquire(request(key));
      assert.notEqual(lock, undefined, `key ${JSON.stringify(key)}`);
      locks.push(lock!);
      assert.equal(await b!.acquire(request(key)), undefined, `key ${JSON.stringify(key)}`);
      assert.notEqual(await raw.get(keyPrefix + key), null, `key ${JSON.stringify(key)}`);
    }
    for (const lock of locks) await lock.release();
    for (const key of keys) {
      assert.notEqual(await b!.acquire(request(key)), undefined, `key ${JSON.stringify(key)}`);
    }
    await assert.rejects(a!.acquire(request("\uD800")), /lone UTF-16 surrogate/);
  });

  it("refuses what is not a client, an option it lacks, and requests that are none", async () => {
    const client = await connected(redis.url);
    assert.throws(() => new RedisLockManager({} as never), /client must be a Redis client/);
    assert.throws(
      () => new RedisLockManager(client, { url: "redis://x" } as never),
      /unknown option "url"; the options are keyPrefix, timeoutMs/,
    );
    assert.throws(() => new RedisLockManager(client, { timeoutMs: 0 }), /timeoutMs must be/);
    assert.throws(() => new RedisLockManager(client, { keyPrefix: "\uDC00" }), /keyPrefix/);
    const locks = new RedisLockManager(client);
    await assert.rejects(locks.acquire(request("k", 0, 0)), /leaseMs of the lock "k" is 0/);
    await assert.rejects(locks.acquire(request("k", NaN)), /waitMs of the lock "k" is NaN/);
  });

  it("a signal aborted ends the wait with nothing", async () => {
    const { locks: [a, b] } = await replicas(2);
    const first = held(await a!.acquire(request("k")));
    const abort = new AbortController();
    const waiting = b!.acquire({ ...request("k", LONG_WAIT), signal: abort.signal });
    assert.equal(await settled(waiting), false);
    abort.abort();
    assert.equal(await waiting, undefined);
    await first.release();
  });

  it("Redis down or silent: acquire rejects within its timeout, naming it, no password", async () => {
    // Nothing listens on the port: the client queues nothing (disableOfflineQueue), or the
    // manager's timeout ends the call.
    const port = await freePort();
    const url = `redis://user:s3cret-pass@127.0.0.1:${port}`;
    const client = makeClient(url, true);
    clients.push(client);
    client.connect().catch(() => {});
    const locks = new RedisLockManager(client, { timeoutMs: 300 });
    const down = await locks.acquire(request("k", 60_000)).then(
      () => assert.fail("expected a rejection"),
      (error: Error) => error,
    );
    assert.match(down.message, /could not take the lock "k" on Redis at redis:\/\//);
    assert.match(down.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
    assert.ok(!down.message.includes("s3cret-pass"), down.message);

    // A server frozen: connected, and answering nothing.
    const frozen = await RedisServer.start();
    const silentClient = await connected(frozen.url);
    frozen.freeze();
    try {
      const silent = await new RedisLockManager(silentClient, { timeoutMs: 300 })
        .acquire(request("k")).then(
          () => assert.fail("expected a rejection"),
          (error: Error) => error,
        );
      assert.match(silent.message, /no answer within 300 ms/);
    } finally {
      frozen.thaw();
      await frozen.kill();
    }
  });

  it("a take that times out and reaches Redis later leaves no lock behind it", async () => {
    // A proxy that holds everything: the SET reaches Redis only after the manager gave up on
    // it, as a reply lost or late would leave it. Redis then applies it: a lock nobody holds.
    const proxy = await tcpProxy("127.0.0.1", redis.port);
    await proxy.up();
    try {
      const client = await connected(`redis://127.0.0.1:${proxy.port}`);
      const { keyPrefix, locks: [other] } = await replicas(1);
      const late = new RedisLockManager(client, { keyPrefix, timeoutMs: 200 });
      proxy.hold();
      const failure = await late.acquire(request("late-take", 0, 600_000)).then(
        () => assert.fail("expected a rejection"),
        (error: Error) => error,
      );
      assert.match(failure.message, /could not take the lock "late-take".*no answer within 200 ms/);
      proxy.release();
      // One connection answers in order: once this PING is answered, all the manager sent
      // before it has been applied.
      assert.equal(await client.ping(), "PONG");
      assert.equal(await raw.get(`${keyPrefix}late-take`), null);
      // Another contender takes it at once, not after the 10-minute lease.
      await held(await other!.acquire(request("late-take"))).release();
    } finally {
      await proxy.down();
    }
  });

  it("a release that reaches Redis late keeps the least hold from the taking, not from then", async () => {
    const proxy = await tcpProxy("127.0.0.1", redis.port);
    await proxy.up();
    try {
      const client = await connected(`redis://127.0.0.1:${proxy.port}`);
      const keyPrefix = `t${++prefixes}:`;
      const locks = new RedisLockManager(client, { keyPrefix, timeoutMs: LONG_WAIT });
      const key = `${keyPrefix}late-release`;
      const lock = held(
        await locks.acquire({ ...request("late-release", 0, 3000), minHoldMs: 2000 }),
      );
      proxy.hold();
      const releasing = lock.release();
      // A second of the lease gone on Redis's clock while the release waits in the proxy.
      while (await raw.pTTL(key) > 2000) await new Promise((resolve) => setTimeout(resolve, 20));
      const before = await raw.pTTL(key);
      proxy.release();
      await releasing;
      // What is left of the least hold, on Redis's clock: the lease left less lease - hold.
      const after = await raw.pTTL(key);
      assert.ok(after > 0 && after <= before - 1000, `held ${after} ms past ${before} - 1000`);
    } finally {
      await proxy.down();
    }
  });

  it("three processes taking five keys never hold one key together", async () => {
    const keys = ["a", "b", "c", "d", "e"];
    const rounds = 20;
    const children = ["p1", "p2", "p3"].map((name) =>
      contender(name, {
        LOCK_STORE: "redis",
        LOCK_URL: redis.url,
        LOCK_MODE: "contend",
        LOCK_KEYS: keys.join(","),
        LOCK_ROUNDS: String(rounds),
      })
    );
    await startTogether(children);
    const events = (await raw.lRange("t:events", 0, -1)).map((line) => {
      const [k, who, event] = line.split("|");
      return { k: k!, who: who!, event: event! };
    });
    assertNoOverlap(events, keys, 3 * rounds);
  });

  it("a holder killed with kill -9 frees its key once its lease has passed", async () => {
    const child = contender("holder", {
      LOCK_STORE: "redis",
      LOCK_URL: redis.url,
      LOCK_MODE: "hold",
      LOCK_KEYS: "killed",
      LOCK_LEASE_MS: "2000",
    });
    await child.printed("held");
    process.kill(child.child.pid!, "SIGKILL");
    await child.exited;
    const next = new RedisLockManager(await connected(redis.url), { keyPrefix: "t:lock:" });
    assert.equal(await next.acquire(request("killed")), undefined);
    held(await next.acquire(request("killed", LONG_WAIT)));
  });
});
