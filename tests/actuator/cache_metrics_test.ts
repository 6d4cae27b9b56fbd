// deno-lint-ignore-file require-await -- the beans' async methods stand for an app's I/O.
// The caches' series as Spring names them (`cache_gets_total{cache,result}`, `cache_puts_total`,
// `cache_evictions_total`), counted from real calls of caching methods: on a meter provider of
// the test's own, and at /actuator/prometheus (promtool checks it in prometheus_scrape_test.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { bootstrap, Cacheable, CacheEvict, CacheManager, CachePut, Service } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { observeCaches } from "../../src/actuator/cache_metrics.ts";
import { cacheStatisticsOf } from "../../src/cache/cache_statistics.ts";
import { CollectingReader } from "../metric_reader.ts";
import { readOpenMetrics } from "./openmetrics_check.ts";
import { RUNTIME } from "../runtime.ts";
import { PROMETHEUS, samples, sampleValue, scrape } from "./prometheus_samples.ts";

// The registry behind /actuator/prometheus is the process's: each runtime's run, and each test,
// has caches of its own names.
const PREFIX = `h71-${RUNTIME}`;

function usersService(cache: string) {
  @Service()
  class Users {
    loads = 0;
    @Cacheable(cache, { key: (id: number) => id })
    async find(id: number): Promise<{ id: number }> {
      this.loads++;
      return { id };
    }
    @CachePut(cache, { key: (id: number) => id })
    async save(id: number): Promise<{ id: number; saved: true }> {
      return { id, saved: true };
    }
    @CacheEvict(cache, { key: (id: number) => id })
    async remove(_id: number): Promise<void> {}
    @CacheEvict(cache, { allEntries: true })
    async removeAll(): Promise<void> {}
  }
  return Users;
}

describe("the caches' series at /actuator/prometheus", () => {
  it("counts hits, misses, puts and evictions of each cache, by name and manager", async () => {
    const cache = `${PREFIX}-users`;
    const Users = usersService(cache);
    const app = await bootstrap({ components: [Users], config: PROMETHEUS, actuator: actuator() });
    // A declared cache has its series before its first call, at 0, as Spring's have.
    const before = samples(await scrape(app));
    const gets = (result: string) => ({ cache, result });
    assert.equal(sampleValue(before, "cache_gets_total", gets("hit")), 0);
    assert.equal(sampleValue(before, "cache_gets_total", gets("miss")), 0);
    assert.equal(sampleValue(before, "cache_puts_total", { cache }), 0);
    assert.equal(sampleValue(before, "cache_evictions_total", { cache }), 0);

    const users = app.getBean(Users);
    await users.find(1); // miss, put
    await users.find(1); // hit
    await users.find(2); // miss, put
    await users.save(3); // put
    await users.find(3); // hit
    await users.remove(1); // eviction
    await users.find(1); // miss, put
    await users.removeAll(); // eviction
    assert.equal(users.loads, 3);

    const after = samples(await scrape(app));
    assert.equal(sampleValue(after, "cache_gets_total", gets("hit")), 2);
    assert.equal(sampleValue(after, "cache_gets_total", gets("miss")), 3);
    assert.equal(sampleValue(after, "cache_puts_total", { cache }), 4);
    assert.equal(sampleValue(after, "cache_evictions_total", { cache }), 2);
    const series = after.find((s) => s.name === "cache_puts_total" && s.labels.cache === cache);
    assert.deepEqual(Object.keys(series!.labels).sort(), [
      "cache",
      "cache_manager",
      "otel_scope_name",
    ]);
    assert.equal(series!.labels.cache_manager, "cacheManager");
    await app.close();
  });

  it("reports only the caches the app's methods declare: a name made at run time adds none", async () => {
    const cache = `${PREFIX}-declared`;
    const Users = usersService(cache);
    const app = await bootstrap({ components: [Users], config: PROMETHEUS, actuator: actuator() });
    const manager = app.getBean(CacheManager);
    // Names from requests, used directly and counted: none becomes a series.
    for (let i = 0; i < 200; i++) {
      const name = `${PREFIX}-input-${i}-${Math.random()}`;
      await manager.getCache(name).put("k", i, undefined);
      cacheStatisticsOf(manager).count(name, "puts");
    }
    await app.getBean(Users).find(1);
    const all = samples(await scrape(app)).filter((s) => s.name.startsWith("cache_"));
    const names = new Set(all.map((s) => s.labels.cache));
    assert.ok(names.has(cache), [...names].join(", "));
    assert.ok(![...names].some((n) => n.startsWith(`${PREFIX}-input-`)), [...names].join(", "));
    await app.close();
  });

  it("stops reading an app's counts once it closes", async () => {
    const cache = `${PREFIX}-closed`;
    const Users = usersService(cache);
    const app = await bootstrap({ components: [Users], config: PROMETHEUS, actuator: actuator() });
    await app.getBean(Users).find(1);
    const manager = app.getBean(CacheManager);
    const other = await bootstrap({ config: PROMETHEUS, actuator: actuator() });
    const misses = async () =>
      sampleValue(samples(await scrape(other)), "cache_gets_total", { cache, result: "miss" });
    assert.equal(await misses(), 1);
    await app.close();
    // The registry keeps a cumulative series at its last value; the closed app's is not read.
    cacheStatisticsOf(manager).count(cache, "misses");
    assert.equal(await misses(), 1);
  });

  it("reads as OpenMetrics: counter families, by the specification's rules", async () => {
    const cache = `${PREFIX}-openmetrics`;
    const Users = usersService(cache);
    const app = await bootstrap({ components: [Users], config: PROMETHEUS, actuator: actuator() });
    await app.getBean(Users).find(1);
    await app.getBean(Users).find(1);
    const res = await app.fetch(
      new Request("http://localhost/actuator/prometheus", {
        headers: { accept: "application/openmetrics-text;version=1.0.0" },
      }),
    );
    const families = readOpenMetrics(await res.text());
    for (const name of ["cache_gets", "cache_puts", "cache_evictions"]) {
      const family = families.find((f) => f.name === name);
      assert.equal(family?.type, "counter", name);
      assert.ok(family.samples.some((s) => s.labels.cache === cache), name);
    }
    await app.close();
  });
});

describe("observeCaches", () => {
  it("follows a meter provider registered later, with the counts so far", async () => {
    const cache = `${PREFIX}-follow`;
    const Users = usersService(cache);
    const app = await bootstrap({ components: [Users] });
    const reader = new CollectingReader();
    let provider = new MeterProvider();
    const beans = [
      { name: "cacheManager", instance: app.getBean(CacheManager) },
      { name: "users", instance: app.getBean(Users) },
    ];
    const stop = observeCaches(beans, () => [provider]);
    await app.getBean(Users).find(1);
    provider = new MeterProvider({ readers: [reader] });
    await app.getBean(Users).find(1);
    const points = await reader.points("cache.gets");
    assert.deepEqual(
      points.map((p) => [p.attributes.result, p.value]).sort(),
      [["hit", 1], ["miss", 1]],
    );
    stop();
    await app.close();
  });
});
