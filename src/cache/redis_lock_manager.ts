import { maskUrl } from "../config/secrets_mask.ts";
import { systemClock } from "../runtime/clock.ts";
import { deadline } from "../runtime/deadline.ts";
import { type HeldLock, LockManager, type LockRequest } from "../tasks/lock_manager.ts";
import { checkLockRequest, checkRenewal, pollLock } from "../tasks/lock_polling.ts";
import { shownKey } from "../tasks/shown_key.ts";
import { checkOptionsObject } from "../options_object.ts";
import { LeasedLock } from "../tasks/release_once.ts";
import type { RedisCommandClient } from "./redis_cache_manager.ts";
import { messageOf } from "../context/message_of.ts";
import { shownValue } from "../shown_value.ts";

/** The options of {@linkcode RedisLockManager}. */
export interface RedisLockManagerOptions {
  /** What every lock's Redis key starts with: `thaw:lock:` by default. */
  readonly keyPrefix?: string | undefined;
  /**
   * How long one command may take, in milliseconds (1,000 by default): past it `acquire` or
   * `release` rejects, naming Redis.
   */
  readonly timeoutMs?: number | undefined;
}

const OPTIONS = ["keyPrefix", "timeoutMs"];
const WHO = "RedisLockManager";
const DEFAULT_PREFIX = "thaw:lock:";
const DEFAULT_TIMEOUT_MS = 1000;
// A lone surrogate: UTF-8 has no encoding for it, so two keys would be sent as the same bytes.
const LONE_SURROGATE = /\p{Cs}/u;
// Ends the lock only while the key holds this taking's token, never another holder's: deleted, or
// kept for what is left of its least hold (`ARGV[2]` ms of a `ARGV[3]` ms lease), counted on
// Redis's clock from the SET however late the release arrives.
const RELEASE = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end " +
  "local left = redis.call('PTTL', KEYS[1]) - (tonumber(ARGV[3]) - tonumber(ARGV[2])) " +
  "if tonumber(ARGV[2]) > 0 and left > 0 then return redis.call('PEXPIRE', KEYS[1], left) end " +
  "return redis.call('DEL', KEYS[1])";

// Takes the lock and counts its fencing token up, in one step: a new holder's token is greater
// than every one before it, lease ended or not. The counters are the fields of one hash, named
// `KEYS[2]`, the prefix alone, which no lock's key is (a key is never empty), field `ARGV[3]`. A
// token is Redis's time in ms at least, so that a counter lost (evicted, flushed, a failover to a
// replica that had not seen it) starts again above every token given before (unless more than one
// a millisecond were given just before).
const TAKE_FENCED = "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then " +
  "return false end local t = redis.call('TIME') " +
  "local n = (tonumber(redis.call('HGET', KEYS[2], ARGV[3])) or 0) + 1 " +
  "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) " +
  "if n < now then n = now end redis.call('HSET', KEYS[2], ARGV[3], string.format('%d', n)) " +
  "return n";
// Moves the lock's end to `ARGV[2]` ms from now while the key holds this taking's token: a lock
// whose lease ended is gone from Redis, and lost.
const RENEW = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end " +
  "return redis.call('PEXPIRE', KEYS[1], ARGV[2])";

/** node-redis's client, as far as the manager reads where it connects for its messages. */
interface DescribedClient extends RedisCommandClient {
  readonly options?: {
    readonly url?: string;
    readonly socket?: { readonly host?: string; readonly port?: number };
  };
}

/**
 * The locks of `@Lockable` in Redis, so that runs of one key never overlap across the processes
 * that share it, through a client of the `redis` package (node-redis) the app made, connected
 * and closes: the one its `RedisCacheManager` may take too. A lock is the Redis string
 * `keyPrefix` + key, taken with `SET key token NX PX leaseMs` (it ends of itself once the lease
 * has passed, on Redis's clock), and released by a script that deletes it only while it holds
 * this taking's random token: a release that comes after the lease ended and another took the
 * lock leaves the other's lock alone; a lock asked for with `minHoldMs` is kept instead until that
 * long after its taking. While another holds the key, `acquire` tries again after a pause that
 * grows from 5 ms to 200 ms, until `waitMs`.
 *
 * A take that fails or gets no answer within `timeoutMs` is undone before `acquire` rejects: the
 * manager deletes the key while it holds that take's token, so a SET that reached Redis late (or
 * whose answer was lost) leaves no lock behind. On one connection (node-redis's client) Redis
 * runs the two in the order sent, so the undo holds even when both arrive late.
 *
 * Keys are stored as they are, at any length; one that is not well-formed UTF-16 (a lone
 * surrogate) is refused with a `TypeError`, since Redis keys are UTF-8. Each command is bounded
 * by `timeoutMs`: a Redis that is down or does not answer makes `acquire` reject, naming it (its
 * password masked). Give the client `disableOfflineQueue: true` so that such a call fails at once
 * rather than at the timeout.
 *
 * @example Construction over the app's node-redis client (the calls need a Redis server)
 * ```ts
 * import assert from "node:assert/strict";
 * import { LockManager } from "../tasks/lock_manager.ts";
 * import { RedisLockManager } from "@thaw/thaw/cache-redis";
 *
 * // In a @Bean method: `createClient({ url })` of the redis package, connected.
 * const client = { sendCommand: () => Promise.resolve("OK") };
 * const locks = new RedisLockManager(client, { keyPrefix: "orders:lock:" });
 * assert.ok(locks instanceof LockManager);
 * const held = await locks.acquire({ key: "order-42", waitMs: 0, leaseMs: 30_000 });
 * assert.notEqual(held, undefined); // this stand-in answers OK to SET ... NX
 * assert.throws(() => new RedisLockManager(client, { timeoutMs: 0 }), TypeError);
 * ```
 */
