// The two places where the client would break a listener's promises on a rebalance, wrapped.
// `@platformatic/kafka` rejoins its group as soon as a heartbeat says a rebalance began, with no
// hook before: another member could then be given a partition whose record is still running
// here. Its requests go through `[kGetApi]` (exported for such extensions), so the JoinGroup
// request is held until `beforeJoin` resolved: the member's records finish and their offsets are
// committed first, as Java's consumer calls `onPartitionsRevoked` before it rejoins. And a
// commit the client retries by itself after a rejoin is sent only for the partitions the member
// holds then: no offset of a partition given away is committed.
// Also: a coordinator gone from the metadata fails its requests rather than the process.
import type { Consumer } from "@platformatic/kafka";
import type { KafkaClientModule } from "./kafka_client.ts";

type Callback = (error: Error | null, value?: unknown) => void;
type Api = (...args: unknown[]) => unknown;
type GetApi = (name: string, callback: Callback) => void;
type GetConnection = (broker: unknown, callback: Callback) => void;

interface CommitTopic {
  readonly name: string;
  readonly partitions: readonly { readonly partitionIndex: number }[];
}

/** What a member is told of its consumer's JoinGroups. */
export interface JoinHooks {
  /** Resolves once a JoinGroup may go; rejects to fail it unsent. */
  before(): Promise<void>;
  /** A JoinGroup was asked for: held by `before`, then sent. */
  started(): void;
  /** It ended: answered, refused, timed out, or failed unsent. */
  ended(): void;
}

/** Wraps `consumer`'s requests as said above. */
export function guardGroup(
  client: KafkaClientModule,
  consumer: Consumer,
  join: JoinHooks,
): void {
  // A broker gone from the metadata (dead, fenced) while the client still names it as the
  // group's coordinator would throw a TypeError out of a timer: an error of the request instead.
  const connections = consumer as unknown as Record<symbol, GetConnection>;
  const getConnection = connections[client.kGetConnection].bind(consumer);
  connections[client.kGetConnection] = (broker, callback) => {
    if (broker === undefined || broker === null) {
      callback(new Error("the broker is no longer in the cluster's metadata"));
      return;
    }
    getConnection(broker, callback);
  };
  const target = consumer as unknown as Record<symbol, GetApi>;
  const original = target[client.kGetApi].bind(consumer);
  target[client.kGetApi] = (name, callback) => {
    if (name !== "JoinGroup" && name !== "OffsetCommit") {
      original(name, callback);
      return;
    }
    original(name, (error, value) => {
      if (error !== null) {
        callback(error);
        return;
      }
      const api = value as Api;
      const wrapped = name === "JoinGroup"
        ? (...args: unknown[]) => {
          const done = args[args.length - 1] as Callback;
          const end: Callback = (error, answer) => {
            join.ended();
            done(error, answer);
          };
          args[args.length - 1] = end;
          join.started();
          // A request that throws as it is sent ends the join too: a join counted for good
          // would keep the member from ever being renewed.
          join.before().then(() => api(...args)).catch((e: Error) => end(e));
        }
        : (...args: unknown[]) => {
          // api(connection, groupId, generation, memberId, instanceId, topics, callback)
          const held = new Map(
            (consumer.assignments ?? []).map((a) => [a.topic, new Set(a.partitions)]),
          );
          const topics = (args[5] as CommitTopic[]).map((topic) => ({
            ...topic,
            partitions: topic.partitions.filter((p) =>
              held.get(topic.name)?.has(p.partitionIndex) === true
            ),
          })).filter((topic) => topic.partitions.length > 0);
          if (topics.length === 0) {
            (args[args.length - 1] as Callback)(null, { throttleTimeMs: 0, topics: [] });
            return;
          }
          args[5] = topics;
          api(...args);
        };
      callback(null, Object.assign(wrapped, api));
    });
  };
}
