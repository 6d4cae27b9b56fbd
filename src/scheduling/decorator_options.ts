// The options of a scheduling decorator (`@Scheduled`, `@SchedulerLock`) as it is written: their
// shape checked at once, so that a typo fails where it stands; their values (`${key}` of the
// configuration, durations) read at `bootstrap`, by read_job.ts.
import { checkOptionsObject } from "../options_object.ts";
import { DURATION_FORMS } from "../config/duration.ts";
import { shownValue } from "../shown_value.ts";

/** One decorator's options, checked to be an object of its keys; `fail` names them. */
export class DecoratorOptions {
  /** The options as given. */
  readonly given: Readonly<Record<string, unknown>>;
  readonly #decorator: string;

  constructor(decorator: string, options: unknown, keys: readonly string[], hint: string) {
    checkOptionsObject(options, decorator, keys, { hint });
    this.given = options;
    this.#decorator = decorator;
  }

  /** Throws the `TypeError` saying `why`, after the decorator and its options. */
  fail(why: string): never {
    throw new TypeError(`${this.#decorator}(${shownValue(this.given)}): ${why}`);
  }

  /** Fails on one of `keys` given as what no duration can be (a number or text). */
  durations(keys: readonly string[]): void {
    for (const key of keys) {
      const value = this.given[key];
      if (value !== undefined && typeof value !== "number" && typeof value !== "string") {
        this.fail(`${key}: give ${DURATION_FORMS}, got ${shownValue(value)}`);
      }
    }
  }
}
