// What the listener tests share: the bare client's producer as the dead letters' `RecordSender`
// (the template's stands there in an app), a host on the test broker, a logger that keeps its
// lines, and records sent with the bare producer.
import * as client from "@platformatic/kafka";
import { ProduceAcks, Producer, type ProduceResult } from "@platformatic/kafka";
import type {
  OutgoingRecord,
  RecordMetadata,
  RecordSender,
} from "../../../src/kafka/outgoing_record.ts";
import {
  kafkaListeners,
  type ListenerHost,
  type Listeners,
} from "../../../src/kafka/listener/listeners.ts";
import { createTopic, KAFKA_BOOTSTRAP, uniqueName } from "../broker.ts";

/** A producer that acknowledges with acks all, as a `RecordSender`, and its close. */
export function producerSender(
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
): RecordSender & { close(): Promise<void> } {
  const producer = new Producer({
    clientId: "thaw-tests-producer",
    bootstrapBrokers: [...bootstrap],
    idempotent: true,
    acks: ProduceAcks.ALL,
  });
  return {
    async send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
      const results: RecordMetadata[] = [];
      for (const record of records) {
        const sent: ProduceResult = await producer.send({
          messages: [{
            topic: record.topic,
            ...(record.key === undefined ? {} : { key: Buffer.from(record.key) }),
            ...(record.value === undefined ? {} : { value: Buffer.from(record.value) }),
            headers: new Map(record.headers.map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
            ...(record.partition === undefined ? {} : { partition: record.partition }),
          }],
        });
        const where = sent.offsets![0];
        results.push({ topic: where.topic, partition: where.partition, offset: where.offset });
      }
      return results;
    },
    close: () => producer.close(),
  };
}

/** Sends JSON values (with keys and headers) to `topic`, acks all; answers where each went. */
export async function sendJson(
  sender: RecordSender,
  topic: string,
  values: readonly {
    value: unknown;
    key?: string;
    headers?: Record<string, string>;
    partition?: number;
  }[],
): Promise<readonly RecordMetadata[]> {
  const encoder = new TextEncoder();
  return await sender.send(values.map(({ value, key, headers, partition }) => ({
    topic,
    key: key === undefined ? undefined : encoder.encode(key),
    value: encoder.encode(JSON.stringify(value)),
    headers: Object.entries(headers ?? {}).map(([k, v]) => [k, encoder.encode(v)] as const),
    partition,
  })));
}

/** A logger keeping its lines. */
export class KeptLog {
  readonly lines: string[] = [];
  /** What was logged beside each line (an error, mostly; `undefined` for nothing), by index. */
  readonly details: unknown[] = [];
  error = (message: string, ...details: unknown[]): void => {
    this.#keep(`error ${message}`, details);
  };
  warn = (message: string, ...details: unknown[]): void => {
    this.#keep(`warn ${message}`, details);
  };
  info = (message: string, ...details: unknown[]): void => {
    this.#keep(`info ${message}`, details);
  };

  #keep(line: string, details: unknown[]): void {
    this.lines.push(line);
    this.details.push(details[0]);
  }
}

/** A host on the test broker, quick to notice members come and go. */
export function testHost(
  deadLetters: RecordSender,
  logger: KeptLog,
  overrides: Partial<ListenerHost> = {},
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
): ListenerHost {
  return {
    client,
    clientOptions: { clientId: "thaw-tests-listener", bootstrapBrokers: [...bootstrap] },
    defaults: {
      autoOffsetReset: "earliest",
      sessionTimeoutMs: 6000,
      heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 20_000,
    },
    deadLetters,
    logger,
    ...overrides,
  };
}

/**
 * Resolves once `condition()` holds, checking as things happen; gives up after `ms`, with what
 * `context()` says then (a log) in its message.
 */
export async function until(
  condition: () => boolean,
  what: string,
  ms = 120_000,
  context?: () => string,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`gave up waiting: ${what}${context === undefined ? "" : `\n${context()}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * `promise`, or a rejection saying `what()` once `ms` went by without it settling: a step that
 * hangs fails, named, where the run's own time-out would kill every test after it.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`gave up after ${ms} ms: ${what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A topic of the test's own on the test broker, and its `.DLT` (one partition) with `dlt`. */
export async function listenerTopic(
  prefix: string,
  partitions: number,
  { dlt = false }: { readonly dlt?: boolean } = {},
): Promise<string> {
  const topic = uniqueName(prefix);
  await createTopic(topic, partitions);
  if (dlt) await createTopic(`${topic}.DLT`, 1);
  return topic;
}

/** What `withListeners` gives its body. */
export interface ListenerRun {
  /** Sends the test's records, and the dead letters. */
  readonly sender: RecordSender;
  readonly log: KeptLog;
  /** Not started: the body starts them where the test wants. */
  readonly listeners: Listeners;
}

/**
 * Runs `body` with the listeners of `instance` on the test broker (the test host's settings, with
 * `defaults` over them), and closes them and their sender after it, whatever it did.
 */
export async function withListeners(
  instance: object,
  body: (run: ListenerRun) => Promise<void>,
  defaults: Partial<ListenerHost["defaults"]> = {},
): Promise<void> {
  const sender = producerSender();
  const log = new KeptLog();
  const host = testHost(sender, log);
  const listeners = kafkaListeners([{ instance }], {
    ...host,
    defaults: { ...host.defaults, ...defaults },
  });
  try {
    await body({ sender, log, listeners });
  } finally {
    await listeners.close(10_000);
    await sender.close();
  }
}
