// When `@Retryable` and `@KafkaListener` try again (Spring Framework 7's RetryPolicy): how long
// they wait before each retry, and which errors they retry. Pure.
import { Backoff } from "../runtime/backoff.ts";

/** An error class, as `includes` and `excludes` name it. */
// deno-lint-ignore no-explicit-any
export type ErrorClass = abstract new (...args: any[]) => unknown;

/** Which errors are tried again: matched on the error, then on its chain of causes. */
export interface ErrorRules {
  /** Errors retried (any, when empty), unless a nearer rule of `excludes` says otherwise. */
  readonly includes: readonly ErrorClass[];
  /** Errors never retried, unless a nearer rule of `includes` says otherwise. */
  readonly excludes: readonly ErrorClass[];
}

/** `@Retryable`'s policy, its defaults filled in: Spring's names. */
export interface RetryPolicy extends ErrorRules {
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** The wait before each retry. */
  readonly backoff: Backoff;
}

/** Spring Framework 7's defaults: 3 retries, 1 s apart. */
export const RETRY_DEFAULTS: RetryPolicy = {
  maxRetries: 3,
  backoff: /* @__PURE__ */ new Backoff({ delay: 1000 }),
  includes: [],
  excludes: [],
};

/** The options that write {@linkcode ErrorRules}. */
export const ERROR_RULE_KEYS: readonly string[] = ["includes", "excludes"];

/** The rules `given` writes (none: any error is retried); a `TypeError` names `where`. */
export function readErrorRules(
  given: Readonly<Record<string, unknown>>,
  where: string,
): ErrorRules {
  const list = (key: "includes" | "excludes"): readonly ErrorClass[] => {
    const value = given[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((type) => typeof type !== "function")) {
      throw new TypeError(`${where}: ${key} is a list of error classes`);
    }
    return Object.freeze([...value]);
  };
  return { includes: list("includes"), excludes: list("excludes") };
}

// How deep a chain of causes is read: a cycle of causes ends here.
const MAX_CAUSES = 16;

/**
 * Whether `error` is retried: the error first, then its `cause`, then that one's (as Spring 7
 * matches the cause chain), the first that a rule names decides, and for each, the rule whose
 * class is nearest to its own (fewest steps up its prototype chain) wins; none matching: retried
 * when `includes` is empty.
 */
export function retries(policy: ErrorRules, error: unknown): boolean {
  if (policy.includes.length === 0 && policy.excludes.length === 0) return true;
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES; depth++) {
    if (typeof current !== "object" || current === null) break;
    const rule = ruleOf(policy, current);
    if (rule !== undefined) return rule;
    try {
      current = (current as { cause?: unknown }).cause;
    } catch {
      break;
    }
  }
  return policy.includes.length === 0;
}

// What the nearest rule says of `error`'s own class: retried, not, or nothing.
function ruleOf(policy: ErrorRules, error: object): boolean | undefined {
  for (let p = Object.getPrototypeOf(error); p !== null; p = Object.getPrototypeOf(p)) {
    const type = Object.hasOwn(p, "constructor") ? p.constructor : undefined;
    if (policy.excludes.includes(type)) return false;
    if (policy.includes.includes(type)) return true;
  }
  return undefined;
}
