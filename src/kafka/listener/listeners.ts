// The seam between `kafka()` and the listeners: once the beans are made, the feature hands them
// here; every `@KafkaListener` method is checked and gets its consumers, started with the app and
// closed with it.
import type { Logger } from "../../web/error_responder.ts";
import { DefinitionError } from "../../context/errors.ts";
import { markedMethods } from "../../tasks/method_marks.ts";
import { loggable, loggableText } from "../../observe/loggable.ts";
import type { RecordSender } from "../outgoing_record.ts";
import type { KafkaClientModule, KafkaClientOptions } from "./kafka_client.ts";
import { KAFKA_LISTENER, type ListenerMark, retryDelay } from "./kafka_listener.ts";
import { deadLetter, deadLetterTopic, RecordRefusedError } from "./dead_letter.ts";
import { type KafkaRecord, text } from "./kafka_record.ts";
import { ListenerMember } from "./listener_member.ts";
import type { Outcome, PartitionLane } from "./partition_lane.ts";

/** Turns a record's value bytes into what the method gets; throwing sends the record to the DLT. */
export type ValueDeserializer = (value: Uint8Array | undefined, record: KafkaRecord) => unknown;

/** What the listeners need from `kafka()`. */
export interface ListenerHost {
  /** `@platformatic/kafka`, loaded by the caller. */
  readonly client: KafkaClientModule;
  /** The client options of the configuration: brokers, client id, TLS, SASL. */
  readonly clientOptions: KafkaClientOptions;
  readonly defaults: {
    /** `kafka.consumer.group-id`: the group of a listener that names none. */
    readonly groupId?: string;
    /** `kafka.consumer.auto-offset-reset` (latest, as Kafka's). */
    readonly autoOffsetReset?: "earliest" | "latest" | "none";
    /** `kafka.listener.concurrency` (1). */
    readonly concurrency?: number;
    /** The group's session timeout (45 s, Kafka's): a member silent this long is dropped. */
    readonly sessionTimeoutMs?: number;
    /** Heartbeats this often (3 s). */
    readonly heartbeatIntervalMs?: number;
    /** How long a rebalance waits for members' records to finish (60 s). */
    readonly rebalanceTimeoutMs?: number;
  };
  /** Where dead letters go: the template's producer. */
  readonly deadLetters: RecordSender;
  readonly logger: Logger;
  /** Values are JSON unless this is given (a null value stays `null`). */
  readonly deserializer?: ValueDeserializer;
}

/** One listener method and what it runs on, as `kafkaListeners` found it. */
export interface ListenerInfo {
  /** `Class.method`. */
  readonly where: string;
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly concurrency: number;
}

/** The listeners of an app: started once it serves, closed with it. */
export class Listeners {
  readonly #listeners: readonly ListenerRun[];
  #started: Promise<void> | undefined;

  /** @internal made by {@linkcode kafkaListeners} */
  constructor(listeners: readonly ListenerRun[]) {
    this.#listeners = listeners;
  }

  /** The listeners found, in bean order. */
  get info(): readonly ListenerInfo[] {
    return this.#listeners.map((l) => l.info);
  }

  /** The member ids of each listener's consumers (those that joined), for tests and health. */
  get memberIds(): readonly (readonly (string | null)[])[] {
    return this.#listeners.map((l) => l.members.map((m) => m.memberId));
  }

  /** Joins each listener's consumers to their groups; resolves once every one joined. */
  start(): Promise<void> {
    this.#started ??= Promise.all(
      this.#listeners.flatMap((l) => l.members.map((m) => m.start())),
    ).then(() => {});
    return this.#started;
  }

  /**
   * Stops fetching, lets the records running finish for `timeoutMs` (the app's
   * `server.shutdown-timeout`), commits what finished and leaves the groups. Resolves with how many
   * records were still running at the end: those are delivered again (not committed).
   */
  async close(timeoutMs: number): Promise<{ readonly abandoned: number }> {
    await this.#started?.catch(() => {});
    const deadline = Date.now() + timeoutMs;
    const left = await Promise.all(
      this.#listeners.flatMap((l) => l.members.map((m) => m.close(deadline))),
    );
    return { abandoned: left.reduce((n, records) => n + records.length, 0) };
  }
}

