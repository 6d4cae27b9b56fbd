import type { WebSocketHandlers } from "../web/websocket_mapping.ts";
import { utf8Length } from "../http/body_length.ts";
import { loggableText } from "../observe/loggable.ts";
import { checkOptionsObject } from "../options_object.ts";
import type { BeanProvider, BeanSupport } from "../context/class_record.ts";
import { PreDestroy } from "../context/lifecycle.ts";
import { safeLogger } from "../observe/loggable.ts";
import type { Logger } from "../web/error_responder.ts";
import { STREAM_OPENED } from "../web/stream_opened.ts";
import {
  type BroadcastEvent,
  checkChannel,
  decodeMessage,
  encodeMessage,
} from "./broadcast_message.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { MemoryTransport } from "./memory_transport.ts";
import { broadcastSettings } from "./broadcast_settings.ts";
import { transportOf } from "./transport_of.ts";
import { shownValue } from "../shown_value.ts";

/** `thaw.broadcast.max-buffered` when the configuration leaves it out: 1 MiB. */
export const DEFAULT_MAX_BUFFERED = 1_048_576;

const WHO = "Broadcaster";

/** The options of {@linkcode Broadcaster.subscribe}. */
export interface SubscribeOptions {
  /**
   * The most bytes of messages that may wait for this subscriber to take them
   * (`thaw.broadcast.max-buffered`, 1 MiB, by default): past it the subscriber is dropped.
   */
  readonly maxBuffered?: number | undefined;
}

/** The options of a {@linkcode Broadcaster} made by hand (in a test of the app's beans). */
export interface BroadcasterOptions {
  /** The default bound of each subscriber's waiting messages, in bytes: 1 MiB. */
  readonly maxBuffered?: number | undefined;
  /** Where a subscriber dropped, and a message that is none, are reported: `console`. */
  readonly logger?: Logger | undefined;
}

/**
 * An open socket as {@linkcode Broadcaster.join} uses it: the socket a `@WebSocketMapping`
 * handler is given (`onOpen: (event, ws) => ...`) is one.
 */
export interface BroadcastSocket {
  /** 1 while open; 2 and 3 once closing or closed. */
  readonly readyState: number;
  /** Sends a text message. */
  send(data: string): void;
}

/** Something subscribed to one channel in this replica. */
interface Subscriber {
  readonly channel: string;
  /** `size` gives the event's data's UTF-8 length, counted once for every subscriber. */
  deliver(event: BroadcastEvent, size: () => number): void;
  /** The broadcaster closes. */
  close(): void;
}

/** What a subscriber reports to. */
interface Hub {
  leave(subscriber: Subscriber): void;
  overflowed(subscriber: Subscriber, where: string | undefined, bytes: number, max: number): void;
}

// Keys no other module holds: the transport the app's broadcaster is made over (an option no
// caller can write), and its start, which the app's provider awaits before handing it out.
const TRANSPORT: unique symbol = Symbol("thaw.broadcastTransport");
const START: unique symbol = Symbol("thaw.broadcastStart");

/**
 * Publishes to every subscriber of a channel in every replica of the app: the `@SseMapping`
 * streams and `@WebSocketMapping` sockets of a live feed, whatever bean publishes (a
 * `@KafkaListener`, a controller, a `@Scheduled` job). A bean of an app that imports
 * `@thaw/thaw/broadcast` asks for it (`@Autowired(Broadcaster)`), and gets the app's, over the
 * transport `thaw.broadcast.transport` names: the process, Redis pub/sub or a Kafka topic.
 *
 * What is published is JSON data; each subscriber gets its JSON text, as one SSE `data:` line or
 * one WebSocket text message (it never holds a line break, whatever the data). A subscriber that
 * does not keep up never holds the others back: once more than `maxBuffered` bytes wait for it,
 * it is dropped with one log line naming the channel and the route (an SSE stream ends; a socket
 * is bounded by `server.websocket.max-buffered`, then closed with 1008).
 *
 * @example In the process, as a test of the app's beans makes one
 * ```ts
 * import assert from "node:assert/strict";
 * import { Broadcaster } from "@thaw/thaw/broadcast";
 *
 * const broadcaster = new Broadcaster();
 * const feed = broadcaster.subscribe("room:42");
 * await broadcaster.publish("room:42", { text: "hello\r\nworld" });
 * assert.deepEqual((await feed.next()).value, { data: '{"text":"hello\\r\\nworld"}' });
 * assert.equal(broadcaster.subscribers("room:42"), 1);
 * await feed.return();
 * assert.equal(broadcaster.subscribers("room:42"), 0);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md#broadcast-to-streams-and-sockets
 */