export class RedisLockManager extends LockManager {
  readonly #client: RedisCommandClient;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #redis: string;

  /**
   * A manager over `client` (connected, and closed by the app). Throws a `TypeError` for what is
   * not a client, an unknown option, a `keyPrefix` that is not well-formed text and a `timeoutMs`
   * that is not a number of milliseconds above 0.
   */
  constructor(client: RedisCommandClient, options: RedisLockManagerOptions = {}) {
    super();
    if (typeof client?.sendCommand !== "function") {
      throw new TypeError(`${WHO}: client must be a Redis client (with sendCommand)`);
    }
    const given: unknown = options;
    checkOptionsObject(given, WHO, OPTIONS);
    const { keyPrefix = DEFAULT_PREFIX, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
    if (typeof keyPrefix !== "string" || LONE_SURROGATE.test(keyPrefix)) {
      throw new TypeError(
        `${WHO}: keyPrefix must be a text (well-formed UTF-16), got ${shownValue(keyPrefix)}`,
      );
    }
    if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(
        `${WHO}: timeoutMs must be a number of milliseconds above 0, got ${shownValue(timeoutMs)}`,
      );
    }
    this.#client = client;
    this.#prefix = keyPrefix;
    this.#timeoutMs = timeoutMs;
    this.#redis = described(client as DescribedClient);
  }

  /**
   * The lock of `request.key`, waiting up to `request.waitMs` while another holds it: `undefined`
   * once the wait ended without it. Rejects, naming Redis and the key, when Redis fails or does
   * not answer within `timeoutMs`; with a `TypeError` for a key with a lone surrogate.
   */
  async acquire(request: LockRequest): Promise<HeldLock | undefined> {
    const { key, leaseMs, minHoldMs = 0, fenced = false } = checkLockRequest(request, WHO);
    if (LONE_SURROGATE.test(key)) {
      throw new TypeError(
        `${WHO}: the lock's key ${shownKey(key)} holds a lone UTF-16 surrogate, which Redis ` +
          "keys (UTF-8) cannot hold as it is",
      );
    }
    const redisKey = this.#prefix + key;
    return await pollLock(
      request,
      () => this.#take(key, redisKey, leaseMs, minHoldMs, fenced),
      systemClock,
    );
  }

  async #take(
    key: string,
    redisKey: string,
    leaseMs: number,
    minHoldMs: number,
    fenced: boolean,
  ): Promise<HeldLock | undefined> {
    const token = crypto.randomUUID();
    let reply: unknown;
    try {
      reply = await this.#send(
        fenced
          ? ["EVAL", TAKE_FENCED, "2", redisKey, this.#prefix, token, String(leaseMs), key]
          : ["SET", redisKey, token, "NX", "PX", String(leaseMs)],
        key,
        "take",
      );
    } catch (error) {
      // The SET may still reach Redis, or have reached it with its answer lost: the key would
      // then hold a lock nobody holds until its lease ends. Deleting it while it holds this
      // token undoes that; on one connection Redis runs this after the SET, even late.
      await this.#send(["EVAL", RELEASE, "1", redisKey, token, "0", "0"], key, "undo").catch(
        () => {},
      );
      throw error;
    }
    if (reply === null || reply === undefined) return undefined;
    const hold = [String(minHoldMs), String(leaseMs)];
    return new LeasedLock(
      async () => {
        await this.#send(["EVAL", RELEASE, "1", redisKey, token, ...hold], key, "release");
      },
      fenced ? Number(reply) : undefined,
      async (ms) => {
        const lease = String(checkRenewal(ms, key, WHO));
        const renewed = await this.#send(
          ["EVAL", RENEW, "1", redisKey, token, lease],
          key,
          "renew",
        );
        return Number(renewed) === 1;
      },
    );
  }

  async #send(args: string[], key: string, what: string): Promise<unknown> {
    const ms = this.#timeoutMs;
    try {
      return await deadline(
        this.#client.sendCommand(args),
        ms,
        () => new Error(`no answer within ${ms} ms`),
      );
    } catch (error) {
      throw new Error(
        `${WHO}: could not ${what} the lock ${shownKey(key)} on ${this.#redis}: ${
          messageOf(error)
        }`,
        { cause: error },
      );
    }
  }
}

/** `Redis at redis://cache:6379` (its password masked), or `Redis (the app's client)`. */
function described(client: DescribedClient): string {
  const options = client.options;
  if (typeof options?.url === "string") return `Redis at ${maskUrl(options.url)}`;
  const socket = options?.socket;
  if (typeof socket?.host === "string" || typeof socket?.port === "number") {
    return `Redis at ${socket.host ?? "localhost"}:${socket.port ?? 6379}`;
  }
  return "Redis (the app's client)";
}
