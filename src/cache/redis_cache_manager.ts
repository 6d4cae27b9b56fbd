import { Buffer } from "node:buffer";
import { REDIS_LIVENESS, REDIS_RECONNECT } from "../runtime/redis_reconnect.ts";
import { deadline } from "../runtime/deadline.ts";
import { maskUrl } from "../config/secrets_mask.ts";
import { HEALTH_CONTRIBUTION, type HealthContribution } from "../actuator/health_contribution.ts";
import { PostConstruct, PreDestroy } from "../context/lifecycle.ts";
import { safeLogger } from "../observe/loggable.ts";
import { Deferred } from "../runtime/deferred.ts";
import { importOptional } from "../runtime/optional_module.ts";
import type { Logger } from "../web/error_responder.ts";
import { type Cache, CacheManager } from "./cache_manager.ts";
import { notJsonData } from "./json_data.ts";
import { checkOptionsObject } from "../options_object.ts";

/**
 * What {@linkcode RedisCacheManager} uses of a Redis client: one command at a time. A client of
 * the `redis` package (node-redis 5 or 6: `createClient()`'s result, connected) is one; so is a
 * stand-in of a test.
 */
export interface RedisCommandClient {
  /**
   * Sends one command (`["GET", key]`) and resolves its reply: a text (or its bytes) or `null`
   * for `GET`, `[cursor, keys]` for `SCAN`. `options.typeMapping` may ask for bytes.
   */
  sendCommand(
    args: ReadonlyArray<string | Uint8Array>,
    options?: { readonly typeMapping?: { readonly [type: number]: unknown } },
  ): Promise<unknown>;
}

/** The options of {@linkcode RedisCacheManager}. */
export interface RedisCacheManagerOptions {
  /**
   * The Redis to connect to, `redis[s]://[[user][:password]@]host[:port][/db]`:
   * `redis://127.0.0.1:6379` by default. Not with `client`.
   */
  readonly url?: string;
  /**
   * A client the app made, connected and closes itself (`createClient()` of the `redis` package):
   * the manager sends its commands through it, and neither connects nor closes it. Not with `url`.
   */
  readonly client?: RedisCommandClient;
  /** What every key of the manager starts with: `thaw:cache:` by default. */
  readonly keyPrefix?: string;
  /**
   * How long one command may take, in milliseconds (1,000 by default): past it the call rejects,
   * and the caching interceptor runs the method uncached.
   */
  readonly timeoutMs?: number;
  /** Where a lost connection, its recovery and values not stored are reported: `console`. */
  readonly logger?: Logger;
}

const OPTIONS = ["url", "client", "keyPrefix", "timeoutMs", "logger"];
const DEFAULT_URL = "redis://127.0.0.1:6379";
const DEFAULT_PREFIX = "thaw:cache:";
const DEFAULT_TIMEOUT_MS = 1000;
/** How many keys one `SCAN` of `clear()` asks for, and so at most how many one `UNLINK` removes. */
const SCAN_COUNT = 500;
/** RESP's blob string: asked for as bytes, to read values strictly and keys exactly. */
const BYTES = { typeMapping: { [36]: Buffer } } as const;
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
// A lone surrogate: UTF-8 has no encoding for it, so two keys would be sent as the same bytes.
const LONE_SURROGATE = /\p{Cs}/u;
/** A `GET` that found a key of another type. */
const NOT_TEXT = Symbol("not text");

/** The client the manager made itself (node-redis's), as far as it uses it. */
interface OwnClient extends RedisCommandClient {
  readonly isReady: boolean;
  on(event: string, listener: (...args: never[]) => void): unknown;
  connect(): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
}

/** A command that got no answer within the timeout. */
class CommandTimeout extends Error {
  constructor(command: string, timeoutMs: number) {
    super(`Redis did not answer ${command} within ${timeoutMs} ms`);
    this.name = "CommandTimeout";
  }
}