export class Broadcaster {
  readonly #transport: BroadcastTransport;
  readonly #maxBuffered: number;
  readonly #logger: Logger;
  readonly #channels = new Map<string, Set<Subscriber>>();
  readonly #hub: Hub;
  #closed = false;
  #warnedForeign = false;

  /**
   * A broadcaster of this process alone (the app's bean reaches every replica).
   * Throws a `TypeError` for an unknown option or a `maxBuffered` that is not a whole number of
   * bytes above 0.
   */
  constructor(options: BroadcasterOptions = {}) {
    checkOptionsObject(options as unknown, WHO, ["maxBuffered", "logger"]);
    this.#maxBuffered = checkBound(options.maxBuffered ?? DEFAULT_MAX_BUFFERED, "maxBuffered");
    this.#logger = options.logger ?? console;
    const transport = (options as { [TRANSPORT]?: BroadcastTransport })[TRANSPORT] ??
      new MemoryTransport();
    this.#transport = transport;
    this.#hub = {
      leave: (subscriber) => this.#leave(subscriber),
      overflowed: (subscriber, where, bytes, max) =>
        this.#warn(
          `${WHO}: ${where ?? "a subscriber"} of channel ${
            shownChannel(subscriber.channel)
          } did not take its messages: ${bytes} bytes waited, over ${max} ` +
            "(thaw.broadcast.max-buffered): dropped",
        ),
    };
    if (transport instanceof MemoryTransport) void transport.start(this.#receive);
  }

  /** Not part of the API: begins receiving through the app's transport. */
  [START](): Promise<void> {
    return this.#transport.start(this.#receive);
  }

  /**
   * The app's broadcaster, made when a bean asks for one and the app registers none: over the
   * transport of `thaw.broadcast.*`, receiving before any bean can use it.
   */
  static "thaw.provided": BeanProvider = (support) => appBroadcaster(support);

  /**
   * Publishes `data` on `channel`: every subscriber of it, in every replica, gets its JSON text.
   * Resolves once the transport took it (Redis answered, the Kafka broker acknowledged). Throws
   * a `TypeError` for a channel that is not a text of 1 to 1,024 characters and data that has no
   * JSON form; rejects once the app closed, and with what the transport failed with.
   */
  async publish(channel: string, data: unknown): Promise<void> {
    checkChannel(channel, WHO);
    const text = encodeMessage(channel, data, WHO);
    if (this.#closed) throw new Error(`${WHO}: closed, nothing more is published`);
    await this.#transport.publish(channel, text);
  }

  /**
   * The messages of `channel` from now on, as an async iterator: what an `@SseMapping` method
   * returns, each message one event. The stream's end (the client left, the app closes) or the
   * iterator's `return()` unsubscribes. A subscriber that lets more than `maxBuffered` bytes wait
   * is dropped: the iterator ends, and its SSE stream with it, with one log line.
   */
  subscribe(channel: string, options: SubscribeOptions = {}): BroadcastSubscription {
    checkChannel(channel, WHO);
    checkOptionsObject(options as unknown, `${WHO}.subscribe`, ["maxBuffered"]);
    const max = options.maxBuffered === undefined
      ? this.#maxBuffered
      : checkBound(options.maxBuffered, "maxBuffered");
    const subscription = new BroadcastSubscription(channel, max, this.#hub);
    if (this.#closed) subscription.close();
    else this.#join(subscription);
    return subscription;
  }

  /**
   * The handlers a `@WebSocketMapping` method returns for a socket that gets every message of
   * `channel` as a text message, from its open to its close: `handlers`' own run as well (a
   * message the client sends goes to their `onMessage`). Sent through the socket's own `send`,
   * bounded by `server.websocket.max-buffered`.
   */
  socket(channel: string, handlers: WebSocketHandlers = {}): WebSocketHandlers {
    checkChannel(channel, WHO);
    let leave: (() => void) | undefined;
    return {
      ...handlers,
      onOpen: (event, ws) => {
        leave = this.join(channel, ws);
        return handlers.onOpen?.(event, ws);
      },
      onClose: (event, ws) => {
        leave?.();
        return handlers.onClose?.(event, ws);
      },
    };
  }

  /**
   * Sends every message of `channel` to an open socket (as a text message, through its `send`)
   * until the returned function is called or the socket closes: for a socket that picks its
   * channels from what the client sends. Call it from the socket's handlers.
   */
  join(channel: string, ws: BroadcastSocket): () => void {
    checkChannel(channel, WHO);
    const subscriber = new SocketSubscriber(channel, ws, this.#hub);
    if (this.#closed) return () => {};
    this.#join(subscriber);
    return () => this.#leave(subscriber);
  }

  /** How many subscribers `channel` has in this replica (streams, iterators and sockets). */
  subscribers(channel: string): number {
    return this.#channels.get(channel)?.size ?? 0;
  }

  // A wire text from a replica: delivered to this replica's subscribers of its channel.
  readonly #receive = (text: string): void => {
    const message = decodeMessage(text);
    if (message === undefined) {
      // Once: whatever else writes to the channel or topic must not flood the log.
      if (!this.#warnedForeign) {
        this.#warnedForeign = true;
        this.#warn(
          `${WHO}: dropped what ${this.#transport.name} carried that is no broadcast message ` +
            "(another writer?); others like it are dropped without a word",
        );
      }
      return;
    }
    const subscribers = this.#channels.get(message.channel);
    if (subscribers === undefined) return;
    // Counted at most once, and only if a subscriber queues it: not once per subscriber.
    let counted = -1;
    const size = () => counted < 0 ? (counted = utf8Length(message.event.data)) : counted;
    for (const subscriber of [...subscribers]) subscriber.deliver(message.event, size);
  };

  #join(subscriber: Subscriber): void {
    let set = this.#channels.get(subscriber.channel);
    if (set === undefined) this.#channels.set(subscriber.channel, set = new Set());
    set.add(subscriber);
  }

  #leave(subscriber: Subscriber): void {
    const set = this.#channels.get(subscriber.channel);
    if (set === undefined || !set.delete(subscriber)) return;
    if (set.size === 0) this.#channels.delete(subscriber.channel);
  }

  /**
   * Ends every subscriber (an iterator gives what waits, then is done), refuses any further
   * `publish`, and lets the transport's connections go: what the app's close does, once the
   * beans that may publish have stopped.
   */
  @PreDestroy()
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const set of [...this.#channels.values()]) {
      for (const subscriber of [...set]) subscriber.close();
    }
    this.#channels.clear();
    await this.#transport.close();
  }

  #warn(message: string): void {
    try {
      (this.#logger.warn ?? this.#logger.error).call(this.#logger, `[thaw] ${message}`);
    } catch {
      // A logger that throws must not stop the other subscribers' messages.
    }
  }
}

