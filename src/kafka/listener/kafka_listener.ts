// `@KafkaListener`: marks a bean's method as the handler of a topic's records. The mark is all it
// leaves; `kafka()` finds the marked methods once the beans are made (kafkaListeners in
// listeners.ts) and runs one container per method.
import { checkDecoratorCall } from "../../context/decorator_call.ts";
import { markMethod } from "../../tasks/method_marks.ts";
import { checkOptionsObject } from "../../options_object.ts";
import { isStandardSchema, type StandardSchemaV1 } from "../../config/standard_schema.ts";
import { Backoff, BACKOFF_KEYS, readBackoff } from "../../runtime/backoff.ts";
import {
  ERROR_RULE_KEYS,
  type ErrorClass,
  type ErrorRules,
  readErrorRules,
} from "../../tasks/retry_policy.ts";
import { shownValue } from "../../shown_value.ts";

/** Where each `@KafkaListener` method's options are kept, by method name. */
export const KAFKA_LISTENER: unique symbol = Symbol("thaw.kafkaListener");

/**
 * How a failing record is tried again before it goes to `<topic>.DLT`; times in milliseconds or as
 * durations (`"250ms"`, `"5s"`, `"10m"`, `"1h"`).
 */
export interface KafkaListenerRetry {
  /** Deliveries in all, the first included (3): 1 sends a failing record to the DLT at once. */
  readonly attempts?: number;
  /** The wait before the first retry: 1 s. */
  readonly delay?: number | string;
  /** What each wait is multiplied by for the next (2). */
  readonly multiplier?: number;
  /** The longest wait: 30 s, or `delay` when that is longer. */
  readonly maxDelay?: number | string;
  /** How far a wait may stray, as the waits grow: 0 by default. */
  readonly jitter?: number | string;
  /**
   * The errors tried again (with their subclasses, matched on the error and its causes): any by
   * default. Another goes to the DLT at once.
   */
  readonly includes?: readonly ErrorClass[];
  /** The errors never tried again: they go to the DLT at once; the nearest rule wins. */
  readonly excludes?: readonly ErrorClass[];
}

/** The options of {@linkcode KafkaListener}. */
export interface KafkaListenerOptions {
  /** The topic, or topics, the method takes records from. */
  readonly topics: string | readonly string[];
  /** The consumer group; `kafka.consumer.group-id` when not given. */
  readonly groupId?: string;
  /** Consumers of the group this listener runs (`kafka.listener.concurrency`, else 1). */
  readonly concurrency?: number;
  /** Checks the deserialized value first; a refused value goes to `<topic>.DLT`, untried. */
  readonly schema?: StandardSchemaV1;
  /** How a failing record is tried again (3 attempts, 1 s then 2 s apart). */
  readonly retry?: KafkaListenerRetry;
  /** The method takes the records of one partition at a time, as arrays. */
  readonly batch?: boolean;
  /**
   * `"bytes"`: the method gets each value as it came, a `Uint8Array` (`null` for none), not
   * deserialized (Spring Kafka's `ByteArrayDeserializer`). `"json"` by default.
   */
  readonly value?: "json" | "bytes";
}

/** What {@linkcode KafkaListener} returns: a decorator for a bean's method. */
export type KafkaListenerDecorator = <This, A extends unknown[], R>(
  value: (this: This, ...args: A) => R,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => R>,
) => void;

/** A listener's options, checked and with its retry filled in: what the container runs on. */
export interface ListenerMark {
  readonly topics: readonly string[];
  readonly groupId: string | undefined;
  readonly concurrency: number | undefined;
  readonly schema: StandardSchemaV1 | undefined;
  readonly retry: RetrySettings;
  readonly batch: boolean;
  /** How the method gets a value: deserialized, or as its bytes. */
  readonly value: "json" | "bytes";
}

/** A listener's retry, its defaults filled in. */
export interface RetrySettings extends ErrorRules {
  /** Deliveries in all, the first included. */
  readonly attempts: number;
  /** The wait before each retry. */
  readonly backoff: Backoff;
}

/**
 * The defaults: a failure that passes (a database restarting, a lock held) gets three tries over
 * about three seconds, and a record that cannot succeed holds its partition that long, not for the
 * ten back-to-back tries of Spring Kafka's `DefaultErrorHandler`, which give a passing cause no
 * time to pass.
 */