/**
 * A {@linkcode CacheManager} over Redis, through the `redis` package (node-redis; install it:
 * `npm install redis`): the entries of `@Cacheable` shared by every process of the app, and kept
 * across restarts. Register it as the app's cache manager from a `@Bean` method, as the guide
 * shows (see below); it closes its connection when the app closes.
 *
 * **Storage.** The entry of `key` in the cache `name` is the Redis string at `keyPrefix` + `name`
 * + `:` + `key` (in `name`, `%` is written `%25` and `:` is written `%3A`, so that no cache's keys
 * start like another's); its value is the JSON text of the value, expiring (`PX`) after the
 * entry's ttl. `clear()` removes the keys of its cache alone (`SCAN` with `MATCH`, then `UNLINK`,
 * a batch at a time), never the whole database.
 *
 * **JSON data only.** A value is stored only when JSON gives it back as it was: plain objects,
 * arrays, strings, finite numbers, booleans and `null` (an object's properties that are
 * `undefined` are dropped, as JSON drops them; `-0` reads back as `0`). Anything else, such as a
 * `Date`, a `Map`, a `Set`, a class's instance, a bigint, `NaN`, a function, or an array item that
 * is `undefined`, is not stored: `put` removes the key's entry, if any, and resolves, so the
 * method runs uncached rather than return another value later. The first such value of each cache
 * is logged as a warning naming its type. A key whose Redis value is not JSON text (something else
 * wrote it) reads as a miss, is removed, and is logged once for its cache.
 *
 * **Failures.** A Redis that is down at startup does not fail `bootstrap`: the manager keeps
 * reconnecting (waiting longer each time, up to 2 s) and, until it is back, each call rejects at
 * once; one that gets no answer rejects after `timeoutMs`. The caching interceptor then runs the
 * method uncached. A lost connection is logged once, and so is its recovery. A connection that
 * stops answering is dropped and opened again.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#rediscachemanager
 */
export class RedisCacheManager extends CacheManager {
  readonly #url: string;
  readonly #given: RedisCommandClient | undefined;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  readonly #caches = new Map<string, Cache>();
  /** `value <name>`, `text <name>`: what was logged once for a cache. */
  readonly #warned = new Set<string>();
  #opening: Promise<void> | undefined;
  /**
   * The client the manager made; the promise of its `connect()`, which settles once connected or
   * closed; and one that resolves at its first `ready` or `error` event.
   */
  #own: { client: OwnClient; connected: Promise<unknown>; contact: Promise<void> } | undefined;
  #createClient: ((options: object) => OwnClient) | undefined;
  #state: "new" | "up" | "down" = "new";
  #closed = false;

