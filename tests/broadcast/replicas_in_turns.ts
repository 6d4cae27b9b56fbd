// Two replicas publishing on one room in turn: a stream on the first and a socket on the second
// must each receive every message, in the order they were published. What the transport tests
// share; each then goes on with what its transport keeps or shows.
import assert from "node:assert/strict";
import { openAccepted, type WsClient } from "../runtime/ws_raw_client.ts";
import { type SseClient, sseClient, untilHolds } from "./feed_clients.ts";
import type { Replica } from "./live_app.ts";

/** The clients left open, and how many messages were published. */
export interface InTurns {
  readonly stream: SseClient;
  readonly socket: WsClient;
  readonly published: number;
}

/**
 * Opens a stream of `room` on `a` and a socket of it on `b`, publishes 20 messages on `room:<room>`
 * from `a` and `b` in turn (each one taken before the next, an order the transport must keep),
 * and checks that both clients receive them all in that order.
 */
export async function publishInTurns(a: Replica, b: Replica, room: string): Promise<InTurns> {
  const channel = `room:${room}`;
  const stream = await sseClient(`${a.base}/rooms/${room}/feed`);
  const socket = await openAccepted(b.port, `/rooms/${room}/socket`);
  await untilHolds(() => a.broadcaster.subscribers(channel) === 1, "a stream on a");
  await untilHolds(() => b.broadcaster.subscribers(channel) === 1, "a socket on b");
  const sent: unknown[] = [];
  for (let n = 0; n < 20; n++) {
    const data = { n, text: `from ${n % 2 === 0 ? "a" : "b"}\r\n\0\u2028` };
    sent.push(data);
    await (n % 2 === 0 ? a : b).broadcaster.publish(channel, data);
  }
  const expected = sent.map((data) => JSON.stringify(data));
  assert.deepEqual(await stream.received(sent.length), expected);
  const messages: unknown[] = [];
  for (let i = 0; i < sent.length; i++) {
    const message = await socket.next();
    messages.push(message.type === "text" ? message.data : message);
  }
  assert.deepEqual(messages, expected);
  return { stream, socket, published: sent.length };
}