interface ListenerRun {
  readonly info: ListenerInfo;
  readonly members: readonly ListenerMember[];
}

/**
 * Finds every `@KafkaListener` method of `beans`, checks it (a `DefinitionError` names
 * `Class.method`), and makes its consumers; nothing connects before `start()`.
 */
export function kafkaListeners(
  beans: readonly { readonly instance: unknown }[],
  host: ListenerHost,
): Listeners {
  const runs: ListenerRun[] = [];
  for (const { instance } of beans) {
    for (
      const { where: called, method, mark } of markedMethods<ListenerMark>(
        instance,
        KAFKA_LISTENER,
      )
    ) {
      const where = called.replace(/\(\)$/, "");
      const bean = instance as Record<string, unknown>;
      if (typeof bean[method] !== "function") {
        throw new DefinitionError(`${where}: @KafkaListener is on something not a method`);
      }
      const groupId = mark.groupId ?? host.defaults.groupId;
      if (groupId === undefined || groupId === "") {
        throw new DefinitionError(
          `${where}: @KafkaListener names no groupId and kafka.consumer.group-id is not set; ` +
            `give one of them`,
        );
      }
      const concurrency = mark.concurrency ?? host.defaults.concurrency ?? 1;
      const invoke = (value: unknown, record: unknown) =>
        (bean[method] as (value: unknown, record: unknown) => unknown).call(
          instance,
          value,
          record,
        );
      const work = recordWork(where, mark, groupId, host, invoke);
      const members = Array.from({ length: concurrency }, () =>
        new ListenerMember({
          client: host.client,
          clientOptions: host.clientOptions,
          groupId,
          topics: mark.topics,
          autoOffsetReset: host.defaults.autoOffsetReset ?? "latest",
          sessionTimeoutMs: host.defaults.sessionTimeoutMs ?? 45_000,
          heartbeatIntervalMs: host.defaults.heartbeatIntervalMs ?? 3000,
          rebalanceTimeoutMs: host.defaults.rebalanceTimeoutMs ?? 60_000,
          batch: mark.batch ? 500 : 1,
          where,
          logger: host.logger,
        }, work));
      runs.push({ info: { where, topics: mark.topics, groupId, concurrency }, members });
    }
  }
  return new Listeners(runs);
}

const decoder = new TextDecoder();