  /**
   * Checks the options (a `TypeError` names a wrong one) and connects nothing yet: the connection
   * opens once the app starts, or at the first call.
   *
   * @param options `url` or `client`, `keyPrefix`, `timeoutMs`, `logger`
   */
  constructor(options: RedisCacheManagerOptions = {}) {
    super();
    checkOptionsObject(options as unknown, "RedisCacheManager", OPTIONS);
    const { url, client, keyPrefix = DEFAULT_PREFIX, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
    if (url !== undefined && client !== undefined) {
      throw new TypeError("RedisCacheManager: give url or client, not both");
    }
    if (url !== undefined && (typeof url !== "string" || !/^rediss?:\/\//.test(url))) {
      throw new TypeError(
        `RedisCacheManager: url must be a redis:// or rediss:// URL, got ${
          typeof url === "string" ? JSON.stringify(maskUrl(url)) : describe(url)
        }`,
      );
    }
    if (client !== undefined && typeof client?.sendCommand !== "function") {
      throw new TypeError("RedisCacheManager: client must be a Redis client (with sendCommand)");
    }
    if (typeof keyPrefix !== "string" || LONE_SURROGATE.test(keyPrefix)) {
      throw new TypeError(
        `RedisCacheManager: keyPrefix must be a text (well-formed UTF-16), got ${
          describe(keyPrefix)
        }`,
      );
    }
    if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(
        `RedisCacheManager: timeoutMs must be a number of milliseconds above 0, got ${
          describe(timeoutMs)
        }`,
      );
    }
    this.#url = url ?? DEFAULT_URL;
    this.#given = client;
    this.#prefix = keyPrefix;
    this.#timeoutMs = timeoutMs;
    // What Redis or a client says (an error's message) is not the app's to trust: escaped, as
    // every line Thaw logs is, so that it cannot forge a line of its own.
    this.#logger = safeLogger(options.logger ?? console);
  }

  /**
   * The cache of a name, the same one for each call. A name that is not well-formed UTF-16 (a lone
   * surrogate) throws a `TypeError`: Redis keys are UTF-8.
   */
  getCache(name: string): Cache {
    let cache = this.#caches.get(name);
    if (cache !== undefined) return cache;
    if (typeof name !== "string" || LONE_SURROGATE.test(name)) {
      throw new TypeError(
        `RedisCacheManager: a cache name must be well-formed text, got ${describe(name)}`,
      );
    }
    const stem = this.#prefix + name.replaceAll("%", "%25").replaceAll(":", "%3A") + ":";
    const keyOf = (key: string): string => {
      if (typeof key !== "string" || LONE_SURROGATE.test(key)) {
        throw new TypeError(
          `RedisCacheManager: a key of cache "${name}" must be well-formed text, got ${
            describe(key)
          }`,
        );
      }
      return stem + key;
    };
    cache = {
      get: async (key) => await this.#get(name, keyOf(key)),
      put: async (key, value, ttlMs) => await this.#put(name, keyOf(key), value, ttlMs),
      evict: async (key) => void await this.#send(["UNLINK", keyOf(key)]),
      clear: async () => await this.#clear(stem),
    };
    this.#caches.set(name, cache);
    return cache;
  }

  /**
   * Loads the `redis` package and starts connecting (without waiting for Redis: one that is down
   * is only logged). Called by the container once the bean is made; a `MissingPackageError` names
   * the install line when `redis` is not installed. Nothing to do with a `client` of the app's.
   */
  @PostConstruct()
  async open(): Promise<void> {
    if (this.#given !== undefined) return;
    if (this.#closed) throw new Error("RedisCacheManager: closed");
    await (this.#opening ??= this.#load());
  }

  /**
   * Closes the connection the manager opened, waiting at most `timeoutMs` for the commands in
   * flight: called by the container when the app closes. A `client` of the app's stays open.
   */
  @PreDestroy()
  async close(): Promise<void> {
    this.#closed = true;
    await this.#opening?.catch(() => {});
    const own = this.#own;
    this.#own = undefined;
    if (own === undefined) return;
    try {
      await this.#within(own.client.close(), "the closing");
    } catch {
      // Commands still waiting are dropped below.
    } finally {
      own.client.destroy();
    }
    // The first connection's attempts, if they still go on, end at their next turn: so that
    // nothing of them outlives the app.
    await this.#within(own.connected, "the closing").catch(() => {});
  }

  /**
   * The `redis` component of the app's health (the actuator's, where it serves health;
   * `management.health.redis.enabled: false` turns it off): UP with the server's `version` while
   * Redis answers `INFO server` (or, where INFO is refused, `PING`), DOWN with the reason
   * otherwise, within `timeoutMs`, as Spring Boot's `RedisHealthIndicator` reports it.
   * Called by the actuator alone (health_contribution.ts), so left out of the API's docs.
   *
   * @ignore
   */
  [HEALTH_CONTRIBUTION](): HealthContribution {
    return { name: "redis", keyed: false, check: () => this.#health() };
  }

  async #health(): Promise<{ version?: string }> {
    let info: unknown;
    try {
      info = await this.#send(["INFO", "server"]);
    } catch (error) {
      // Redis answered, and refused INFO (an ACL without it): PING says as much of its health.
      if (!isErrorReply(error)) throw error;
      await this.#send(["PING"]);
      return {};
    }
    const text = typeof info === "string" ? info : new TextDecoder().decode(info as Uint8Array);
    const version = /^redis_version:([^\r\n]+)/m.exec(text)?.[1];
    return version === undefined ? {} : { version };
  }

  async #get(name: string, key: string): Promise<unknown> {
    const reply = await this.#send(["GET", key], BYTES).catch((error) => {
      // A key of another type (a hash, a list) that something else wrote: not an entry either.
      if (isErrorReply(error) && /^WRONGTYPE\b/.test(messageOf(error))) return NOT_TEXT;
      throw error;
    });
    if (reply === null || reply === undefined) return undefined;
    if (reply !== NOT_TEXT) {
      try {
        return JSON.parse(
          typeof reply === "string" ? reply : STRICT_UTF8.decode(reply as Uint8Array),
        );
      } catch {
        // Not UTF-8, or not JSON: not written by a RedisCacheManager.
      }
    }
    this.#warnOnce(
      `text ${name}`,
      `RedisCacheManager: cache "${name}": the Redis value of ${
        JSON.stringify(key)
      } is not JSON text (written by something else?): read as a miss, and removed`,
    );
    await this.#send(["UNLINK", key]).catch(() => {});
    return undefined;
  }

