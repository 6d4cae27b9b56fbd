/**
 * Caching in Redis: {@linkcode RedisCacheManager}, the `CacheManager` that keeps the entries of
 * `@Cacheable`, `@CachePut` and `@CacheEvict` in Redis, shared by every process of the app, through
 * the `redis` package (node-redis, an optional peer dependency: `npm install redis`). Registered
 * from a `@Bean` method, it replaces the in-memory caches; it needs TCP sockets (Deno, Bun, Node),
 * which an edge worker does not have.
 *
 * Apart from the default entry point, so that an app that caches in memory (or not at all) never
 * loads it nor the client.
 *
 * @example A Redis that is down: the app starts, and its methods run uncached
 * ```ts
 * import assert from "node:assert/strict";
 * import { Bean, bootstrap, Cacheable, Configuration, Service } from "@thaw/thaw";
 * import { RedisCacheManager } from "@thaw/thaw/cache-redis";
 *
 * const logged: string[] = [];
 * const logger = {
 *   error: (message: string) => void logged.push(message),
 *   warn: (message: string) => void logged.push(message),
 * };
 *
 * @Configuration()
 * class CacheConfig {
 *   @Bean()
 *   cacheManager(): RedisCacheManager {
 *     // Nothing listens on port 1.
 *     return new RedisCacheManager({ url: "redis://127.0.0.1:1", timeoutMs: 500, logger });
 *   }
 * }
 *
 * let calls = 0;
 *
 * @Service()
 * class Prices {
 *   @Cacheable("prices", { ttl: "5m" })
 *   async price(sku: string): Promise<number> {
 *     calls++;
 *     return await Promise.resolve(sku.length * 100);
 *   }
 * }
 *
 * const app = await bootstrap({ components: [CacheConfig, Prices], logger });
 * assert.equal(await app.getBean(Prices).price("tea"), 300);
 * assert.equal(await app.getBean(Prices).price("tea"), 300);
 * assert.equal(calls, 2); // uncached, and never failed
 * assert.match(logged[0], /Redis at redis:\/\/127\.0\.0\.1:1 is unavailable/);
 * await app.close();
 * ```
 *
 * @module
 */
export {
  RedisCacheManager,
  type RedisCacheManagerOptions,
  type RedisCommandClient,
} from "./src/cache/redis_cache_manager.ts";
export type { Logger } from "./src/web/error_responder.ts";