// What a lane does with its records: deserialize and check each, call the method (retrying),
// dead-letter what it gives up on.
function recordWork(
  where: string,
  mark: ListenerMark,
  groupId: string,
  host: ListenerHost,
  invoke: (value: unknown, record: unknown) => unknown,
): (records: readonly KafkaRecord[], lane: PartitionLane) => Promise<Outcome> {
  const { logger } = host;
  const warn = (logger.warn ?? logger.error).bind(logger);
  const place = (record: KafkaRecord) =>
    `${loggableText(record.topic)} partition ${record.partition} offset ${record.offset}`;
  const deserialize = host.deserializer ??
    ((bytes: Uint8Array | undefined) =>
      bytes === undefined ? null : JSON.parse(decoder.decode(bytes)));

  // Waits `ms`, unless the lane stops first: then false.
  const wait = (lane: PartitionLane, ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const off = lane.onStop(() => {
        clearTimeout(timer);
        resolve(false);
      });
      const timer = setTimeout(() => {
        off();
        resolve(true);
      }, ms);
    });

  // Sends to the DLT, trying again (the partition waits) until the broker took it or the lane
  // stopped: a record is committed only once it is there.
  const sendDeadLetters = async (
    failed: readonly { record: KafkaRecord; error: unknown }[],
    lane: PartitionLane,
  ): Promise<Outcome> => {
    for (let n = 0;; n++) {
      try {
        await host.deadLetters.send(
          failed.map(({ record, error }) => deadLetter(record, error, groupId)),
        );
        return "done";
      } catch (error) {
        logger.error(
          `${where}: sending ${failed.length === 1 ? "a record" : `${failed.length} records`} ` +
            `of ${place(failed[0].record)} to ${
              deadLetterTopic(loggableText(lane.topic))
            } failed; ` +
            `the partition waits and tries again`,
          loggable(error),
        );
        if (!await wait(lane, Math.min(1000 * 2 ** Math.min(n, 5), 30_000))) return "abandoned";
      }
    }
  };

  // The record's value, deserialized and checked; a refusal says why (never the value).
  const valueOf = async (
    record: KafkaRecord,
  ): Promise<{ value: unknown } | { refused: RecordRefusedError }> => {
    let value: unknown;
    try {
      value = deserialize(record.raw.value, record);
    } catch (error) {
      return {
        refused: new RecordRefusedError(
          host.deserializer === undefined
            ? "the value is not JSON"
            : `the deserializer refused the value: ${
              error instanceof Error ? error.name : typeof error
            }`,
        ),
      };
    }
    if (mark.schema === undefined) return { value };
    const result = await mark.schema["~standard"].validate(value);
    if (result.issues === undefined) return { value: result.value };
    const said = result.issues.map((issue) => {
      const path = (issue.path ?? []).map((p) =>
        typeof p === "object" && p !== null ? String(p.key) : String(p)
      ).join(".");
      return path === "" ? issue.message : `${path}: ${issue.message}`;
    });
    return {
      refused: new RecordRefusedError(`the value was refused by its schema: ${said.join("; ")}`),
    };
  };

  return async (records, lane) => {
    const values: unknown[] = [];
    const accepted: KafkaRecord[] = [];
    const refused: { record: KafkaRecord; error: unknown }[] = [];
    for (const record of records) {
      const read = await valueOf(record);
      if ("refused" in read) {
        warn(
          `${where}: the value of ${place(record)} was refused (${
            read.refused.message.startsWith("the value was refused by its schema")
              ? "schema"
              : "deserializer"
          }); it goes to ${deadLetterTopic(loggableText(record.topic))}`,
        );
        refused.push({ record, error: read.refused });
      } else {
        values.push(read.value);
        accepted.push(record);
      }
    }
    if (refused.length > 0 && await sendDeadLetters(refused, lane) === "abandoned") {
      return "abandoned";
    }
    if (accepted.length === 0) return "done";
    const { attempts } = mark.retry;
    for (let attempt = 1;; attempt++) {
      try {
        await (mark.batch ? invoke(values, accepted) : invoke(values[0], accepted[0]));
        return "done";
      } catch (error) {
        const what = mark.batch
          ? `a batch of ${accepted.length} from ${place(accepted[0])}`
          : place(accepted[0]);
        if (attempt >= attempts) {
          logger.error(
            `${where} failed on ${what} (attempt ${attempt} of ${attempts}); it goes to ` +
              `${deadLetterTopic(loggableText(lane.topic))}`,
            loggable(error),
          );
          return await sendDeadLetters(accepted.map((record) => ({ record, error })), lane);
        }
        const ms = retryDelay(mark.retry, attempt - 1);
        warn(
          `${where} failed on ${what} (attempt ${attempt} of ${attempts}); trying again in ${ms} ms`,
          loggable(error),
        );
        // A stop (rebalance, close) during the wait gives the record up uncommitted: it comes
        // again, to whichever member holds the partition then.
        if (!await wait(lane, ms)) return "abandoned";
      }
    }
  };
}

/** The value of `bytes` as text, for deserializers that want it. */
export const textOf: (bytes: Uint8Array | undefined) => string | undefined = text;