  async #put(name: string, key: string, value: unknown, ttlMs: number | undefined) {
    if (ttlMs !== undefined && !(typeof ttlMs === "number" && ttlMs > 0 && ttlMs < Infinity)) {
      throw new RangeError(
        `RedisCacheManager: ttlMs must be a number of milliseconds above 0, got ${describe(ttlMs)}`,
      );
    }
    const problem = notJsonData(value);
    if (problem !== undefined) {
      this.#warnOnce(
        `value ${name}`,
        `RedisCacheManager: cache "${name}": ${problem} is not JSON data, so its value is not ` +
          "stored (the method runs uncached). Store plain objects, arrays, strings, finite " +
          "numbers, booleans and null",
      );
      // What was stored before must not be read in place of this newer value.
      await this.#send(["UNLINK", key]);
      return;
    }
    const args = ["SET", key, JSON.stringify(value)];
    if (ttlMs !== undefined) args.push("PX", String(Math.ceil(ttlMs)));
    await this.#send(args);
  }

  async #clear(stem: string): Promise<void> {
    const match = stem.replace(/[*?[\]\\]/g, "\\$&") + "*";
    let cursor = "0";
    do {
      const reply = await this.#send(
        ["SCAN", cursor, "MATCH", match, "COUNT", `${SCAN_COUNT}`],
        BYTES,
      );
      const [next, keys] = reply as [string | Uint8Array, (string | Uint8Array)[]];
      cursor = typeof next === "string" ? next : new TextDecoder().decode(next);
      if (keys.length > 0) await this.#send(["UNLINK", ...keys]);
    } while (cursor !== "0");
  }

  /** Sends one command, bounded by the timeout; reports a lost and a recovered connection. */
  async #send(args: (string | Uint8Array)[], options?: typeof BYTES): Promise<unknown> {
    const client = await this.#client();
    const own = this.#own;
    try {
      const reply = await this.#within(client.sendCommand(args, options), String(args[0]));
      this.#up();
      return reply;
    } catch (error) {
      if (isErrorReply(error)) {
        // Redis answered: the command failed, not the connection.
        this.#up();
        throw error;
      }
      this.#down(error);
      // A connection that takes commands and answers none (a frozen server, a peer gone without
      // a word) is dropped for a new one, which reconnects as after any other loss.
      if (
        error instanceof CommandTimeout && own !== undefined && this.#own === own &&
        own.client.isReady
      ) {
        this.#replace();
      }
      throw error;
    }
  }

  #within<T>(promise: Promise<T>, what: string): Promise<T> {
    const ms = this.#timeoutMs;
    return deadline(promise, ms, () => new CommandTimeout(what, ms));
  }

  async #client(): Promise<RedisCommandClient> {
    if (this.#given !== undefined) return this.#given;
    await (this.#opening ??= this.#load());
    const own = this.#own;
    if (own === undefined) throw new Error("RedisCacheManager: closed");
    // The first calls wait for the first connection to be made or to fail (a timeout at most),
    // so that a call made as the app starts is not refused as if Redis were down.
    if (this.#state === "new") await this.#within(own.contact, "the connection").catch(() => {});
    return own.client;
  }

  async #load(): Promise<void> {
    const redis = await importOptional(() => import("redis"), {
      packages: ["redis"],
      neededBy: "RedisCacheManager",
      what: "the redis client",
    });
    const create = redis.createClient as unknown as (options: object) => OwnClient;
    this.#createClient = create;
    if (!this.#closed) this.#connect(create);
  }

  #connect(create: (options: object) => OwnClient): void {
    const client = create({
      url: this.#url,
      // RESP2: every Redis answers it, 2.6 on; the replies read are the same.
      RESP: 2,
      // Rejects each command at once while disconnected, rather than queueing it.
      disableOfflineQueue: true,
      pingInterval: REDIS_LIVENESS.pingInterval,
      maintNotifications: "disabled",
      socket: {
        socketTimeout: REDIS_LIVENESS.socketTimeout,
        reconnectStrategy: (retries: number) => REDIS_RECONNECT.delayOf(retries + 1),
      },
    });
    const current = () => this.#own?.client === client;
    const contacted = new Deferred();
    const contact = contacted.resolve;
    // Every failure is also an `error` event: one unheard would end the process.
    client.on("error", (error: unknown) => {
      contact();
      if (current()) this.#down(error);
    });
    // node-redis's destroy() ends no socket that is still connecting: once connected, a client
    // closed by then would send its handshake and, ready, ping on with no one left to stop it,
    // its pings re-armed even after Redis drops the connection. Ended again as it connects.
    client.on("connect", () => {
      if (!current()) client.destroy();
    });
    client.on("ready", () => {
      contact();
      if (current()) this.#up();
      else client.destroy();
    });
    const connected = client.connect().catch(() => {
      // Ends when the client closes; each failure before was an `error` event.
    });
    this.#own = { client, connected, contact: contacted.promise };
  }

  /** Drops the connection of the manager for a new one. */
  #replace(): void {
    const old = this.#own;
    // A connection was made: the client is loaded.
    const create = this.#createClient;
    if (old === undefined || create === undefined || this.#closed) return;
    this.#connect(create);
    old.client.destroy();
  }

  #down(error: unknown): void {
    if (this.#state === "down") return;
    this.#state = "down";
    this.#warn(
      `RedisCacheManager: ${this.#redis()} is unavailable (${
        messageOf(error)
      }): cache calls fail, and their methods run uncached, until it answers again`,
      error,
    );
  }

  #up(): void {
    const was = this.#state;
    this.#state = "up";
    if (was !== "down") return;
    this.#report("info", `RedisCacheManager: ${this.#redis()} answers again`);
  }

  /** `Redis at redis://cache:6379` (its password masked), or `Redis (the app's client)`. */
  #redis(): string {
    return this.#given === undefined
      ? `Redis at ${maskUrl(this.#url)}`
      : "Redis (the app's client)";
  }

  #warnOnce(what: string, message: string): void {
    if (this.#warned.has(what)) return;
    this.#warned.add(what);
    this.#warn(message);
  }

  #warn(message: string, ...details: unknown[]): void {
    this.#report("warn", message, ...details);
  }

  #report(level: "warn" | "info", message: string, ...details: unknown[]): void {
    // A logger that throws must not turn a cache call's outcome into its own failure.
    try {
      (this.#logger[level] ?? this.#logger.error)(message, ...details);
    } catch {
      // Nowhere left to report it.
    }
  }
}

/**
 * Whether Redis answered with an error (`WRONGTYPE ...`, `OOM ...`): node-redis's `ErrorReply`,
 * or a message that starts with an error code, as Redis writes them.
 */
function isErrorReply(error: unknown): boolean {
  for (let p = Object.getPrototypeOf(error ?? {}); p !== null; p = Object.getPrototypeOf(p)) {
    if (p.constructor?.name === "ErrorReply") return true;
  }
  return error instanceof Error && /^[A-Z][A-Z_]+ /.test(error.message);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
