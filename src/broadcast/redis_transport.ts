// Broadcast through Redis pub/sub (the `redis` package, node-redis): every replica SUBSCRIBEs to
// one Redis channel on a connection of its own (a subscribed connection takes no other command),
// and PUBLISHes on another. Redis delivers to every subscribed connection, the publisher's own
// included, in the order it took the PUBLISHes; a message sent while a replica is disconnected
// is lost for it (pub/sub keeps nothing), as a live feed allows.
import { REDIS_LIVENESS, REDIS_RECONNECT } from "../runtime/redis_reconnect.ts";
import { Buffer } from "node:buffer";
import { maskUrl } from "../config/secrets_mask.ts";
import { deadline } from "../runtime/deadline.ts";
import { importOptional } from "../runtime/optional_module.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { transportFailure } from "./transport_failure.ts";

/** The client of node-redis, as far as the transport uses it. */
interface RedisClient {
  readonly isReady: boolean;
  on(event: string, listener: (...args: never[]) => void): unknown;
  connect(): Promise<unknown>;
  duplicate(): RedisClient;
  sendCommand(args: ReadonlyArray<string | Uint8Array>): Promise<unknown>;
  subscribe(
    channel: string,
    listener: (message: Buffer, channel: Buffer) => void,
    bufferMode: true,
  ): Promise<void>;
  close(): Promise<void>;
  destroy(): void;
}

const STRICT_UTF8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true });

// How long the publishes in flight at close may wait for their answers: a sound Redis answers in
// milliseconds, and one that answers nothing must not hold the app's shutdown.
const CLOSE_WITHIN_MS = 1000;

// A publish (or a close) that got no answer in time.
class NoAnswer extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** Where the Redis transport connects, and on which Redis channel its messages go. */
export interface RedisTransportSettings {
  readonly url: string;
  readonly channel: string;
}

/** Broadcast through Redis pub/sub: one Redis channel for every broadcast channel. */
export class RedisTransport implements BroadcastTransport {
  readonly name: string;
  readonly #settings: RedisTransportSettings;
  readonly #warn: (message: string, error: unknown) => void;
  #publisher: RedisClient | undefined;
  #subscriber: RedisClient | undefined;
  #closed = false;
  // Once the first connections were made, a lost one is made again for ever; before, a failure
  // fails the start.
  #connected = false;
  // Whether the loss of a connection was said, until one is ready again: one line per incident.
  #down = false;

  constructor(settings: RedisTransportSettings, warn: (message: string, error: unknown) => void) {
    this.#settings = settings;
    this.#warn = warn;
    this.name = `Redis at ${maskUrl(settings.url)} (channel ${JSON.stringify(settings.channel)})`;
  }

  async start(receive: (text: string) => void): Promise<void> {
    const redis = await importOptional(() => import("redis"), {
      packages: ["redis"],
      neededBy: "thaw.broadcast.transport: redis",
      what: "the redis client",
    });
    const create = redis.createClient as unknown as (options: object) => RedisClient;
    // Until the first connection, a failure fails the start (the app's bootstrap) rather than
    // retrying for ever; from then on node-redis reconnects, and subscribes again, by itself.
    const reconnectStrategy = (retries: number, cause: Error): number | Error =>
      this.#connected ? REDIS_RECONNECT.delayOf(retries + 1) : cause;
    const publisher = create({
      url: this.#settings.url,
      RESP: 2,
      // A publish while Redis is down fails at once rather than waiting in a queue.
      disableOfflineQueue: true,
      maintNotifications: "disabled",
      pingInterval: REDIS_LIVENESS.pingInterval,
      socket: { reconnectStrategy, socketTimeout: REDIS_LIVENESS.socketTimeout },
    });
    const subscriber = this.#heard(publisher.duplicate());
    this.#publisher = this.#heard(publisher);
    this.#subscriber = subscriber;
    try {
      await Promise.all([publisher.connect(), subscriber.connect()]);
      this.#connected = true;
      await subscriber.subscribe(this.#settings.channel, (message) => {
        let text: string;
        try {
          text = STRICT_UTF8.decode(message);
        } catch {
          return receive(""); // not UTF-8: no message, which the broadcaster reports
        }
        receive(text);
      }, true);
    } catch (error) {
      await this.close();
      throw transportFailure("subscribe on", this.name, error);
    }
  }

  async publish(_channel: string, text: string): Promise<void> {
    const publisher = this.#publisher;
    if (publisher === undefined) throw new Error(`Broadcaster: ${this.name} is not connected`);
    // A written command waits for its answer alone: each publish to a Redis that answers nothing
    // counts as traffic, so that a connection published on steadily is never cut for silence.
    const { socketTimeout } = REDIS_LIVENESS;
    try {
      await deadline(
        publisher.sendCommand(["PUBLISH", this.#settings.channel, Buffer.from(text)]),
        socketTimeout,
        () => new NoAnswer(socketTimeout),
      );
    } catch (error) {
      if (error instanceof NoAnswer) this.#replace(publisher, error);
      throw transportFailure("publish on", this.name, error);
    }
  }

  // A publish got no answer in time: the connection goes, and a new one takes its place. Written
  // to by each publish, a connection that reaches no server (a firewall dropped it) never goes
  // quiet enough to be cut for it, and would fail every publish for as long as the app publishes.
  #replace(stale: RedisClient, why: NoAnswer): void {
    // One that is not ready is reconnecting already.
    if (this.#closed || this.#publisher !== stale || !stale.isReady) return;
    const fresh = this.#heard(stale.duplicate());
    this.#publisher = fresh;
    // Said as the incident it is; the stale client's own failures, which its end brings (its
    // commands in flight, a ping), are no longer anyone's to hear.
    this.#wentDown(why);
    stale.destroy();
    // Connects for ever (the first connections were made); a close meanwhile ends it.
    fresh.connect().catch(() => {});
  }

  // Every failure of a client is also an `error` event: one unheard would end the process.
  #heard(client: RedisClient): RedisClient {
    const current = () => client === this.#publisher || client === this.#subscriber;
    client.on("error", (error: never) => {
      if (current()) this.#wentDown(error);
    });
    // node-redis's destroy() ends no socket that is still connecting: a client replaced or closed
    // by then would connect, and ping on with no one left to stop it. Ended again as it connects.
    client.on("connect", () => {
      if (!current()) client.destroy();
    });
    client.on("ready", () => {
      if (current()) this.#down = false;
      else client.destroy();
    });
    return client;
  }

  // One line per incident, until a connection is ready again.
  #wentDown(error: unknown): void {
    // Before the first connection the start's own failure says it.
    if (this.#down || this.#closed || !this.#connected) return;
    this.#down = true;
    this.#warn(`Broadcaster: ${this.name} is unavailable, reconnecting:`, error);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const clients = [this.#publisher, this.#subscriber];
    this.#publisher = this.#subscriber = undefined;
    await Promise.all(clients.map(async (client) => {
      if (client === undefined) return;
      try {
        // node-redis's close() waits for the answers to what was sent: from a Redis that answers
        // nothing, for ever (a connection cut mid-handshake ends it neither).
        await deadline(client.close(), CLOSE_WITHIN_MS, () => new NoAnswer(CLOSE_WITHIN_MS));
      } catch {
        client.destroy(); // never connected, already gone, or silent
      }
    }));
  }
}
