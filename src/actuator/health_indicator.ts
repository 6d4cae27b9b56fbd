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
 * @example A check that says why it is DOWN by throwing, and what it saw when UP
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, type HealthCheck, type HealthCheckAnswer, HealthIndicator } from "@thaw/thaw";
 * import { actuator } from "@thaw/thaw/actuator";
 *
 * let connections = 3;
 *
 * @HealthIndicator("pool")
 * class PoolHealth implements HealthCheck {
 *   check(): HealthCheckAnswer {
 *     if (connections === 0) throw new Error("no connection left");
 *     return { connections };
 *   }
 * }
 *
 * const app = await bootstrap({
 *   components: [PoolHealth],
 *   actuator: actuator({ health: { showDetails: "always" } }),
 * });
 * const up = await app.fetch(new Request("http://x/actuator/health"));
 * assert.deepEqual(await up.json(), {
 *   status: "UP",
 *   components: { pool: { status: "UP", details: { connections: 3 } } },
 * });
 * connections = 0;
 * const down = await app.fetch(new Request("http://x/actuator/health"));
 * assert.equal(down.status, 503);
 * assert.deepEqual(await down.json(), {
 *   status: "DOWN",
 *   components: { pool: { status: "DOWN", details: { error: "no connection left" } } },
 * });
 * ```
 */
export type HealthCheckAnswer = { readonly [key: string]: unknown } | false | undefined | void;

/**
 * What a {@linkcode HealthIndicator} class implements: `check()`, sync or async, run at every
 * request to `/actuator/health`, all of an app's checks at once.
 *
 * @example A check that uses an injected bean
 * ```ts
 * import assert from "node:assert/strict";
 * import { Autowired, bootstrap, Component, type HealthCheck, HealthIndicator } from "@thaw/thaw";
 * import { actuator } from "@thaw/thaw/actuator";
 *
 * @Component()
 * class Queue {
 *   backlog(): Promise<number> {
 *     return Promise.resolve(12);
 *   }
 * }
 *
 * @HealthIndicator("queue")
 * class QueueHealth implements HealthCheck {
 *   @Autowired(Queue)
 *   private queue!: Queue;
 *
 *   async check(): Promise<false | { backlog: number }> {
 *     const backlog = await this.queue.backlog();
 *     return backlog > 1000 ? false : { backlog };
 *   }
 * }
 *
 * const app = await bootstrap({ components: [Queue, QueueHealth], actuator: actuator() });
 * const response = await app.fetch(new Request("http://x/actuator/health"));
 * assert.equal(response.status, 200);
 * assert.deepEqual(await response.json(), { status: "UP" }); // details: showDetails "always"
 * ```
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
 * @example A database that answers, and one that does not
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, type HealthCheck, HealthIndicator } from "@thaw/thaw";
 * import { actuator } from "@thaw/thaw/actuator";
 *
 * @HealthIndicator("db")
 * class DatabaseHealth implements HealthCheck {
 *   check() {
 *     return { database: "SQLite" };
 *   }
 * }
 *
 * @HealthIndicator("search")
 * class SearchHealth implements HealthCheck {
 *   check(): false {
 *     return false;
 *   }
 * }
 *
 * const app = await bootstrap({ components: [DatabaseHealth, SearchHealth], actuator: actuator() });
 * const response = await app.fetch(new Request("http://x/actuator/health"));
 * assert.equal(response.status, 503);
 * assert.equal(response.headers.get("cache-control"), "no-store");
 * assert.deepEqual(await response.json(), { status: "DOWN" }); // details are never shown by default
 * const live = await app.fetch(new Request("http://x/actuator/health/liveness"));
 * assert.deepEqual(await live.json(), { status: "UP" });
 * ```
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
