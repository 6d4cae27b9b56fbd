// The streaming mappings (`@SseMapping`, `@WebSocketMapping`), which make their route's method
// themselves: the decorator they share, and what they say of their route in labels, metrics and
// logs (its whole path, and its template).
import type { Class } from "../context/class.ts";
import { methodGetter } from "../context/class_record.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { DefinitionError } from "../context/errors.ts";
import { bringFeature, type FeatureFactory } from "../app_feature.ts";
import type { ParameterBinder } from "./binder.ts";
import { joinPaths } from "./path_pattern.ts";
import { controllerRecordChain, ownControllerRecord, type RouteRecord } from "./route_record.ts";

/** What a streaming mapping declares, and how it makes its route's method. */
export interface OwnRoute {
  /** `@SseMapping`, for messages. */
  readonly decorator: string;
  readonly path: string;
  /** The method's own binders. */
  readonly binders: readonly ParameterBinder[];
  /** The binders the route resolves: the method's, and one more the made method takes last. */
  readonly resolved: readonly ParameterBinder[];
  readonly produces: NonNullable<RouteRecord["produces"]>;
  /** The feature the decorator brings (its settings, its shutdown). */
  readonly feature: FeatureFactory;
  /** `GET`, or `WebSocket`: what the label says before the path. */
  readonly labelled: string;
  /**
   * The route's method: called with the binders' values, the last one the mapping's own, for the
   * bean's `method`; `label` names it in errors, `route` is its template.
   */
  readonly make: (
    bean: object,
    method: (...args: unknown[]) => unknown,
    label: string,
    route: string,
  ) => (...args: unknown[]) => Promise<Response>;
}

/**
 * The decorator of a streaming mapping: a `GET` route on a method, whose method `own.make`
 * makes, checked to take no more arguments than its binders give.
 */
export function ownRouteDecorator(
  own: OwnRoute,
): (value: unknown, context: ClassMethodDecoratorContext) => void {
  const { decorator, path, binders } = own;
  return (value, context) => {
    checkDecoratorCall(decorator, value, context);
    if (context.kind !== "method") {
      throw new TypeError(`${decorator} on ${String(context.name)}: methods only`);
    }
    const methodName = String(context.name);
    const get = methodGetter(context);
    bringFeature(context.metadata, own.feature);
    ownControllerRecord(context.metadata).routes.push({
      httpMethod: "GET",
      path,
      binders: own.resolved,
      methodName,
      isStatic: context.static,
      produces: own.produces,
      get: (instance) => {
        const type = (instance as object).constructor as Class;
        const method = awaitedForm(get(instance));
        const where = `${type.name}.${methodName}`;
        if (typeof method !== "function") return method;
        if (method.length > binders.length) {
          throw new DefinitionError(
            `${where} (${decorator} "${path}"): the method takes ${method.length} argument(s) ` +
              `but ${binders.length} binder(s) are given; give a binder for each argument`,
          );
        }
        const full = declaredPath(type, path);
        return own.make(
          instance as object,
          method as (...args: unknown[]) => unknown,
          `${where} (${own.labelled} ${full})`,
          routeTemplate(full),
        );
      },
    });
  };
}

/** A mapping's whole path: its class's `@RequestMapping` prefix (the nearest in the chain) joined. */
export function declaredPath(type: Class, path: string): string {
  let prefix = "";
  for (const record of controllerRecordChain(type)) prefix = record.prefix ?? prefix;
  return joinPaths(prefix, path);
}

/**
 * A declared path as metrics and logs name its route, as the route compiler does: `/rooms/{id}`
 * for `/rooms/{id:\\d{1,3}}` (a regex's own braces one level deep, as the regex subset allows).
 */
export function routeTemplate(path: string): string {
  return path.replace(/\{(\*?[^{}:]+):(?:[^{}]|\{[^{}]*\})*\}/g, "{$1}");
}
