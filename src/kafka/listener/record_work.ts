// What a listener's lane does with its records: deserialize and check each (a refusal goes to
// the DLT, untried), call the method, try again after a wait while it throws, then send what it
// gave up on to the DLT; a DLT that cannot be written sends the records through the method again.
// A stop (rebalance, close) during a wait gives the record up uncommitted.
import { Backoff } from "../../runtime/backoff.ts";
import { loggable, loggableText } from "../../observe/loggable.ts";
import type { StandardSchemaV1Result } from "../../config/standard_schema.ts";
import type { ListenerMark } from "./kafka_listener.ts";
import { retries } from "../../tasks/retry_policy.ts";
import {
  deadLetter,
  deadLetterTopic,
  isDeadLetterTopic,
  RecordRefusedError,
} from "./dead_letter.ts";
import type { KafkaRecord } from "./kafka_record.ts";
import type { ListenerHost } from "./listener_host.ts";
import type { LaneWork, Outcome, PartitionLane } from "./partition_lane.ts";

// A dead letter not sent is sent again 1 s later, doubling, at most 30 s apart.
const DEAD_LETTER_BACKOFF = /* @__PURE__ */ new Backoff({
  delay: 1000,
  multiplier: 2,
  maxDelay: 30_000,
});

/** One listener method, as its lanes run it. */
export interface ListenerCall {
  /** `Class.method`. */
  readonly where: string;
  readonly mark: ListenerMark;
  readonly groupId: string;
  readonly host: ListenerHost;
  /** Calls the method on its bean. */
  readonly invoke: (value: unknown, record: unknown) => unknown;
}

// JSON is UTF-8 (RFC 8259): a value with bytes no UTF-8 text holds is refused, as Jackson refuses
// it in Spring, not read with replacement characters the method could not tell from real ones.
const decoder = new TextDecoder("utf-8", { fatal: true });

// Waits `ms`, unless the lane stops first: then false.
function laneWait(lane: PartitionLane, ms: number): Promise<boolean> {
  // A lane stopped while its record ran (a DLT send in flight at close) answers at once.
  if (lane.stopped) return Promise.resolve(false);
  return new Promise((resolve) => {
    const off = lane.onStop(() => {
      clearTimeout(timer);
      resolve(false);
    });
    const timer = setTimeout(() => {
      off();
      resolve(true);
    }, ms);
  });
}

const place = (record: KafkaRecord) =>
  `${loggableText(record.topic)} partition ${record.partition} offset ${record.offset}`;

/** A DLT that could not be written: the records it was for go through the method again. */
interface DeadLetterFailure {
  readonly failed: readonly KafkaRecord[];
  readonly error: unknown;
}

/**
 * Sends `failed` to the DLT, once: the producer bounds the try (`kafka.producer.delivery-timeout`);
 * a failure is the caller's to handle, the records uncommitted.
 */
async function sendDeadLetters(
  call: ListenerCall,
  failed: readonly { record: KafkaRecord; error: unknown }[],
): Promise<"done" | DeadLetterFailure> {
  try {
    await call.host.deadLetters.send(
      failed.map(({ record, error }) => deadLetter(record, error, call.groupId)),
    );
    return "done";
  } catch (error) {
    return { failed: failed.map(({ record }) => record), error };
  }
}

type Read = { value: unknown } | { refused: RecordRefusedError; by: "schema" | "deserializer" };

