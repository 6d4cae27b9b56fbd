// How the group's leader shares partitions: each to exactly one member subscribed to its topic,
// evenly among them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ClusterMetadata, ExtendedGroupProtocolSubscription } from "@platformatic/kafka";
import { subscriptionAssigner } from "../../../src/kafka/listener/subscription_assigner.ts";
import { propertyOptions } from "../../property.ts";

describe("subscriptionAssigner", () => {
  it("gives each partition to one subscribed member, evenly", () => {
    const topics = ["a", "b", "c"];
    fc.assert(
      fc.property(
        fc.array(fc.subarray(topics, { minLength: 1 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 3, maxLength: 3 }),
        (subscriptions, counts) => {
          const members = new Map<string, ExtendedGroupProtocolSubscription>(
            subscriptions.map((t, i) => [`m${i}`, { memberId: `m${i}`, version: 1, topics: t }]),
          );
          const metadata = {
            topics: new Map(topics.map((t, i) => [t, { partitionsCount: counts[i] }])),
          } as unknown as ClusterMetadata;
          const result = subscriptionAssigner("m0", members, new Set(["a"]), metadata);
          for (const [i, topic] of topics.entries()) {
            const holders = result.flatMap((r) =>
              (r.assignments.get(topic)?.partitions ?? []).map((p) => [r.memberId, p] as const)
            );
            const subscribed = [...members.values()].filter((m) => m.topics!.includes(topic));
            if (subscribed.length === 0) {
              assert.equal(holders.length, 0);
              continue;
            }
            assert.deepEqual(holders.map(([, p]) => p).sort((x, y) => x - y), [
              ...Array(counts[i]).keys(),
            ]);
            for (const [member] of holders) {
              assert.ok(members.get(member)!.topics!.includes(topic), "only subscribers hold it");
            }
            const per = subscribed.map((m) => holders.filter(([h]) => h === m.memberId).length);
            assert.ok(Math.max(...per) - Math.min(...per) <= 1, "evenly");
          }
        },
      ),
      propertyOptions(),
    );
  });
});
