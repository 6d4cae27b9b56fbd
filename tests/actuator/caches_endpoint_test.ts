import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Bean,
  bootstrap,
  type Cache,
  Cacheable,
  CacheManager,
  Configuration,
  Service,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { cachesOf } from "../../src/actuator/caches_endpoint.ts";

@Service()
class Catalog {
  finds = 0;
  prices = 0;

  @Cacheable("items")
  async find(id: number): Promise<{ id: number }> {
    this.finds++;
    return await Promise.resolve({ id });
  }

  @Cacheable("prices")
  async price(id: number): Promise<number> {
    this.prices++;
    return await Promise.resolve(id * 10);
  }
}

const exposing = (include: string) => ({
  management: { endpoints: { web: { exposure: { include } } } },
});

type App = { fetch(r: Request): Response | Promise<Response> };

async function call(app: App, method: string, path: string) {
  const response = await app.fetch(new Request(`http://localhost${path}`, { method }));
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

describe("/actuator/caches", () => {
  it("answers 404 to reads and evictions alike unless exposure names it", async () => {
    const app = await bootstrap({
      components: [Catalog],
      actuator: actuator(),
      config: exposing("health,info"),
    });
    const catalog = app.getBean(Catalog);
    await catalog.find(1);
    for (
      const [method, path] of [
        ["GET", "/actuator/caches"],
        ["GET", "/actuator/caches/items"],
        ["DELETE", "/actuator/caches/items"],
        ["DELETE", "/actuator/caches"],
      ]
    ) {
      assert.equal((await call(app, method, path)).status, 404, `${method} ${path}`);
    }
    await catalog.find(1);
    assert.equal(catalog.finds, 1);
    await app.close();
  });

  it("lists each cache manager's caches, and one cache, in Spring's shapes", async () => {
    const app = await bootstrap({
      components: [Catalog],
      actuator: actuator(),
      config: exposing("caches"),
    });
    assert.deepEqual(await call(app, "GET", "/actuator/caches"), {
      status: 200,
      body: {
        cacheManagers: {
          cacheManager: {
            caches: {
              items: { target: "MemoryCacheManager" },
              prices: { target: "MemoryCacheManager" },
            },
          },
        },
      },
    });
    assert.deepEqual(await call(app, "GET", "/actuator/caches/items"), {
      status: 200,
      body: { target: "MemoryCacheManager", name: "items", cacheManager: "cacheManager" },
    });
    assert.equal((await call(app, "GET", "/actuator/caches/users")).status, 404);
    assert.equal(
      (await call(app, "GET", "/actuator/caches/items?cacheManager=cacheManager")).status,
      200,
    );
    assert.equal((await call(app, "GET", "/actuator/caches/items?cacheManager=other")).status, 404);
    await app.close();
  });

  it("DELETE /actuator/caches/{name} evicts that cache alone: its method runs again", async () => {
    const app = await bootstrap({
      components: [Catalog],
      actuator: actuator(),
      config: exposing("*"),
    });
    const catalog = app.getBean(Catalog);
    await catalog.find(1);
    await catalog.price(1);
    await catalog.find(1);
    assert.equal(catalog.finds, 1);
    assert.deepEqual(await call(app, "DELETE", "/actuator/caches/items"), {
      status: 204,
      body: undefined,
    });
    await catalog.find(1);
    await catalog.price(1);
    assert.deepEqual([catalog.finds, catalog.prices], [2, 1]);
    assert.equal((await call(app, "DELETE", "/actuator/caches/users")).status, 404);
    await app.close();
  });

  it("DELETE /actuator/caches evicts every cache", async () => {
    const app = await bootstrap({
      components: [Catalog],
      actuator: actuator(),
      config: exposing("caches"),
    });
    const catalog = app.getBean(Catalog);
    await catalog.find(1);
    await catalog.price(1);
    assert.equal((await call(app, "DELETE", "/actuator/caches")).status, 204);
    await catalog.find(1);
    await catalog.price(1);
    assert.deepEqual([catalog.finds, catalog.prices], [2, 2]);
    await app.close();
  });

  it("names the app's own cache manager by its bean, and answers none for an app without caching", async () => {
    class MapCacheManager extends CacheManager {
      getCache(): Cache {
        return {
          get: () => Promise.resolve(undefined),
          put: () => Promise.resolve(),
          evict: () => Promise.resolve(),
          clear: () => Promise.resolve(),
        };
      }
    }
    @Configuration()
    class Caching {
      @Bean()
      shared(): CacheManager {
        return new MapCacheManager();
      }
    }
    const app = await bootstrap({
      components: [Catalog, Caching],
      actuator: actuator(),
      config: exposing("caches"),
    });
    assert.deepEqual((await call(app, "GET", "/actuator/caches")).body, {
      cacheManagers: {
        shared: {
          caches: { items: { target: "MapCacheManager" }, prices: { target: "MapCacheManager" } },
        },
      },
    });
    await app.close();
    const none = await bootstrap({ actuator: actuator(), config: exposing("caches") });
    assert.deepEqual((await call(none, "GET", "/actuator/caches")).body, { cacheManagers: {} });
    assert.equal((await call(none, "DELETE", "/actuator/caches")).status, 204);
    await none.close();
  });
});

describe("two cache managers", () => {
  // A manager of maps of this process, each cache counting what it holds.
  class MapCacheManager extends CacheManager {
    readonly caches = new Map<string, Map<string, unknown>>();
    getCache(name: string): Cache {
      let entries = this.caches.get(name);
      if (entries === undefined) this.caches.set(name, entries = new Map());
      const held = entries;
      return {
        get: (key) => Promise.resolve(held.get(key)),
        put: (key, value) => Promise.resolve(void held.set(key, value)),
        evict: (key) => Promise.resolve(void held.delete(key)),
        clear: () => Promise.resolve(held.clear()),
      };
    }
  }

  it("@Cacheable uses the one named cacheManager, and ?cacheManager= picks either", async () => {
    @Configuration()
    class Caching {
      @Bean()
      cacheManager(): CacheManager {
        return new MapCacheManager();
      }

      @Bean()
      localCache(): CacheManager {
        return new MapCacheManager();
      }
    }
    const app = await bootstrap({
      components: [Catalog, Caching],
      actuator: actuator(),
      config: exposing("caches"),
    });
    await app.getBean(Catalog).price(3);
    const main = app.getBean<MapCacheManager>("cacheManager");
    const local = app.getBean<MapCacheManager>("localCache");
    assert.equal(main.caches.get("prices")?.size, 1);
    assert.equal(local.caches.get("prices")?.size ?? 0, 0);
    // Both managers list the caches the methods use; a name they both hold needs the parameter.
    assert.equal((await call(app, "GET", "/actuator/caches/prices")).status, 400);
    assert.deepEqual(
      (await call(app, "GET", "/actuator/caches/prices?cacheManager=localCache")).body,
      { target: "MapCacheManager", name: "prices", cacheManager: "localCache" },
    );
    assert.equal(
      (await call(app, "DELETE", "/actuator/caches/prices?cacheManager=cacheManager")).status,
      204,
    );
    assert.equal(main.caches.get("prices")?.size, 0);
    await app.close();
  });

  it("stop bootstrap, naming both and the way out, when neither is named cacheManager", async () => {
    @Configuration()
    class Caching {
      @Bean()
      redisCache(): CacheManager {
        return new MapCacheManager();
      }

      @Bean()
      localCache(): CacheManager {
        return new MapCacheManager();
      }
    }
    await assert.rejects(
      bootstrap({ components: [Catalog, Caching], logger: { error: () => {} } }),
      (error: Error) => {
        assert.match(error.message, /redisCache .*localCache/);
        assert.match(error.message, /name one of them cacheManager/);
        return true;
      },
    );
  });
});

describe("cachesOf()", () => {
  it("finds no cache manager among beans that hold none", () => {
    assert.deepEqual(cachesOf([{ name: "x", instance: {} }]), []);
  });
});
