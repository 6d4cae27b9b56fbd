// integration test: redis-server from Debian's redis-server package (tools/system_packages.sh)
// Broadcast through Redis pub/sub between two replicas (two apps in this process, each with its
// own connections to a real redis-server): a message published on either reaches the streams and
// sockets of both, in order; each replica's close ends its subscribers and its subscription.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createClient } from "redis";
import { RUNTIME } from "../runtime.ts";
import { RedisServer } from "../cache/redis_server.ts";
import { bootstrap } from "../../mod.ts";
import { type SseClient, sseClient, untilHolds } from "./feed_clients.ts";
import { Live, type Replica, startReplica } from "./live_app.ts";
import { publishInTurns } from "./replicas_in_turns.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { until } from "../runtime/raw_client.ts";

const CHANNEL = "thaw:broadcast:test";

describe(`broadcast through Redis pub/sub on ${RUNTIME}`, () => {
  let redis: RedisServer;

  before(async () => {
    redis = await RedisServer.start();
  });
  after(() => redis.kill());

  // Publishes on `room` numbers from 1 until one comes back to `stream` (which got "0" before
  // Redis went) through the subscription made again: those sent before it was made again are lost,
  // as pub/sub keeps nothing; what was written to a Redis that had stopped answering may come
  // before, once it answers. Then the stream leaves.
  async function feedGoesOn(replica: Replica, room: string, stream: SseClient): Promise<void> {
    let n = 0;
    await untilHolds(() => {
      void replica.broadcaster.publish(room, ++n).catch(() => {});
      return stream.data.slice(1).some((data) => Number(data) >= 1);
    }, "a message through the subscription made again");
    assert.equal(stream.data[0], "0");
    stream.leave();
  }

  // One line per connection of the server, as CLIENT LIST writes it.
  async function clientList(): Promise<string[]> {
    const client = createClient({ url: redis.url, RESP: 2 });
    client.on("error", () => {});
    await client.connect();
    try {
      return String(await client.sendCommand(["CLIENT", "LIST"])).split("\n");
    } finally {
      client.destroy();
    }
  }

  // How many connections of the replicas are subscribed to the Redis channel.
  async function subscribed(): Promise<number> {
    const client = createClient({ url: redis.url, RESP: 2 });
    client.on("error", () => {});
    await client.connect();
    try {
      const reply = await client.sendCommand(["PUBSUB", "NUMSUB", CHANNEL]) as [string, number];
      return Number(reply[1]);
    } finally {
      client.destroy();
    }
  }

  // A replica whose Redis is reached through a proxy (on its own Redis channel), which a test
  // freezes or cuts; `server` is the replica's server configuration.
  async function behindProxy(name: string, server: Record<string, unknown>) {
    const proxy = await tcpProxy("127.0.0.1", redis.port);
    await proxy.up();
    const replica = await startReplica({
      thaw: {
        broadcast: {
          transport: "redis",
          redis: { url: `redis://127.0.0.1:${proxy.port}`, channel: `${CHANNEL}:${name}` },
        },
      },
      server,
    });
    return { proxy, replica };
  }

  // A stream of `room` on the replica, which got "0" through Redis.
  async function streamWithFirst(replica: Replica, room: string): Promise<SseClient> {
    const stream = await sseClient(`${replica.base}/rooms/${room.slice("room:".length)}/feed`);
    await untilHolds(() => replica.broadcaster.subscribers(room) === 1, "a stream");
    await replica.broadcaster.publish(room, 0);
    assert.deepEqual(await stream.received(1), ["0"]);
    return stream;
  }

  it("publishes from either replica to the streams and sockets of both, in order", async () => {
    const config = {
      thaw: { broadcast: { transport: "redis", redis: { url: redis.url, channel: CHANNEL } } },
      server: { sse: { heartbeat: "100ms" } },
    };
    const replicas: Replica[] = [await startReplica(config), await startReplica(config)];
    try {
      const [a, b] = replicas as [Replica, Replica];
      assert.equal(await subscribed(), 2);
      // Published in turn, each taken before the next: Redis keeps that order.
      const { stream, socket } = await publishInTurns(a, b, "r");

      await a.server.close();
      await stream.ended;
      assert.equal(a.broadcaster.subscribers("room:r"), 0);
      assert.equal(await subscribed(), 1);
      await b.broadcaster.publish("room:r", "still here");
      const last = await socket.next();
      assert.equal(last.type === "text" ? last.data : last, '"still here"');
      await b.server.close();
      assert.equal((await socket.closed).code, 1001);
      assert.equal(await subscribed(), 0);
    } finally {
      for (const replica of replicas) await replica.server.close().catch(() => {});
    }
  });

  it("drops, with one line, what another writer puts on the Redis channel", async () => {
    const channel = `${CHANNEL}:foreign`;
    const replica = await startReplica({
      thaw: { broadcast: { transport: "redis", redis: { url: redis.url, channel } } },
      server: { sse: { heartbeat: "100ms" } },
    });
    try {
      const stream = await sseClient(`${replica.base}/rooms/f/feed`);
      await untilHolds(() => replica.broadcaster.subscribers("room:f") === 1, "a stream");
      const writer = createClient({ url: redis.url, RESP: 2 });
      writer.on("error", () => {});
      await writer.connect();
      try {
        for (
          const message of [
            "not json",
            Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), // not UTF-8
            '{"channel":"room:f"}',
            '{"channel":"room:f","data":"\\r\\n\\u0000"}',
          ]
        ) {
          await writer.sendCommand(["PUBLISH", channel, message]);
        }
      } finally {
        writer.destroy();
      }
      await replica.broadcaster.publish("room:f", "mine");
      assert.deepEqual(await stream.received(2), ['"\\r\\n\\u0000"', '"mine"']);
      const foreign = replica.lines().filter((line) => line.includes("no broadcast message"));
      assert.equal(foreign.length, 1);
      assert.match(
        foreign[0],
        /Redis at redis:\/\/127\.0\.0\.1:\d+ \(channel "thaw:broadcast:test:foreign"\)/,
      );
      stream.leave();
    } finally {
      await replica.server.close();
    }
  });

  it("subscribes again once Redis is back, and the feed goes on", async () => {
    const channel = `${CHANNEL}:again`;
    const replica = await startReplica({
      thaw: { broadcast: { transport: "redis", redis: { url: redis.url, channel } } },
      server: { sse: { heartbeat: "100ms" } },
    });
    try {
      const stream = await sseClient(`${replica.base}/rooms/g/feed`);
      await untilHolds(() => replica.broadcaster.subscribers("room:g") === 1, "a stream");
      await replica.broadcaster.publish("room:g", 0);
      assert.deepEqual(await stream.received(1), ["0"]);
      await redis.kill();
      await untilHolds(
        () => replica.lines().some((line) => line.includes("is unavailable, reconnecting")),
        "the lost connection logged",
      );
      await assert.rejects(replica.broadcaster.publish("room:g", "lost"), /could not publish/);
      await redis.restart();
      await feedGoesOn(replica, "room:g", stream);
    } finally {
      await replica.server.close();
    }
  });

  it("fails a publish to a Redis that stops answering, and subscribes again once it answers", async () => {
    // A Redis that keeps its connections and answers nothing: a frozen server, or a network that
    // drops every packet, where no connection is ever cut to tell the client.
    const { proxy, replica } = await behindProxy("silent", { sse: { heartbeat: "100ms" } });
    try {
      const stream = await streamWithFirst(replica, "room:s");
      // The subscribed connection pings too, which a sound Redis answers as any other.
      await until(
        async () => (await clientList()).some((c) => /sub=1 .*cmd=ping/.test(c)),
        "a ping on the subscribed connection",
      );
      assert.deepEqual(replica.lines().filter((line) => line.includes("unavailable")), []);
      proxy.hold();
      // Published on steadily meanwhile: every write counts as traffic on the connection, so that
      // it never goes quiet enough to be cut; the publish must fail of itself.
      const steady = setInterval(
        () => void replica.broadcaster.publish("room:s", "steady").catch(() => {}),
        1000,
      );
      try {
        await assert.rejects(
          replica.broadcaster.publish("room:s", "lost"),
          /could not publish.*no answer within 15000 ms/s,
        );
      } finally {
        clearInterval(steady);
      }
      await untilHolds(
        () => replica.lines().some((line) => line.includes("is unavailable, reconnecting")),
        "the silent connection logged",
      );
      proxy.release();
      await feedGoesOn(replica, "room:s", stream);
    } finally {
      await replica.server.close();
      await proxy.down();
    }
  });

  it("replaces a publishing connection the network dropped, though it is published on all along", async () => {
    const { proxy, replica } = await behindProxy("severed", { sse: { heartbeat: "100ms" } });
    try {
      const stream = await streamWithFirst(replica, "room:d");
      // Both connections now reach no server, and nothing cuts them: a firewall dropped them.
      // The subscribed one goes quiet (its ping waits on an answer) and is cut for it; the
      // publishing one is written to all along by the publishes below, so it never goes quiet.
      proxy.sever();
      await feedGoesOn(replica, "room:d", stream);
      // Said with its cause (each connection lost in it may say so once): never as the end of
      // the client replaced, which the replacing brings about.
      const said = replica.logger.lines.filter(([line]) => String(line).includes("is unavailable"));
      assert.ok(said.length >= 1, "the incident said");
      for (const [, cause] of said) assert.doesNotMatch(String(cause), /Disconnects client/);
    } finally {
      await replica.server.close();
      await proxy.down();
    }
  });

  it("closes without waiting on a Redis that answers nothing", async () => {
    const { proxy, replica } = await behindProxy("frozen", { "shutdown-timeout": 10 });
    let closed = false;
    try {
      await replica.broadcaster.publish("room:f", 0);
      proxy.hold();
      // Written, and never answered.
      const waiting = replica.broadcaster.publish("room:f", 1).catch((error: Error) => error);
      await replica.server.close();
      closed = true;
      assert.match(String(await waiting), /could not publish/);
      // Past the shutdown's bound the broadcaster's close would be said to have timed out.
      const late = replica.logger.lines.filter((args) =>
        /timed out/.test(args.map(String).join(" "))
      );
      assert.deepEqual(late, []);
    } finally {
      if (!closed) await replica.server.close();
      await proxy.down();
    }
  });

  it("fails bootstrap, naming Redis with its password masked, when Redis cannot be reached", async () => {
    await assert.rejects(
      bootstrap({
        config: {
          thaw: {
            broadcast: { transport: "redis", redis: { url: "redis://u:secret@127.0.0.1:1" } },
          },
        },
        components: [Live],
      }),
      (error: Error) => {
        assert.match(
          error.message,
          /Broadcaster: could not subscribe on Redis at redis:\/\/\*\*\*@127\.0\.0\.1:1 /,
        );
        assert.doesNotMatch(error.message, /secret/);
        return true;
      },
    );
  });
});
