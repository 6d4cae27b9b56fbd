// integration test: redis-server from Debian's redis-server package (tools/system_packages.sh)
// The `redis` health component of a RedisCacheManager bean against a real Redis, which the tests
// stop, freeze and start again: each probe answers, with `redis` DOWN, within the timeouts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Application, Bean, bootstrap, Configuration } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { RedisCacheManager } from "../../cache-redis.ts";
import { RedisServer, until } from "./redis_server.ts";

// How long one Redis command may take before the manager gives up on it: well under the health
// timeout, so that a frozen Redis is the manager's timeout, as it is for a cached call.
const COMMAND_TIMEOUT_MS = 500;

async function app(url: string, health: Record<string, unknown> = {}): Promise<Application> {
  @Configuration()
  class CacheConfig {
    @Bean()
    cacheManager(): RedisCacheManager {
      return new RedisCacheManager({
        url,
        timeoutMs: COMMAND_TIMEOUT_MS,
        logger: { info() {}, warn() {}, error() {} },
      });
    }
  }
  return await bootstrap({
    components: [CacheConfig],
    config: {
      management: {
        endpoint: { health: { "show-details": "always" } },
        health: { timeout: 10_000, diskspace: { enabled: false }, ...health },
      },
    },
    actuator: actuator(),
  });
}

interface Probe {
  readonly status: number;
  readonly body: {
    status: string;
    components?: Record<string, { status: string; details: Record<string, unknown> }>;
  };
}

async function probe(of: Application): Promise<Probe> {
  const response = await of.fetch(new Request("http://x/actuator/health"));
  return { status: response.status, body: await response.json() };
}

describe("the redis health component of a RedisCacheManager", () => {
  let redis: RedisServer;
  let served: Application;

  before(async () => {
    redis = await RedisServer.start();
    served = await app(redis.url);
  });

  after(async () => {
    await served?.close();
    redis?.thaw();
    await redis?.kill();
  });

  it("is UP with the server's version while Redis answers", async () => {
    const { status, body } = await probe(served);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body.components!), ["redis"]);
    assert.equal(body.components!.redis.status, "UP");
    assert.match(String(body.components!.redis.details.version), /^\d+\.\d+\.\d+/);
  });

  it("is DOWN within the manager's timeout while Redis is frozen, and the probe answers", async () => {
    redis.freeze();
    try {
      const { status, body } = await probe(served);
      assert.equal(status, 503);
      assert.deepEqual(body.components!.redis, {
        status: "DOWN",
        details: { error: `Redis did not answer INFO within ${COMMAND_TIMEOUT_MS} ms` },
      });
    } finally {
      redis.thaw();
    }
    await until("redis UP again", async () => (await probe(served)).status === 200);
  });

  it("is DOWN while Redis is stopped, and UP again once it is back", async () => {
    await redis.kill();
    const { status, body } = await probe(served);
    assert.equal(status, 503);
    assert.equal(body.status, "DOWN");
    assert.equal(body.components!.redis.status, "DOWN");
    assert.equal(typeof body.components!.redis.details.error, "string");
    await redis.restart();
    await until("redis UP again", async () => (await probe(served)).status === 200);
    assert.equal((await probe(served)).body.components!.redis.status, "UP");
  });

  it("is not there with management.health.redis.enabled: false", async () => {
    const off = await app(redis.url, { redis: { enabled: false } });
    try {
      assert.deepEqual(await probe(off), { status: 200, body: { status: "UP" } });
    } finally {
      await off.close();
    }
  });
});
