// Broadcast through a Kafka topic between two replicas (two apps in this process, each with its
// own producer and consumer on the real broker): a message published on either reaches the
// streams and sockets of both, in order; each replica's close ends its subscribers and its
// clients.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Admin } from "@platformatic/kafka";
import { RUNTIME } from "../runtime.ts";
import { openAccepted } from "../runtime/ws_raw_client.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "../kafka/broker.ts";
import { sseClient, untilHolds } from "./feed_clients.ts";
import { type Replica, startReplica } from "./live_app.ts";

// The members of each consumer group whose id starts with the replicas' client id.
async function groupMembers(clientId: string): Promise<number[]> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [KAFKA_BOOTSTRAP] });
  try {
    const ids = [...(await admin.listGroups()).keys()].filter((id) => id.startsWith(clientId));
    const groups = await admin.describeGroups({ groups: ids });
    return [...groups.values()].map((group) => group.members.size);
  } finally {
    await admin.close();
  }
}

describe(`broadcast through a Kafka topic on ${RUNTIME}`, () => {
  it("publishes from either replica to the streams and sockets of both, in order", async () => {
    const topic = uniqueName("thaw-broadcast");
    const clientId = uniqueName("thaw-broadcast-client");
    await createTopic(topic, 3);
    const config = {
      thaw: {
        broadcast: {
          transport: "kafka",
          kafka: { "bootstrap-servers": KAFKA_BOOTSTRAP, topic, "client-id": clientId },
        },
      },
      server: { sse: { heartbeat: "100ms" } },
    };
    const replicas: Replica[] = [await startReplica(config), await startReplica(config)];
    try {
      const [a, b] = replicas as [Replica, Replica];
      // Each replica is the one member of a group of its own, which it leaves as it closes.
      assert.deepEqual(await groupMembers(clientId), [1, 1]);
      const stream = await sseClient(`${a.base}/rooms/k/feed`);
      const socket = await openAccepted(b.port, "/rooms/k/socket");
      await untilHolds(() => a.broadcaster.subscribers("room:k") === 1, "a stream on a");
      await untilHolds(() => b.broadcaster.subscribers("room:k") === 1, "a socket on b");
      const sent: unknown[] = [];
      for (let n = 0; n < 20; n++) {
        const data = { n, text: `from ${n % 2 === 0 ? "a" : "b"}\r\n\0\u2028` };
        sent.push(data);
        // One replica after the other, each acknowledged before the next: one channel's records
        // share a partition (the channel is the key), which keeps that order.
        await (n % 2 === 0 ? a : b).broadcaster.publish("room:k", data);
      }
      const expected = sent.map((data) => JSON.stringify(data));
      assert.deepEqual(await stream.received(sent.length), expected);
      const messages: unknown[] = [];
      for (let i = 0; i < sent.length; i++) {
        const message = await socket.next();
        messages.push(message.type === "text" ? message.data : message);
      }
      assert.deepEqual(messages, expected);
      // On the topic: one record per message, keyed by its channel.
      const records = await readTopic(topic, sent.length);
      assert.deepEqual(new Set(records.map((record) => record.key)), new Set(["room:k"]));

      await a.server.close();
      await stream.ended;
      assert.equal(a.broadcaster.subscribers("room:k"), 0);
      await assert.rejects(a.broadcaster.publish("room:k", "late"), /Broadcaster: closed/);
      await b.broadcaster.publish("room:k", "still here");
      const last = await socket.next();
      assert.equal(last.type === "text" ? last.data : last, '"still here"');
      await b.server.close();
      assert.equal((await socket.closed).code, 1001);
      assert.deepEqual(await groupMembers(clientId), [0, 0]);
    } finally {
      for (const replica of replicas) await replica.server.close().catch(() => {});
    }
  });
});