// The app's broadcaster: over the configured transport, started before it is handed out (a
// transport that cannot start fails the app's bootstrap, naming it).
async function appBroadcaster(support: BeanSupport): Promise<Broadcaster> {
  const settings = broadcastSettings(support.config);
  const logger = safeLogger(support.logger as Logger);
  const warn = (message: string, error: unknown): void => {
    try {
      (logger.warn ?? logger.error).call(logger, `[thaw] ${message}`, error);
    } catch {
      // Nowhere left to report it.
    }
  };
  const transport = await transportOf(settings, warn);
  const options = { maxBuffered: settings.maxBuffered, logger, [TRANSPORT]: transport };
  const broadcaster = new Broadcaster(options);
  try {
    await broadcaster[START]();
  } catch (error) {
    await broadcaster.close();
    throw error;
  }
  return broadcaster;
}

/**
 * The messages of one channel, as {@linkcode Broadcaster.subscribe} gives them: an async
 * iterator (of events an `@SseMapping` sends as they are) over a bounded buffer.
 */
export class BroadcastSubscription implements AsyncIterableIterator<BroadcastEvent> {
  /** The channel it receives. */
  readonly channel: string;
  readonly #max: number;
  readonly #hub: Hub;
  #queue: BroadcastEvent[] = [];
  // The UTF-8 length of each queued event, in the queue's order.
  #sizes: number[] = [];
  #bytes = 0;
  #waiting: ((result: IteratorResult<BroadcastEvent>) => void) | undefined;
  #done = false;
  #where: string | undefined;
  #endStream: (() => void) | undefined;

