// Broadcast through a Kafka topic between two replicas (two apps in this process, each with its
// own producer and consumer on the real broker): a message published on either reaches the
// streams and sockets of both, in order; each replica's close ends its subscribers and its
// clients.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Admin } from "@platformatic/kafka";
import { RUNTIME } from "../runtime.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "../kafka/broker.ts";
import { type Replica, startReplica } from "./live_app.ts";
import { publishInTurns } from "./replicas_in_turns.ts";

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
      // Published in turn, each acknowledged before the next: one channel's records share a
      // partition (the channel is the key), which keeps that order.
      const { stream, socket, published } = await publishInTurns(a, b, "k");
      // On the topic: one record per message, keyed by its channel.
      const records = await readTopic(topic, published);
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
