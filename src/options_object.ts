/**
 * The one check of an options argument: that it is an object (not `null`, not an array) and names
 * only keys the callee knows. Written once so every option bag in Thaw refuses the same things
 * with the same words, and a key a client or a file chose reaches the message escaped.
 *
 * @module
 */

/**
 * Throws a `TypeError` naming `where` unless `value` is an object, not an array, whose own keys
 * are all in `known`. An unknown key is quoted as JSON, so a control character or a quote in it
 * cannot break the message or a log line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkOptionsObject } from "./options_object.ts";
 *
 * const options: unknown = { retries: 2 };
 * checkOptionsObject(options, "@Retryable on Mailer.send", ["retries", "delay"]);
 * assert.equal(options.retries, 2);
 * assert.throws(
 *   () => checkOptionsObject({ retry: 2 }, "@Retryable on Mailer.send", ["retries", "delay"]),
 *   { message: '@Retryable on Mailer.send: unknown option "retry"; the options are retries, delay' },
 * );
 * assert.throws(
 *   () => checkOptionsObject(null, "search(options)", ["migrate"]),
 *   { message: "search(options): the options must be an object, got null" },
 * );
 * ```
 */
export function checkOptionsObject(
  value: unknown,
  where: string,
  known: readonly string[],
  refusal: OptionsRefusal = {},
): asserts value is Record<string, unknown> {
  const { error: Failure = TypeError, hint } = refusal;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Failure(
      `${where}: the options must be an object, got ${describe(value)}${
        hint === undefined ? "" : `; ${hint}`
      }`,
    );
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new Failure(
        `${where}: unknown option ${JSON.stringify(key)}; the options are ${known.join(", ")}`,
      );
    }
  }
}

/** How {@linkcode checkOptionsObject} refuses: a `TypeError` unless the callee throws another. */
export interface OptionsRefusal {
  /** The error thrown (a `ConfigError` where the callee's other refusals are). */
  readonly error?: (new (message: string) => Error) | undefined;
  /** Said after a value that is not an object: what to pass instead. */
  readonly hint?: string | undefined;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol" || typeof value === "bigint") return typeof value;
  return value === undefined ? "undefined" : JSON.stringify(value);
}
