// The decorator only records (health_beans.ts): bootstrap checks the app's indicators, and the
// checks run, the answers are built, only by the actuator, whose modules its own entry point brings.
import { type BeanClassDecorator, stereotype } from "../context/stereotypes.ts";
import { recordHealthIndicator } from "./health_beans.ts";

/**
 * What {@linkcode HealthCheck.check} may answer: nothing (`undefined`) for UP, a plain object for
 * UP with those details (JSON must be able to write them), `false` for DOWN. Anything else (a
 * number, a string, an array, a class instance) is answered DOWN with a reason naming it, as is a
 * check that throws or does not settle within `management.health.timeout`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#healthcheckanswer
 */
export type HealthCheckAnswer = { readonly [key: string]: unknown } | false | undefined | void;

/**
 * What a {@linkcode HealthIndicator} class implements: `check()`, sync or async, run at every
 * request to `/actuator/health`, all of an app's checks at once.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#healthcheck
 */
export interface HealthCheck {
  /** Reports this component: see {@linkcode HealthCheckAnswer}. */
  check(): HealthCheckAnswer | Promise<HealthCheckAnswer>;
}

/** Names are keys of the health body: kept to what a log, a URL or a YAML key holds as written. */
const NAME = /^[A-Za-z0-9_-]+$/;

/**
 * Registers a bean (listed in `components` or found by scanning) whose `check()` reports one
 * component of the app's health under `name`, at `GET /actuator/health` when the app serves health
 * (`bootstrap({ actuator: actuator() })`, health exposed). The name is letters, digits, `_`
 * and `-`; two indicators of one name, or an indicator without `check()`, fail `bootstrap`.
 *
 * @param name the component's name in the health answer
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#healthindicator
 */
export function HealthIndicator(name: string): BeanClassDecorator {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `@HealthIndicator: the name must be letters, digits, _ or -, got ${
        typeof name === "string" ? JSON.stringify(name) : typeof name
      }`,
    );
  }
  const register = stereotype("component", undefined, "HealthIndicator");
  return (value, context) => {
    register(value, context);
    recordHealthIndicator(context.metadata, name);
  };
}
