// What `@JobHandler(queue, options)` is given, checked where the decorator is written: how many
// runs at once, how many in all, the wait between them, the lease, the payload's schema.
import { Backoff, BACKOFF_KEYS, readBackoff } from "../runtime/backoff.ts";
import { checkOptionsObject } from "../options_object.ts";
import { durationOption } from "../config/duration.ts";
import { isStandardSchema, type StandardSchemaV1 } from "../config/standard_schema.ts";
import { shownValue } from "../shown_value.ts";
import { integer } from "./enqueue_options.ts";

/** How a `@JobHandler` runs its queue's jobs. */
export interface JobHandlerOptions {
  /** How many of its jobs one process runs at once: 1 by default. */
  readonly concurrency?: number | undefined;
  /** How many runs a job gets in all, the first included: 3 by default. */
  readonly attempts?: number | undefined;
  /**
   * The wait before each run after a failed one: 1 s, doubling, at most 10 minutes by default
   * (`delay` and `maxDelay` in milliseconds or as durations).
   */
  readonly backoff?: {
    readonly delay?: number | string | undefined;
    readonly multiplier?: number | undefined;
    readonly maxDelay?: number | string | undefined;
    readonly jitter?: number | string | undefined;
  } | undefined;
  /**
   * The lease: how long a run may last (milliseconds or a duration, 5 minutes by default). A run
   * past it has its signal aborted, and its job is taken again, by this process or another.
   */
  readonly timeout?: number | string | undefined;
  /** A Standard Schema the payload must pass: a payload it refuses is dead at once, untried. */
  readonly schema?: StandardSchemaV1 | undefined;
}

/** The options, checked, with their defaults. */
export interface HandlerSettings {
  readonly concurrency: number;
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly timeoutMs: number;
  readonly schema: StandardSchemaV1 | undefined;
}

/** The wait between runs unless a handler says otherwise. */
export const DEFAULT_BACKOFF: Backoff = new Backoff({
  delay: 1000,
  multiplier: 2,
  maxDelay: 600_000,
});

/** The lease unless a handler says otherwise. */
export const DEFAULT_TIMEOUT_MS = 300_000;

const OPTIONS = ["concurrency", "attempts", "backoff", "timeout", "schema"];

/** Checks `@JobHandler` options (`where` names the handler); a wrong one throws a `TypeError`. */
export function handlerSettings(options: unknown, where: string): HandlerSettings {
  const given: Record<string, unknown> = options === undefined ? {} : (() => {
    checkOptionsObject(options, where, OPTIONS);
    return options;
  })();
  const { schema } = given;
  if (schema !== undefined && !isStandardSchema(schema)) {
    throw new TypeError(
      `${where}: schema is a Standard Schema (zod, valibot, arktype), got ${shownValue(schema)}`,
    );
  }
  let backoff = DEFAULT_BACKOFF;
  if (given.backoff !== undefined) {
    checkOptionsObject(given.backoff, `${where}: backoff`, BACKOFF_KEYS);
    backoff = readBackoff(given.backoff, `${where}: backoff`, DEFAULT_BACKOFF);
  }
  return {
    concurrency: given.concurrency === undefined
      ? 1
      : integer(given.concurrency, `${where}: concurrency`, 1, 1000),
    attempts: given.attempts === undefined
      ? 3
      : integer(given.attempts, `${where}: attempts`, 1, 2 ** 31 - 1),
    backoff,
    timeoutMs: given.timeout === undefined
      ? DEFAULT_TIMEOUT_MS
      : durationOption(given.timeout, `${where}: timeout`, { min: 1 }),
    schema,
  };
}
