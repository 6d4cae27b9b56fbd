import type { Class } from "../context/class_record.ts";
import { ownControllerRecord } from "./route_record.ts";
import { type BeanClassDecorator, stereotype } from "../context/stereotypes.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";

/** Options of {@linkcode RestController}. */
export interface RestControllerOptions {
  /** The bean name; defaults to the class name with a lower-case first letter. */
  readonly name?: string;
}

/**
 * Registers a class as a controller bean whose mapped methods serve HTTP requests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, GetMapping, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class HealthController {
 *   @GetMapping("/health")
 *   health() {
 *     return { up: true };
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [HealthController] });
 * const response = await app.fetch(new Request("http://localhost/health"));
 * assert.deepEqual(await response.json(), { up: true });
 * ```
 */
export function RestController(options: RestControllerOptions = {}): BeanClassDecorator {
  return stereotype("controller", options.name, "RestController");
}

/**
 * Prefixes every route of a class: `@RequestMapping("/users")` with `@GetMapping("/{id}")` serves
 * `/users/{id}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, GetMapping, RequestMapping, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * @RequestMapping("/api/v1")
 * class VersionController {
 *   @GetMapping("/version")
 *   version(): string {
 *     return "1.0.0";
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [VersionController] });
 * const response = await app.fetch(new Request("http://localhost/api/v1/version"));
 * assert.equal(await response.text(), "1.0.0");
 * assert.equal((await app.fetch(new Request("http://localhost/version"))).status, 404);
 * ```
 */
export function RequestMapping(prefix: string): BeanClassDecorator {
  if (typeof prefix !== "string") throw new TypeError("@RequestMapping takes a path prefix");
  return (_value: Class, context: ClassDecoratorContext): void => {
    checkDecoratorCall("@RequestMapping", _value, context);
    if (context.kind !== "class") throw new TypeError("@RequestMapping decorates classes only");
    ownControllerRecord(context.metadata).prefix = prefix;
  };
}
