// What `JobQueue.enqueue` is given, checked before anything is written: the queue's name, the
// payload (JSON, and nothing JSON would change or lose) and the options. Pure: the time a `runAt`
// is measured from is given.
import { checkOptionsObject } from "../options_object.ts";
import { durationOption } from "../config/duration.ts";
import { shownValue } from "../shown_value.ts";
import { isPlainObject } from "../object_guards.ts";

/** How a job is enqueued. */
export interface EnqueueOptions {
  /** How long from now it is due: milliseconds or a duration (`"5m"`). Not with `runAt`. */
  readonly delay?: number | string | undefined;
  /** When it is due. Not with `delay`. */
  readonly runAt?: Date | undefined;
  /**
   * A unique key: while a job of the queue with this key is waiting or running, an enqueue with
   * it answers that job's id, `created: false`.
   */
  readonly key?: string | undefined;
  /** Higher first among the jobs due: an integer, 0 by default. */
  readonly priority?: number | undefined;
  /** How many runs in all, the first included: the handler's `attempts` unless given. */
  readonly attempts?: number | undefined;
}

/** An enqueue, checked: what the store writes. */
export interface CheckedEnqueue {
  readonly queue: string;
  /** The payload as JSON text. */
  readonly payload: string;
  /** From now, in milliseconds (0: due now; below 0, a `runAt` past, due since then). */
  readonly delayMs: number;
  readonly key: string | undefined;
  readonly priority: number;
  readonly attempts: number | undefined;
}

const OPTIONS = ["delay", "runAt", "key", "priority", "attempts"];

/** What a queue's name may be: what an SQS queue's name may be, with room for `-dead`. */
export const QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}$/;

/** The longest unique key, in characters. */
export const MAX_KEY_LENGTH = 255;

// A priority and attempts are stored as the databases' 32-bit integers.
const MAX_INT = 2 ** 31 - 1;

/** `queue` when it is a queue's name; a `TypeError` naming `where` otherwise. */
export function checkQueueName(queue: unknown, where: string): string {
  if (typeof queue !== "string" || !QUEUE_NAME.test(queue)) {
    throw new TypeError(
      `${where}: a queue's name is 1 to 75 letters, digits, _ and -, got ${shownValue(queue)}`,
    );
  }
  return queue;
}

/**
 * Checks an enqueue of `payload` on `queue` with `options`, `now` being the process's time in
 * milliseconds (what a `runAt` is measured from). Throws a `TypeError` naming the queue.
 */
export function checkEnqueue(
  queue: unknown,
  payload: unknown,
  options: unknown,
  now: number,
): CheckedEnqueue {
  const name = checkQueueName(queue, "JobQueue.enqueue(queue)");
  const where = `JobQueue.enqueue("${name}")`;
  const text = jsonOf(payload, where);
  const given: Record<string, unknown> = options === undefined ? {} : (() => {
    checkOptionsObject(options, where, OPTIONS);
    return options;
  })();
  if (given.delay !== undefined && given.runAt !== undefined) {
    throw new TypeError(`${where}: give delay or runAt, not both`);
  }
  let delayMs = 0;
  if (given.delay !== undefined) {
    delayMs = durationOption(given.delay, `${where}: delay`, { max: Number.MAX_SAFE_INTEGER });
  } else if (given.runAt !== undefined) {
    const at = given.runAt;
    if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
      throw new TypeError(`${where}: runAt is a valid Date, got ${shownValue(at)}`);
    }
    // A time past is kept as it is: among the jobs due, the earliest due runs first.
    delayMs = at.getTime() - now;
  }
  return {
    queue: name,
    payload: text,
    delayMs,
    key: given.key === undefined ? undefined : checkKey(given.key, where),
    priority: given.priority === undefined
      ? 0
      : integer(given.priority, `${where}: priority`, -MAX_INT, MAX_INT),
    attempts: given.attempts === undefined
      ? undefined
      : integer(given.attempts, `${where}: attempts`, 1, MAX_INT),
  };
}

/** An integer in [min, max]; a `TypeError` naming `where` otherwise. */
export function integer(value: unknown, where: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${where} is an integer from ${min} to ${max}, got ${shownValue(value)}`);
  }
  return value;
}

// A key is stored and compared as text: one a database would change (a lone surrogate, NUL) could
// match another's, or be refused by one database and taken by another.
function checkKey(key: unknown, where: string): string {
  if (
    typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH ||
    key.includes("\0") || LONE_SURROGATE.test(key)
  ) {
    throw new TypeError(
      `${where}: key is text of 1 to ${MAX_KEY_LENGTH} characters, without NUL or lone ` +
        `surrogates, got ${shownValue(key)}`,
    );
  }
  return key;
}

// With the u flag a surrogate pair is one code point: only a lone surrogate is of category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The JSON text of `payload`, which must be JSON as it is: `null`, booleans, finite numbers,
 * strings, arrays and plain objects, nested no deeper than the stack allows. What `JSON.stringify` would drop or change (`undefined`, a
 * function, a `Date`, `NaN`, a `Map`, a class instance) is refused, naming where it is, so that the
 * handler is given what the caller gave.
 */
export function jsonOf(payload: unknown, where: string): string {
  const seen = new Set<object>();
  const check = (value: unknown, path: string): void => {
    if (value === null || typeof value === "boolean" || typeof value === "string") return;
    if (typeof value === "number") {
      if (Number.isFinite(value)) return;
      throw refusal(path, `${value}, which JSON has no number for`);
    }
    if (typeof value !== "object") throw refusal(path, `${shownType(value)}, which is not JSON`);
    if (seen.has(value)) throw refusal(path, "the object it is inside (a cycle)");
    const array = Array.isArray(value);
    if (!array && !isPlainObject(value)) {
      throw refusal(path, `${shownType(value)}, which JSON would not give back as it is`);
    }
    seen.add(value);
    if (array) {
      for (let i = 0; i < value.length; i++) check(value[i], `${path}[${i}]`);
    } else {
      for (const [k, v] of Object.entries(value)) check(v, `${path}[${JSON.stringify(k)}]`);
    }
    seen.delete(value);
  };
  const refusal = (path: string, what: string) =>
    new TypeError(`${where}: the payload must be JSON: ${path} is ${what}`);
  try {
    check(payload, "payload");
  } catch (error) {
    // Past the stack's depth: no handler could be given it either.
    if (error instanceof RangeError) {
      throw new TypeError(`${where}: the payload is nested too deep to check (${error.message})`);
    }
    throw error;
  }
  return JSON.stringify(payload);
}

function shownType(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return "a bigint";
  if (typeof value === "symbol") return "a symbol";
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "an object";
}
