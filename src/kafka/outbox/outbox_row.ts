// A record as a row of the outbox table and back: the values the insert binds, and the record a
// row read back holds, its bytes whatever each driver hands them as. Pure.
import type { OutgoingRecord } from "../outgoing_record.ts";
import { decodeHeaders, encodeHeaders } from "./outbox_headers.ts";

/** A row read back, with the record it holds. */
export interface OutboxRow {
  /** The row's id, as the driver gives it: the order the relay sends in. */
  readonly id: unknown;
  readonly record: OutgoingRecord;
}

/**
 * Throws a `TypeError` naming `where` unless `record` is a serialized `OutgoingRecord`: a topic,
 * bytes (or nothing) for key and value, headers of a name and bytes, a partition that is a whole
 * number of 0 or more (or none).
 */
export function checkRecord(record: OutgoingRecord, where: string): void {
  const bytes = (v: unknown) => v === undefined || v instanceof Uint8Array;
  if (
    typeof record?.topic !== "string" || record.topic === "" || !bytes(record.key) ||
    !bytes(record.value) || !Array.isArray(record.headers) ||
    !record.headers.every((h) =>
      Array.isArray(h) && typeof h[0] === "string" && h[1] instanceof Uint8Array
    ) ||
    (record.partition !== undefined &&
      (!Number.isSafeInteger(record.partition) || record.partition < 0))
  ) {
    throw new TypeError(`${where}: the record is not a serialized OutgoingRecord`);
  }
}

/** The values the insert statement binds for `record`, in its columns' order. */
export function insertParameters(record: OutgoingRecord): unknown[] {
  return [
    record.topic,
    record.key ?? null,
    record.value ?? null,
    encodeHeaders(record.headers),
    record.partition ?? null,
  ];
}

/**
 * The record of a row the unsent statement read; a headers column that is not what the outbox
 * wrote throws, naming `where` (the outbox) and the row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { insertParameters, rowOf } from "./outbox_row.ts";
 *
 * const record = {
 *   topic: "orders",
 *   key: undefined,
 *   value: new Uint8Array([1, 2]),
 *   headers: [],
 *   partition: 3,
 * };
 * const [topic, record_key, record_value, headers, record_partition] = insertParameters(record);
 * const row = rowOf({ id: 1, topic, record_key, record_value, headers, record_partition }, "Outbox");
 * assert.deepEqual(row, { id: 1, record });
 * ```
 */
export function rowOf(row: Record<string, unknown>, where: string): OutboxRow {
  const partition = row.record_partition;
  return {
    id: row.id,
    record: {
      topic: String(row.topic),
      key: bytesOf(row.record_key),
      value: bytesOf(row.record_value),
      headers: decodeHeaders(
        bytesOf(row.headers) ?? new Uint8Array(),
        `${where}, row ${String(row.id)}`,
      ),
      partition: partition === null || partition === undefined ? undefined : Number(partition),
    },
  };
}

// A driver's bytes (a Buffer on Node's drivers, a Uint8Array on Deno's SQLite) as a Uint8Array.
function bytesOf(value: unknown): Uint8Array | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`outbox: a bytes column read back as ${typeof value}`);
}
