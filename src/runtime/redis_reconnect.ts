// How every Redis client of Thaw's (the cache's, the broadcaster's) waits before reconnecting, so
// that one Redis restart is met the same way by each.
import { Backoff } from "./backoff.ts";

/** The wait before each attempt to reconnect: 50 ms, doubling, at most 2 s, give or take. */
export const REDIS_RECONNECT: Backoff = /* @__PURE__ */ new Backoff({
  delay: 50,
  multiplier: 2,
  maxDelay: 2000,
  jitter: 25,
});
