/**
 * Caching in Redis: {@linkcode RedisCacheManager}, the `CacheManager` that keeps the entries of
 * `@Cacheable`, `@CachePut` and `@CacheEvict` in Redis, shared by every process of the app, through
 * the `redis` package (node-redis, an optional peer dependency: `npm install redis`). Registered
 * from a `@Bean` method, it replaces the in-memory caches; it needs TCP sockets (Deno, Bun, Node),
 * which an edge worker does not have.
 *
 * {@linkcode RedisLockManager} keeps the locks of `@Lockable` in the same Redis, through a client the
 * app made (`createClient()` of the `redis` package), so that runs of one key never overlap across
 * the app's processes.
 *
 * Apart from the default entry point, so that an app that caches in memory (or not at all) never
 * loads it nor the client.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#thawthawcache-redis
 *
 * @module
 */
export {
  RedisCacheManager,
  type RedisCacheManagerOptions,
  type RedisCommandClient,
} from "./src/cache/redis_cache_manager.ts";
export { RedisLockManager, type RedisLockManagerOptions } from "./src/cache/redis_lock_manager.ts";
// What RedisLockManager's signatures name: the interface of @Lockable's lock managers.
export type { HeldLock, LockManager, LockRequest } from "./src/tasks/lock_manager.ts";
export type { Logger } from "./src/web/error_responder.ts";
