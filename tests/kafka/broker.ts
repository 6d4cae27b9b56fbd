// The Kafka broker `tools/kafka.sh start` runs (the README's test command starts it), reached with
// the bare client: topics of a test's own, and what a topic holds, read back to check what Thaw
// sent. A broker that does not answer fails the test, saying what starts it: nothing skips.
import { readFileSync } from "node:fs";
import process from "node:process";
import { Admin, Consumer, type Message } from "@platformatic/kafka";

/** The single test broker. */
export const KAFKA_BOOTSTRAP: string = process.env.KAFKA_BOOTSTRAP ?? "127.0.0.1:9092";

/**
 * The test broker's secured listeners (`tools/kafka.sh start`): user "thaw", password
 * "thaw-secret"; SASL_SSL takes SCRAM-SHA-512, SSL a client certificate.
 */
export const KAFKA_SECURED = {
  saslPlaintext: "127.0.0.1:9096",
  ssl: "127.0.0.1:9097",
  saslSsl: "127.0.0.1:9098",
} as const;

/**
 * A PEM file `tools/kafka.sh start` wrote for the secured listeners: `ca.pem` (the CA that signed
 * the broker's and the client's), `client.pem`, `client.key`, `other-ca.pem` (a CA that signed
 * nothing here).
 */
export function tlsFile(name: string): string {
  const path = new URL(`../../.ci/kafka/target/tls/${name}`, import.meta.url);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `no ${name} of the test broker: start it with tools/kafka.sh start (npm test does this) ` +
        `(${(error as Error).message})`,
    );
  }
}

let names = 0;

/** A topic or group name no other test (or run of this one) uses. */
export function uniqueName(prefix: string): string {
  names += 1;
  return `${prefix}-${Date.now().toString(36)}-${process.pid}-${names}`;
}

/** Makes `topic` with `partitions` partitions on the broker(s) at `bootstrap`. */
export async function createTopic(
  topic: string,
  partitions = 1,
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
  replicas = bootstrap.length === 1 ? 1 : 3,
): Promise<void> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [...bootstrap] });
  try {
    await admin.createTopics({ topics: [topic], partitions, replicas });
  } catch (error) {
    throw new Error(
      `Kafka is not reachable at ${bootstrap.join(", ")}: start it with ${
        bootstrap.length === 1 ? "tools/kafka.sh start" : "tools/kafka.sh start-cluster"
      } (npm test does this) (${(error as Error).message})`,
    );
  } finally {
    await admin.close();
  }
}

/** One record as the tests compare them: key and value as text, headers as text pairs. */
export interface ReadRecord {
  readonly partition: number;
  readonly offset: bigint;
  readonly key: string | undefined;
  readonly value: string | undefined;
  readonly headers: ReadonlyMap<string, string>;
}

const text = (bytes: Buffer | undefined | null): string | undefined =>
  bytes === undefined || bytes === null ? undefined : bytes.toString("utf8");

/**
 * Reads `topic` from its start until `count` records came (a group of its own, committing
 * nothing), bounded only against records that never come.
 */
export async function readTopic(
  topic: string,
  count: number,
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
): Promise<ReadRecord[]> {
  const consumer = new Consumer({
    clientId: "thaw-tests",
    groupId: uniqueName("thaw-tests-read"),
    bootstrapBrokers: [...bootstrap],
  });
  const found: ReadRecord[] = [];
  const deadline = Date.now() + 120_000;
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
    try {
      if (count === 0) return found;
      const timer = setInterval(() => {
        if (Date.now() > deadline) stream.close().catch(() => {});
      }, 500);
      try {
        for await (
          const message of stream as AsyncIterable<Message<Buffer, Buffer, Buffer, Buffer>>
        ) {
          found.push({
            partition: message.partition,
            offset: message.offset,
            key: text(message.key),
            value: text(message.value),
            headers: new Map(
              [...message.headers].map(([k, v]) => [text(k) ?? "", text(v) ?? ""]),
            ),
          });
          if (found.length >= count) break;
        }
      } finally {
        clearInterval(timer);
      }
    } finally {
      await stream.close();
    }
  } finally {
    await consumer.close();
  }
  if (found.length < count) {
    throw new Error(`gave up reading ${topic}: ${found.length} of ${count} records came`);
  }
  return found;
}
