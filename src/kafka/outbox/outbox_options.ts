// What an outbox is given, checked once and made whole: the table, how often and how much its
// relay sends, how it waits after failures, how long sent rows stay. Pure.
import { Backoff } from "../../runtime/backoff.ts";
import type { ContextLogger } from "../../context/class_record.ts";
import { checkOptionsObject } from "../../options_object.ts";
import type { RecordSender } from "../outgoing_record.ts";
import { checkTableName, DEFAULT_OUTBOX_TABLE } from "./outbox_table.ts";

/** The options of `Outbox`; every duration in milliseconds. */
export interface OutboxOptions {
  /** The outbox table: `thaw_outbox` by default. Its lock table is this name and `_lock`. */
  readonly table?: string | undefined;
  /** How often the relay looks for rows no commit of this process woke it for: 1,000 by default. */
  readonly pollIntervalMs?: number | undefined;
  /** Rows read and sent at a time: 100 by default. */
  readonly batchSize?: number | undefined;
  /**
   * How long a relay's lock lasts unless given back: 30,000 by default. A relay that dies holding
   * it blocks the others this long; a relay starts no batch past half of it, and gives it back.
   */
  readonly leaseMs?: number | undefined;
  /** The wait after a failed send or database call, doubled at each failure in a row: 100. */
  readonly retryDelayMs?: number | undefined;
  /** The longest wait between tries: 30,000 by default. */
  readonly maxRetryDelayMs?: number | undefined;
  /**
   * How long a send may take before it counts as failed and is tried again (the record may then
   * go twice): 10,000 by default. A producer that cannot reach the broker may never answer.
   */
  readonly sendTimeoutMs?: number | undefined;
  /** How long sent rows stay in the table (0: deleted once sent): one hour by default. */
  readonly retentionMs?: number | undefined;
  /** Where the relay's failures go: `console` by default. */
  readonly logger?: ContextLogger | undefined;
}

/** {@linkcode OutboxOptions} checked, each default in place. */
export interface OutboxSettings {
  readonly table: string;
  readonly pollIntervalMs: number;
  readonly batchSize: number;
  readonly leaseMs: number;
  /** The waits after failures in a row: `retryDelayMs` doubling up to `maxRetryDelayMs`. */
  readonly backoff: Backoff;
  readonly sendTimeoutMs: number;
  readonly retentionMs: number;
  readonly logger: ContextLogger;
}

/** What the outbox's errors and log lines call it. */
export const WHO = "Outbox";

const OPTIONS = [
  "table",
  "pollIntervalMs",
  "batchSize",
  "leaseMs",
  "retryDelayMs",
  "maxRetryDelayMs",
  "retentionMs",
  "sendTimeoutMs",
  "logger",
];

// The table's name and `_lock` stays within the 63 characters of a plain identifier.
const LONGEST_TABLE = 58;

/**
 * The table of an outbox given `options`, relaying through `sender`. Throws a `TypeError` for
 * options that are not an object, an unknown option, a sender with no `send` and a table name that
 * is not a plain identifier (or too long for its lock table's), in that order: the first checks of
 * the `Outbox` constructor, before its statements and its lock manager are made.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outboxTable } from "./outbox_options.ts";
 *
 * const sender = { send: () => Promise.resolve([]) };
 * assert.equal(outboxTable({}, sender), "thaw_outbox");
 * assert.throws(() => outboxTable({ tabel: "x" } as never, sender), TypeError);
 * ```
 */
export function outboxTable(options: OutboxOptions, sender: RecordSender): string {
  const given: unknown = options;
  checkOptionsObject(given, WHO, OPTIONS);
  if (typeof sender?.send !== "function") {
    throw new TypeError(`${WHO}: the sender has no send(records) method`);
  }
  const table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE, WHO);
  if (table.length > LONGEST_TABLE) {
    throw new TypeError(`${WHO}: table ${table} is longer than ${LONGEST_TABLE} characters`);
  }
  return table;
}

/**
 * The settings of an outbox on `table` (what {@linkcode outboxTable} answered) from `options`,
 * each default in place. Throws a `TypeError` naming the first number out of range.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outboxSettings } from "./outbox_options.ts";
 *
 * const settings = outboxSettings({ batchSize: 10 }, "thaw_outbox");
 * assert.equal(settings.batchSize, 10);
 * assert.equal(settings.pollIntervalMs, 1_000);
 * assert.throws(() => outboxSettings({ leaseMs: 0 }, "thaw_outbox"), TypeError);
 * ```
 */
export function outboxSettings(options: OutboxOptions, table: string): OutboxSettings {
  const pollIntervalMs = positive(options.pollIntervalMs, 1_000, "pollIntervalMs");
  const batchSize = positive(options.batchSize, 100, "batchSize");
  const leaseMs = positive(options.leaseMs, 30_000, "leaseMs");
  const backoff = new Backoff({
    delay: positive(options.retryDelayMs, 100, "retryDelayMs"),
    multiplier: 2,
    maxDelay: positive(options.maxRetryDelayMs, 30_000, "maxRetryDelayMs"),
  });
  return {
    table,
    pollIntervalMs,
    batchSize,
    leaseMs,
    backoff,
    retentionMs: positive(options.retentionMs, 3_600_000, "retentionMs", 0),
    sendTimeoutMs: positive(options.sendTimeoutMs, 10_000, "sendTimeoutMs"),
    logger: options.logger ?? console,
  };
}

// `value`, a whole number of `min` or more, or `fallback` when not given.
function positive(value: unknown, fallback: number, name: string, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(
      `${WHO}: ${name} must be a whole number of ${min} or more, not ${String(value)}`,
    );
  }
  return value;
}
