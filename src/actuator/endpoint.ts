// The decorators of an app's own actuator endpoint, Spring Boot's `@Endpoint`, `@ReadOperation`,
// `@WriteOperation`, `@DeleteOperation` and `@Selector`. They only record: the endpoint is made
// of the bean by the actuator, with the code `@Endpoint` leaves in the class's metadata, so that
// an app without an endpoint of its own carries none of it.
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { type BeanClassDecorator, stereotype } from "../context/stereotypes.ts";
import { checkOptionsObject } from "../options_object.ts";
import { type OperationKind, ownEndpointRecord, type QueryParameter } from "./endpoint_records.ts";
import { OWN_ENDPOINTS, type OwnEndpoints } from "./endpoint_hooks.ts";
import { appEndpoints } from "./app_endpoints.ts";

/** What an operation's decorator and `@Selector` return: a decorator for an instance method. */
export type OperationDecorator = (
  value: (...args: never[]) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

/**
 * Registers a bean (listed in `components` or found by scanning) that the actuator serves as its
 * endpoint `id`, at `{base}/{id}` (`/actuator/features`), exposed as Thaw's own endpoints are,
 * by `management.endpoints.web.exposure.include` (`*`, or the id), and behind the same guards.
 * Its methods marked `@ReadOperation()`, `@WriteOperation()` and `@DeleteOperation()` answer
 * `GET`, `POST` and `DELETE`; `@Selector(...)` adds path segments. The id is lowercase letters
 * and digits, starting with a letter; an id that is not, or that is taken by Thaw's endpoints or
 * another bean's, stops `bootstrap` naming the bean.
 *
 * @param id the endpoint's id, its path segment and its name in `exposure.include`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Endpoint } from "@thaw/thaw/actuator";
 *
 * // A standard decorator, written above the class (docs/observability.md has a whole app).
 * const decorate = Endpoint("features");
 * assert.throws(() => decorate(class Features {}, undefined as never), /legacy decorator/);
 * assert.throws(() => Endpoint(7 as never), /the id is text/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#an-apps-own-endpoints
 */
export function Endpoint(id: string): BeanClassDecorator {
  if (typeof id !== "string") {
    throw new TypeError(
      `@Endpoint: the id is text (lowercase letters and digits), got ${typeof id}`,
    );
  }
  const register = stereotype("component", undefined, "Endpoint");
  return (value, context) => {
    register(value, context);
    ownEndpointRecord(context.metadata).id = id;
    (context.metadata as Record<symbol, unknown>)[OWN_ENDPOINTS] =
      appEndpoints satisfies OwnEndpoints;
  };
}

/** What `@ReadOperation` and `@DeleteOperation` take. */
export interface OperationOptions {
  /**
   * The query parameters the method is given after its `@Selector` values, in order, Spring
   * Boot's way: each as its decoded text (the first, when the query repeats it). Missing, a
   * parameter is a 400; one whose name ends with `?` (`"since?"`) is `undefined` instead.
   */
  readonly query?: readonly string[] | undefined;
}

function operation(
  kind: OperationKind,
  decorator: string,
  options?: OperationOptions,
): OperationDecorator {
  const query = options === undefined ? [] : queryOf(`@${decorator}`, options);
  return (value, context) => {
    checkDecoratorCall(`@${decorator}`, value, context);
    if (context.kind !== "method" || context.static || typeof context.name !== "string") {
      throw new TypeError(`@${decorator} decorates the instance methods of an @Endpoint class`);
    }
    ownEndpointRecord(context.metadata).operations.push({ kind, methodName: context.name, query });
  };
}

function queryOf(decorator: string, options: OperationOptions): QueryParameter[] {
  const given: unknown = options;
  checkOptionsObject(given, decorator, ["query"]);
  const names = given.query;
  if (names === undefined) return [];
  const where = `${decorator}({ query })`;
  if (!Array.isArray(names)) {
    throw new TypeError(`${where}: give a list of the query parameters' names`);
  }
  const query: QueryParameter[] = [];
  for (const written of names) {
    const name = typeof written === "string" ? written.replace(/\?$/, "") : written;
    if (typeof name !== "string" || !SELECTOR.test(name)) {
      throw new TypeError(
        `${where}: ${JSON.stringify(written)} is no name; a query parameter is letters, digits ` +
          "and _, with ? after it when it may be missing",
      );
    }
    if (query.some((q) => q.name === name)) {
      throw new TypeError(`${where}: ${JSON.stringify(name)} is named twice`);
    }
    query.push({ name, required: name === written });
  }
  return query;
}

/**
 * Marks a method of an {@linkcode Endpoint} class as its read: `GET {base}/{id}`, with one path
 * segment more for each of its `@Selector` names, given to the method in order, then the query
 * parameters `options.query` names. Its value is the JSON answer (an iterable's items as an array,
 * at most 10,000 of them; bytes as `application/octet-stream`; a `Response` as it is); `undefined`
 * or `null` is a 404, as in Spring Boot. A method taking more parameters than these give stops
 * `bootstrap`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReadOperation } from "@thaw/thaw/actuator";
 *
 * // A standard decorator, written above the method (docs/observability.md has a whole app).
 * assert.throws(() => ReadOperation()(() => 1, "list" as never), /legacy decorator/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#an-apps-own-endpoints
 */
export function ReadOperation(options?: OperationOptions): OperationDecorator {
  return operation("read", "ReadOperation", options);
}

/**
 * Marks a method of an {@linkcode Endpoint} class as a write: `POST {base}/{id}` (and a segment
 * for each `@Selector`), taking a JSON object (or no body: `{}`), given to the method after the
 * selectors' values. Its value is the answer, as a read's; `undefined` or `null` is a 204.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WriteOperation } from "@thaw/thaw/actuator";
 *
 * // A standard decorator, written above the method (docs/observability.md has a whole app).
 * assert.throws(() => WriteOperation()(() => 1, "set" as never), /legacy decorator/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#an-apps-own-endpoints
 */
export function WriteOperation(): OperationDecorator {
  return operation("write", "WriteOperation");
}

/**
 * Marks a method of an {@linkcode Endpoint} class as a delete: `DELETE {base}/{id}` (and a
 * segment for each `@Selector`, whose values it is given, then the query parameters
 * `options.query` names, as a read's). Its value is the answer, as a read's; `undefined` or
 * `null` is a 204.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DeleteOperation } from "@thaw/thaw/actuator";
 *
 * // A standard decorator, written above the method (docs/observability.md has a whole app).
 * assert.throws(() => DeleteOperation()(() => 1, "drop" as never), /legacy decorator/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#an-apps-own-endpoints
 */
export function DeleteOperation(options?: OperationOptions): OperationDecorator {
  return operation("delete", "DeleteOperation", options);
}

/** A selector's name: the path variable's, as a path template writes it. */
const SELECTOR = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names the path segments an operation of an {@linkcode Endpoint} class takes after its id, in
 * order (Spring Boot's `@Selector` on parameters): `@Selector("name")` on a read makes it
 * `GET {base}/{id}/{name}`, and the method is called with the segment's decoded text.
 *
 * @param names the segments' names, letters, digits and `_`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Selector } from "@thaw/thaw/actuator";
 *
 * assert.throws(() => Selector(), /names one path segment or more/);
 * assert.throws(() => Selector("a b"), /"a b" is no name/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#an-apps-own-endpoints
 */
export function Selector(...names: string[]): OperationDecorator {
  if (names.length === 0) throw new TypeError("@Selector names one path segment or more");
  for (const name of names) {
    if (typeof name !== "string" || !SELECTOR.test(name)) {
      throw new TypeError(
        `@Selector: ${JSON.stringify(name)} is no name; a selector is letters, digits and _`,
      );
    }
  }
  return (value, context) => {
    checkDecoratorCall("@Selector", value, context);
    if (context.kind !== "method" || context.static || typeof context.name !== "string") {
      throw new TypeError("@Selector decorates the instance methods of an @Endpoint class");
    }
    ownEndpointRecord(context.metadata).selectors.set(context.name, [...names]);
  };
}
