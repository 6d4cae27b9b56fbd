// How every Redis client of Thaw's (the cache's, the broadcaster's) notices a Redis that went
// silent and waits before reconnecting, so that one Redis incident is met the same way by each.
import { Backoff } from "./backoff.ts";

/** The wait before each attempt to reconnect: 50 ms, doubling, at most 2 s, give or take. */
export const REDIS_RECONNECT: Backoff = /* @__PURE__ */ new Backoff({
  delay: 50,
  multiplier: 2,
  maxDelay: 2000,
  jitter: 25,
});

/**
 * A connection's pings, and how long one may go without a byte before it is cut: a Redis that
 * keeps its connections and answers nothing (frozen, or behind a network that drops every packet)
 * fails the commands waiting on it, and the client reconnects, rather than waiting for ever. The
 * pings keep a sound connection busy, a subscribed one included (PING is one of the commands it
 * takes).
 */
export const REDIS_LIVENESS: { readonly pingInterval: number; readonly socketTimeout: number } = {
  pingInterval: 5000,
  socketTimeout: 15_000,
};
