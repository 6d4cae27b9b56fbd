// A broadcast reaching real clients of `listen(app)`, in one replica (the `memory` transport), on
// whichever runtime runs the suite: every SSE stream and socket of a channel gets every message in
// order; a client that reads nothing is dropped, with one log line, and holds no one back; a
// client that leaves is unsubscribed; the app's close ends every stream and socket.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RUNTIME } from "../runtime.ts";
import { openAccepted } from "../runtime/ws_raw_client.ts";
import { silentClient, sseClient, untilHolds } from "./feed_clients.ts";
import { type Replica, startReplica } from "./live_app.ts";

// Large messages, so that what the sockets' buffers hold is a few of them, whatever the runtime.
const BIG = 256 * 1024;
// Past what the kernel's buffers of a loopback connection and a server's own take (a few MiB),
// plus the bound: a give-up, never reached when the client is dropped.
const GIVE_UP = 400;

describe(`broadcast to streams and sockets on ${RUNTIME}`, () => {
  let replica: Replica;

  before(async () => {
    replica = await startReplica({
      thaw: { broadcast: { "max-buffered": 1_048_576 } },
      // A client that left is seen at the next write (Deno's server tells no sooner): a
      // heartbeat soon after, rather than after 15 s.
      server: { sse: { heartbeat: "100ms" } },
    });
  });
  after(() => replica.server.close());

  it("publishes to every stream and socket of a channel, in order, and to none of another", async () => {
    const { base, port, broadcaster } = replica;
    const stream = await sseClient(`${base}/rooms/a/feed`);
    const socket = await openAccepted(port, "/rooms/a/socket");
    const other = await sseClient(`${base}/rooms/b/feed`);
    await untilHolds(() => broadcaster.subscribers("room:a") === 2, "two subscribers of room:a");
    await untilHolds(() => broadcaster.subscribers("room:b") === 1, "one subscriber of room:b");
    const sent = [
      "plain",
      "line\r\nbreaks\rand\nNUL\0",
      { event: "x\nid: 1", data: "forged\n\nfields" },
      "\ud800 lone surrogate",
      Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)).join(""),
      null,
      [1, 2.5, true],
    ];
    for (const data of sent) await broadcaster.publish("room:a", data);
    await broadcaster.publish("room:b", "only b");
    const expected = sent.map((data) => JSON.stringify(data));
    assert.deepEqual(await stream.received(sent.length), expected);
    const messages = [];
    for (let i = 0; i < sent.length; i++) messages.push(await socket.next());
    assert.deepEqual(messages.map((m) => m.type === "text" ? m.data : m), expected);
    assert.deepEqual(await other.received(1), ['"only b"']);
    stream.leave();
    other.leave();
    await socket.close(1000);
    await untilHolds(() => broadcaster.subscribers("room:a") === 0, "room:a left");
    await untilHolds(() => broadcaster.subscribers("room:b") === 0, "room:b left");
  });

  it("sends a socket the messages of the channel its client picks, until it picks another or leaves", async () => {
    const { port, broadcaster } = replica;
    const socket = await openAccepted(port, "/lobby");
    await socket.sendText("room:x");
    await untilHolds(() => broadcaster.subscribers("room:x") === 1, "the socket in room:x");
    await broadcaster.publish("room:x", "in x");
    assert.deepEqual(await socket.next(), { type: "text", data: '"in x"' });
    await socket.sendText("room:y");
    await untilHolds(() => broadcaster.subscribers("room:y") === 1, "the socket in room:y");
    assert.equal(broadcaster.subscribers("room:x"), 0);
    await broadcaster.publish("room:x", "not for it");
    await broadcaster.publish("room:y", "in y");
    assert.deepEqual(await socket.next(), { type: "text", data: '"in y"' });
    // A channel name no broadcaster takes: the handler throws, and the socket is closed with 1011.
    await socket.sendText("x".repeat(2000));
    assert.equal((await socket.closed).code, 1011);
    await untilHolds(() => broadcaster.subscribers("room:y") === 0, "the socket left room:y");
  });

  it("drops a client that reads nothing once its buffer is full, with one log line, while a fast one gets everything in order", async () => {
    const { base, port, broadcaster } = replica;
    const fast = await sseClient(`${base}/rooms/slow/feed`);
    const slow = await silentClient(port, "/rooms/slow/feed");
    await untilHolds(() => broadcaster.subscribers("room:slow") === 2, "both subscribed");
    const dropped = () => replica.lines().filter((line) => line.includes("max-buffered"));
    let n = 0;
    while (dropped().length === 0 && n < GIVE_UP) {
      n++;
      await broadcaster.publish("room:slow", { n, pad: "x".repeat(BIG) });
      // The fast client keeps up: each message is read before the next is sent.
      await fast.received(n);
    }
    assert.equal(dropped().length, 1, `no client dropped after ${n} messages of ${BIG} B`);
    assert.match(
      dropped()[0],
      /^\[thaw\] Broadcaster: the stream of Live\.feed \(GET \/rooms\/\{room\}\/feed\) of channel "room:slow" did not take its messages: \d+ bytes waited, over 1048576 \(thaw\.broadcast\.max-buffered\): dropped$/,
    );
    assert.equal(broadcaster.subscribers("room:slow"), 1);
    await broadcaster.publish("room:slow", { n: n + 1 });
    const got = (await fast.received(n + 1)).map((data) => JSON.parse(data).n);
    assert.deepEqual(got, Array.from({ length: n + 1 }, (_, i) => i + 1));
    assert.equal(dropped().length, 1);
    slow.destroy();
    fast.leave();
    await untilHolds(() => broadcaster.subscribers("room:slow") === 0, "room:slow left");
  });

  it("closes with 1008 a socket whose client reads nothing, while a fast one gets everything", async () => {
    const { base, port, broadcaster } = replica;
    const fast = await sseClient(`${base}/rooms/ws/feed`);
    const slow = await openAccepted(port, "/rooms/ws/socket");
    slow.pause();
    await untilHolds(() => broadcaster.subscribers("room:ws") === 2, "both subscribed");
    const closedLine = () => replica.lines().filter((line) => line.includes("closed with 1008"));
    let n = 0;
    while (closedLine().length === 0 && n < GIVE_UP) {
      n++;
      await broadcaster.publish("room:ws", { n, pad: "x".repeat(BIG) });
      await fast.received(n);
    }
    assert.equal(closedLine().length, 1, `no socket closed after ${n} messages of ${BIG} B`);
    assert.match(closedLine()[0], /Live\.socket \(WebSocket \/rooms\/\{room\}\/socket\)/);
    slow.resume();
    for (;;) if (await slow.next().catch(() => undefined) === undefined) break;
    assert.equal((await slow.closed).code, 1008);
    await untilHolds(() => broadcaster.subscribers("room:ws") === 1, "the socket left");
    fast.leave();
    await untilHolds(() => broadcaster.subscribers("room:ws") === 0, "room:ws left");
  });
});

describe(`the app's close with broadcast subscribers on ${RUNTIME}`, () => {
  it("ends every stream and socket, unsubscribes them all and publishes nothing more", async () => {
    const replica = await startReplica({ server: { sse: { heartbeat: "100ms" } } });
    const { base, port, broadcaster } = replica;
    const stream = await sseClient(`${base}/rooms/c/feed`);
    const socket = await openAccepted(port, "/rooms/c/socket");
    const iterator = broadcaster.subscribe("room:c");
    await untilHolds(() => broadcaster.subscribers("room:c") === 3, "three subscribers");
    await broadcaster.publish("room:c", "before");
    assert.deepEqual(await stream.received(1), ['"before"']);
    await replica.server.close();
    await stream.ended;
    assert.equal((await socket.closed).code, 1001);
    assert.deepEqual(await iterator.next(), { value: { data: '"before"' }, done: false });
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
    assert.equal(broadcaster.subscribers("room:c"), 0);
    await assert.rejects(broadcaster.publish("room:c", "after"), /Broadcaster: closed/);
  });
});
