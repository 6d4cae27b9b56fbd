// One indicator's check, asked once: whatever it does (throws, hangs, answers something odd), the
// result is a component's health, so that one indicator can neither fail nor stall the probe.
import type { ComponentHealth, HealthDetails } from "./health.ts";
import { isPlainObject } from "../object_guards.ts";

const UP: ComponentHealth = { status: "UP" };
const DOWN: ComponentHealth = { status: "DOWN" };

function down(error: string): ComponentHealth {
  return { status: "DOWN", details: { error } };
}

/** The message of what a check threw; a value that cannot be shown as text is described. */
function thrownMessage(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "a thrown value that cannot be shown as text";
  }
}

/** A short description of an answer that is not one, for the reason a check is DOWN. */
function describe(answer: unknown): string {
  if (answer === null) return "null";
  switch (typeof answer) {
    case "string":
      return `a string (${
        JSON.stringify(answer.length > 40 ? `${answer.slice(0, 40)}...` : answer)
      })`;
    case "number":
    case "boolean":
      return String(answer);
    case "bigint":
      return `${answer}n`;
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
  }
  if (Array.isArray(answer)) return "an array";
  const name = (Object.getPrototypeOf(answer) as { constructor?: { name?: unknown } } | null)
    ?.constructor?.name;
  return typeof name === "string" && name !== "" ? `an instance of ${name}` : "an object";
}

/**
 * What an answer of `check()` means: nothing is UP, a plain object is UP with those details (as
 * JSON writes them, so the body shows what was written; none when it is empty), `false` is DOWN,
 * and anything else is DOWN with a reason naming what it was. Details JSON cannot write (a
 * `BigInt`, a cycle) are DOWN too: the indicator meant to say something, and it did not get out.
 */
export function answerHealth(answer: unknown): ComponentHealth {
  try {
    if (answer === undefined) return UP;
    if (answer === false) return DOWN;
    if (!isPlainObject(answer)) {
      return down(
        `check() answered ${describe(answer)}; answer nothing or a plain object for UP, ` +
          "false for DOWN",
      );
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(answer);
    } catch (error) {
      return down(`check() answered details that JSON cannot write: ${thrownMessage(error)}`);
    }
    // A `toJSON` of the object's own may write it as something else than an object.
    const details: unknown = text === undefined ? undefined : JSON.parse(text);
    if (!isPlainObject(details)) {
      return down(`check() answered details that JSON writes as ${text ?? "nothing"}`);
    }
    return Object.keys(details).length === 0
      ? UP
      : { status: "UP", details: details as HealthDetails };
  } catch (error) {
    // A proxy or getter that throws while the answer is looked at.
    return down(`check() answered a value that could not be read: ${thrownMessage(error)}`);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}

/**
 * Asks one check: a synchronous answer is taken as it is, a promise is given `timeout`
 * milliseconds, after which the component is DOWN (the check goes on; its late answer is
 * dropped). A throw or a rejection is DOWN with the error's message. `read` makes the answer a
 * component's health: {@linkcode answerHealth} for an app's check; Thaw's own answer one.
 */
export function runCheck(
  check: () => unknown,
  timeout: number,
  read: (answer: unknown) => ComponentHealth = answerHealth,
): ComponentHealth | Promise<ComponentHealth> {
  let answer: unknown;
  try {
    answer = check();
    if (!isThenable(answer)) return read(answer);
  } catch (error) {
    return down(thrownMessage(error));
  }
  const pending = answer;
  return new Promise<ComponentHealth>((resolve) => {
    const timer = setTimeout(
      () => resolve(down(`check() did not answer within ${timeout} ms`)),
      timeout,
    );
    const settle = (health: ComponentHealth) => {
      clearTimeout(timer);
      resolve(health);
    };
    // Resolving a promise with the answer adopts any thenable, and turns a `then` that throws
    // (or a `constructor` getter that does, which `Promise.resolve` would read) into a rejection.
    new Promise((adopt) => adopt(pending)).then(
      (value) => settle(read(value)),
      (error) => settle(down(thrownMessage(error))),
    );
  });
}
