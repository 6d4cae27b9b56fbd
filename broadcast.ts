/**
 * Broadcast to open streams and sockets: the {@linkcode Broadcaster} bean, which any bean of an
 * app that imports this entry point can ask for (`@Autowired(Broadcaster)`; none is made for an
 * app that does not). Its `publish(channel, data)` reaches every `@SseMapping` stream and
 * `@WebSocketMapping` socket subscribed to the channel, in every replica of the app, through the
 * transport `thaw.broadcast.transport` names: `memory` (this process), `redis` (pub/sub, the
 * `redis` package) or `kafka` (a topic, the `@platformatic/kafka` package). A subscriber that
 * does not keep up is dropped, with a log line, and never holds the others back.
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * The app's bean, which an `@SseMapping` or `@WebSocketMapping` route subscribes with, is shown
 * in the guide (a decorator line cannot sit in a JSDoc example); by hand, in the process:
 *
 * @example A broadcaster of this process alone, as a test of the app's beans makes one
 * ```ts
 * import assert from "node:assert/strict";
 * import { Broadcaster } from "@thaw/thaw/broadcast";
 *
 * const broadcaster = new Broadcaster();
 * const feed = broadcaster.subscribe("prices");
 * await broadcaster.publish("prices", { eur: 1.08 });
 * assert.equal((await feed.next()).value?.data, '{"eur":1.08}');
 * await broadcaster.close();
 * assert.equal((await feed.next()).done, true);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md#broadcast-to-streams-and-sockets
 *
 * @module
 */
import "./src/config/broadcast_keys.ts";

export {
  Broadcaster,
  type BroadcasterOptions,
  type BroadcastSocket,
  BroadcastSubscription,
  type SubscribeOptions,
} from "./src/broadcast/broadcaster.ts";
export type { BroadcastEvent } from "./src/broadcast/broadcast_message.ts";
