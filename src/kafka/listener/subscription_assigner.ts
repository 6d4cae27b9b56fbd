// How the group's leader shares partitions out: each topic's partitions in turn among the members
// that subscribed to it. The client's own round robin gives every member the leader's topics,
// which is wrong once two listeners with different topics share a group id.
import type { GroupPartitionsAssigner, GroupPartitionsAssignments } from "@platformatic/kafka";

/** Round robin per topic, among the members subscribed to it (in member id order). */
export const subscriptionAssigner: GroupPartitionsAssigner = (
  _current,
  members,
  _topics,
  metadata,
) => {
  const result = new Map<string, GroupPartitionsAssignments>();
  const ids = [...members.keys()].sort();
  for (const id of ids) result.set(id, { memberId: id, assignments: new Map() });
  const topics = new Set(ids.flatMap((id) => members.get(id)?.topics ?? []));
  for (const topic of [...topics].sort()) {
    const subscribed = ids.filter((id) => members.get(id)?.topics?.includes(topic) === true);
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    for (let partition = 0; partition < count; partition++) {
      const member = result.get(subscribed[partition % subscribed.length])!;
      const entry = member.assignments.get(topic) ?? { topic, partitions: [] };
      entry.partitions.push(partition);
      member.assignments.set(topic, entry);
    }
  }
  return [...result.values()];
};