  /** Made by {@linkcode Broadcaster.subscribe}. */
  constructor(channel: string, max: number, hub: Hub) {
    this.channel = channel;
    this.#max = max;
    this.#hub = hub;
  }

  /** @internal A message of its channel. */
  deliver(event: BroadcastEvent, sizeOf: () => number): void {
    if (this.#done) return;
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    const size = sizeOf();
    // One message always fits: a bound below one message's size would drop every client.
    if (this.#queue.length > 0 && this.#bytes + size > this.#max) {
      const bytes = this.#bytes + size;
      this.#finish();
      this.#hub.overflowed(this, this.#where, bytes, this.#max);
      this.#endStream?.();
      return;
    }
    this.#queue.push(event);
    this.#sizes.push(size);
    this.#bytes += size;
  }

  /** @internal The broadcaster closes: the iterator ends once it gave what waits. */
  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#hub.leave(this);
    this.#waiting?.({ value: undefined, done: true });
    this.#waiting = undefined;
  }

  /** The next message, once one comes; done once unsubscribed or dropped. */
  next(): Promise<IteratorResult<BroadcastEvent>> {
    const event = this.#queue.shift();
    if (event !== undefined) {
      this.#bytes -= this.#sizes.shift()!;
      return Promise.resolve({ value: event, done: false });
    }
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      // One reader at a time: a second `next()` before the first settled ends the first.
      this.#waiting?.({ value: undefined, done: true });
      this.#waiting = resolve;
    });
  }

  /** Unsubscribes: what waits is dropped. */
  return(): Promise<IteratorResult<BroadcastEvent>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Itself: a subscription is iterated once, by one reader. */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /** @internal Its `@SseMapping` stream opened: `label` names the route. */
  [STREAM_OPENED](label: string, end: () => void): void {
    this.#where = `the stream of ${label}`;
    this.#endStream = end;
  }

  #finish(): void {
    this.#queue = [];
    this.#sizes = [];
    this.#bytes = 0;
    this.close();
  }
}

/** A socket joined to a channel: each message sent through its own `send`. */
class SocketSubscriber implements Subscriber {
  readonly channel: string;
  readonly #ws: BroadcastSocket;
  readonly #hub: Hub;

  constructor(channel: string, ws: BroadcastSocket, hub: Hub) {
    this.channel = channel;
    this.#ws = ws;
    this.#hub = hub;
  }

  deliver(event: BroadcastEvent): void {
    // Closing or closed (its close event may not have come yet): no longer a subscriber.
    if (this.#ws.readyState > 1) return this.#hub.leave(this);
    try {
      this.#ws.send(event.data);
    } catch {
      // Closed under us: its close event ends the rest.
      this.#hub.leave(this);
    }
  }

  close(): void {
    this.#hub.leave(this);
  }
}

function checkBound(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(
      `${WHO}: ${name} must be a whole number of bytes above 0, got ${shownValue(value)}`,
    );
  }
  return value;
}

/** A channel as a log line may hold it: quoted, and nothing in it that could break the line. */
export function shownChannel(channel: string): string {
  return loggableText(JSON.stringify(channel));
}