// The record's value, deserialized and checked; a refusal says why (never the value). A promise
// only when the schema answers with one: most records cost no extra turn.
function valueOf(call: ListenerCall, record: KafkaRecord): Read | Promise<Read> {
  const { host, mark } = call;
  if (mark.value === "bytes") return { value: record.raw.value ?? null };
  let value: unknown;
  try {
    value = host.deserializer === undefined
      ? (record.raw.value === undefined ? null : JSON.parse(decoder.decode(record.raw.value)))
      : host.deserializer(record.raw.value, record);
  } catch (error) {
    return {
      by: "deserializer",
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
  let result: ReturnType<typeof mark.schema["~standard"]["validate"]>;
  try {
    result = mark.schema["~standard"].validate(value);
  } catch (error) {
    return schemaFailed(error);
  }
  return "then" in result && typeof result.then === "function"
    ? Promise.resolve(result).then(schemaRead, schemaFailed)
    : schemaRead(result as StandardSchemaV1Result<unknown>);
}

// A schema that threw (or rejected) on a value refuses it: a record the lane cannot read goes to
// the DLT like one the schema refused, not out of the lane's loop. Only the error's class is
// said: its message may quote the value.
function schemaFailed(error: unknown): Read {
  return {
    by: "schema",
    refused: new RecordRefusedError(
      `the schema failed on the value: ${error instanceof Error ? error.name : typeof error}`,
    ),
  };
}

function schemaRead(result: StandardSchemaV1Result<unknown>): Read {
  if (result.issues === undefined) return { value: result.value };
  const said = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((p) =>
      typeof p === "object" && p !== null ? String(p.key) : String(p)
    ).join(".");
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
  return {
    by: "schema",
    refused: new RecordRefusedError(`the value was refused by its schema: ${said.join("; ")}`),
  };
}

/**
 * What a lane of `call`'s listener does with the records it takes: within a CONSUMER span (the
 * first record's, its trace the one its producer sent), where the app has OpenTelemetry.
 */
export function recordWork(call: ListenerCall): LaneWork {
  const work = methodWork(call);
  const { telemetry } = call.host;
  if (telemetry === undefined) return work;
  return (records, lane) => {
    const [{ topic, partition, offset, raw }] = records;
    const view = { topic, partition, offset, headers: raw.headers };
    return telemetry.process(call.groupId, view, () => work(records, lane));
  };
}

/**
 * The method's work, and what follows a DLT that could not be written: as Spring's error handler
 * after its recoverer failed, the records go through the method again (a record is never skipped,
 * never committed before it succeeded or reached the DLT), after a wait that grows from 1 s to
 * 30 s; the partition waits.
 */
function methodWork(call: ListenerCall): LaneWork {
  const { where, host: { logger } } = call;
  const once = methodWorkOnce(call);
  return async (records, lane) => {
    for (let round = 0;; round++) {
      const outcome = await once(records, lane);
      if (typeof outcome === "string") return outcome;
      const ms = DEAD_LETTER_BACKOFF.delayOf(round + 1);
      const { failed } = outcome;
      logger.error(
        `${where}: sending ${failed.length === 1 ? "a record" : `${failed.length} records`} ` +
          `of ${place(failed[0])} to ${deadLetterTopic(loggableText(lane.topic))} failed; not ` +
          `committed, it goes through ${where} again in ${ms} ms (the partition waits)`,
        loggable(outcome.error),
      );
      if (!await laneWait(lane, ms)) return "abandoned";
    }
  };
}

function methodWorkOnce(
  call: ListenerCall,
): (records: readonly KafkaRecord[], lane: PartitionLane) => Promise<Outcome | DeadLetterFailure> {
  const { where, mark, host: { logger }, invoke } = call;
  const warn = (logger.warn ?? logger.error).bind(logger);
  return async (records, lane) => {
    // A dead letter is never sent on to a DLT of its own: records reach a DLT because they could
    // not be read or handled, and a listener of it must see each, whatever its value.
    const dead = isDeadLetterTopic(lane.topic);
    const values: unknown[] = [];
    const accepted: KafkaRecord[] = [];
    const refused: { record: KafkaRecord; error: unknown }[] = [];
    for (const record of records) {
      const pending = valueOf(call, record);
      const read = pending instanceof Promise ? await pending : pending;
      if ("refused" in read && dead) {
        values.push(record.raw.value ?? null);
        accepted.push(record);
      } else if ("refused" in read) {
        // The log says which check refused it, never the issues: they may quote the value.
        warn(
          `${where}: the value of ${place(record)} was refused (${read.by}); it goes to ${
            deadLetterTopic(loggableText(record.topic))
          }`,
        );
        refused.push({ record, error: read.refused });
      } else {
        values.push(read.value);
        accepted.push(record);
      }
    }
    if (refused.length > 0) {
      const sent = await sendDeadLetters(call, refused);
      if (sent !== "done") return sent;
    }
    if (accepted.length === 0) return "done";
    const { attempts } = mark.retry;
    const what = mark.batch
      ? `a batch of ${accepted.length} from ${place(accepted[0])}`
      : place(accepted[0]);
    for (let attempt = 1;; attempt++) {
      try {
        await (mark.batch ? invoke(values, accepted) : invoke(values[0], accepted[0]));
        return "done";
      } catch (error) {
        const last = attempt >= attempts || !retries(mark.retry, error);
        // An error the rules do not retry says so, rather than an attempt count it did not reach.
        const tried = attempt >= attempts
          ? `attempt ${attempt} of ${attempts}`
          : `attempt ${attempt} of ${attempts}, not retried: its retry's rules exclude it`;
        if (last && dead) {
          logger.error(
            `${where} failed on ${what} (${tried}); a dead letter goes ` +
              "to no other DLT: it is committed, and the partition moves on",
            loggable(error),
          );
          return "done";
        }
        if (last) {
          logger.error(
            `${where} failed on ${what} (${tried}); it goes to ` +
              `${deadLetterTopic(loggableText(lane.topic))}`,
            loggable(error),
          );
          return await sendDeadLetters(call, accepted.map((record) => ({ record, error })));
        }
        const ms = mark.retry.backoff.delayOf(attempt);
        warn(
          `${where} failed on ${what} (attempt ${attempt} of ${attempts}); trying again in ${ms} ms`,
          loggable(error),
        );
        if (!await laneWait(lane, ms)) return "abandoned";
      }
    }
  };
}
