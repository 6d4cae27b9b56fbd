// The bound of a send (`kafka.producer.delivery-timeout`) and the error its caller is given past
// it: the topics and keys named, so that a log line says which records went unacknowledged. Pure.
import { loggableText } from "../observe/loggable.ts";
import type { OutgoingRecord } from "./outgoing_record.ts";

/** The key that bounds a send, named by the error a send past it rejects with. */
export const DELIVERY_TIMEOUT_KEY = "kafka.producer.delivery-timeout";

/**
 * A send the broker did not acknowledge within `kafka.producer.delivery-timeout`: Java's
 * `TimeoutException`, named as the platform's timeouts are.
 */
export class DeliveryTimeoutError extends Error {
  override name = "TimeoutError";
}

/**
 * The rejection of a send of `records` past its bound of `ms`: the topics and (at most three)
 * keys named, the last try's failure (if one failed) as its cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deliveryTimeout } from "./delivery_timeout.ts";
 *
 * const record = {
 *   topic: "orders",
 *   key: new TextEncoder().encode("o-1"),
 *   value: undefined,
 *   headers: [],
 *   partition: undefined,
 * };
 * const error = deliveryTimeout([record], 500, undefined);
 * assert.equal(error.name, "TimeoutError");
 * assert.match(error.message, /^send\("orders"\) of key "o-1": no acknowledgement within 500 ms/);
 * ```
 */
export function deliveryTimeout(
  records: readonly OutgoingRecord[],
  ms: number,
  cause: unknown,
): DeliveryTimeoutError {
  const topics = [...new Set(records.map((r) => JSON.stringify(r.topic)))].join(", ");
  const keys = [...new Set(records.flatMap((r) => r.key === undefined ? [] : [keyText(r.key)]))];
  const shown = keys.length > 3 ? [...keys.slice(0, 3), `${keys.length - 3} more`] : keys;
  const of = shown.length === 0 ? "" : ` of key ${shown.join(", ")}`;
  return new DeliveryTimeoutError(
    `send(${topics})${of}: no acknowledgement within ${ms} ms ` +
      `(${DELIVERY_TIMEOUT_KEY}); the broker is out of reach or the partition has no leader`,
    cause === undefined ? undefined : { cause },
  );
}

// A record's key as an error names it: text as JSON, made safe to log, or its size in bytes.
function keyText(key: Uint8Array): string {
  try {
    return loggableText(JSON.stringify(new TextDecoder("utf-8", { fatal: true }).decode(key)))
      .slice(0, 200);
  } catch {
    return `(${key.byteLength} bytes)`;
  }
}