export const RETRY_DEFAULTS: RetrySettings = {
  attempts: 3,
  backoff: /* @__PURE__ */ new Backoff({ delay: 1000, multiplier: 2, maxDelay: 30_000 }),
  includes: [],
  excludes: [],
};

const KEYS = ["topics", "groupId", "concurrency", "schema", "retry", "batch", "value"];
const RETRY_KEYS = ["attempts", ...BACKOFF_KEYS, ...ERROR_RULE_KEYS];

/**
 * Runs the method for each record of `topics`, with the deserialized value (JSON unless the app
 * gives a deserializer) and the record: `(value, record) => unknown`, or, with `batch: true`,
 * `(values, records)` for the records of one partition at a time. An offset is committed once the
 * method resolved: a crash delivers the record again (make the method idempotent). A method that
 * throws is tried again (`retry`), then the record goes to `<topic>.DLT` with Spring Kafka's
 * `kafka_dlt-*` headers and the partition moves on; a partition's later records wait meanwhile.
 *
 * A bad option stops at once, naming the method.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KafkaListener } from "./kafka_listener.ts";
 *
 * // The options are checked when the class is defined, naming what is wrong.
 * assert.throws(() => KafkaListener({ topics: [] }), /@KafkaListener: topics names no topic/);
 * assert.equal(typeof KafkaListener({ topics: "orders", retry: { delay: "200ms" } }), "function");
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md#listeners
 */
export function KafkaListener(options: KafkaListenerOptions): KafkaListenerDecorator {
  const mark = listenerMark(options, "@KafkaListener");
  return (value, context) => {
    checkDecoratorCall("@KafkaListener", value, context);
    const name = String(context.name);
    if (context.kind !== "method" || context.static || context.private) {
      throw new TypeError(
        `@KafkaListener on ${name}: it takes records on public instance methods only`,
      );
    }
    markMethod(context.metadata, KAFKA_LISTENER, name, mark);
  };
}

/** Checks a listener's options; a `TypeError` names `where` and the option. */
export function listenerMark(options: unknown, where: string): ListenerMark {
  checkOptionsObject(options, where, KEYS);
  const fail = (why: string): never => {
    throw new TypeError(`${where}: ${why}`);
  };
  const given = options.topics;
  const topics = typeof given === "string" ? [given] : Array.isArray(given) ? [...given] : [];
  if (topics.length === 0) fail("topics names no topic: give a topic or a list of them");
  for (const topic of topics) {
    if (typeof topic !== "string" || !/^[a-zA-Z0-9._-]{1,249}$/.test(topic)) {
      fail(
        `topics: ${JSON.stringify(topic)} is not a Kafka topic name (letters, digits, . _ -)`,
      );
    }
  }
  const { groupId, concurrency, schema, batch } = options;
  if (groupId !== undefined && (typeof groupId !== "string" || groupId === "")) {
    fail("groupId is a non-empty text");
  }
  if (
    concurrency !== undefined &&
    (typeof concurrency !== "number" || !Number.isInteger(concurrency) || concurrency < 1)
  ) fail(`concurrency is a whole number of consumers, 1 or more, got ${shownValue(concurrency)}`);
  if (schema !== undefined && !isStandardSchema(schema)) {
    fail("schema is a Standard Schema (zod, valibot, arktype...)");
  }
  if (batch !== undefined && typeof batch !== "boolean") fail("batch is true or false");
  const kind: unknown = options.value ?? "json";
  const value = kind === "json" || kind === "bytes"
    ? kind
    : fail(`value is "json" or "bytes", got ${shownValue(kind)}`);
  if (value === "bytes" && schema !== undefined) {
    fail('a schema checks a deserialized value: with value: "bytes" there is none');
  }
  return {
    topics: topics as string[],
    groupId: groupId as string | undefined,
    concurrency: concurrency as number | undefined,
    schema: schema as StandardSchemaV1 | undefined,
    retry: retrySettings(options.retry, `${where}: retry`),
    batch: batch === true,
    value,
  };
}

function retrySettings(given: unknown, where: string): RetrySettings {
  if (given === undefined) return RETRY_DEFAULTS;
  checkOptionsObject(given, where, RETRY_KEYS);
  const { attempts = RETRY_DEFAULTS.attempts } = given;
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1) {
    throw new TypeError(
      `${where}: attempts counts deliveries, the first included: 1 or more, got ${
        shownValue(attempts)
      }`,
    );
  }
  return {
    attempts,
    backoff: readBackoff(given, where, RETRY_DEFAULTS.backoff),
    ...readErrorRules(given, where),
  };
}
