import type { Class } from "../context/class.ts";
import { entryChain, ownEntry } from "../context/class_record.ts";
import type { ParameterBinder } from "./binder.ts";
import type { MappedMethod } from "./route_table.ts";

/** A handler method and the route it serves, as its mapping decorator recorded it. */
export interface RouteRecord {
  readonly httpMethod: MappedMethod;
  readonly path: string;
  readonly binders: readonly ParameterBinder[];
  readonly methodName: string;
  readonly isStatic: boolean;
  readonly get: (instance: unknown) => unknown;
  /**
   * The media type of the answer when it is not the method's value as JSON: `@SseMapping`'s
   * event stream, `@WebSocketMapping`'s upgrade (101), which the OpenAPI document writes its
   * answer as.
   */
  readonly produces?: "text/event-stream" | "websocket";
}

/** An `@ExceptionHandler` method and the error classes it takes. */
export interface ExceptionHandlerRecord {
  readonly types: readonly Class[];
  readonly methodName: string;
  readonly isStatic: boolean;
  readonly get: (instance: unknown) => unknown;
}

/**
 * What `@UseMiddleware` gave, in the order written: a Hono middleware function or a bean class
 * with a `handle(c, next)` method.
 */
export type MiddlewareEntry = Class | ((...args: never[]) => unknown);

/** What the web layer's decorators say about one class (not its superclasses). */
export interface ControllerRecord {
  prefix?: string;
  readonly routes: RouteRecord[];
  /** `@UseMiddleware` on the class. */
  readonly middleware: MiddlewareEntry[];
  /** `@UseMiddleware` on methods, by method name. */
  readonly methodMiddleware: Map<string, MiddlewareEntry[]>;
  readonly exceptionHandlers: ExceptionHandlerRecord[];
  /** Whether the class is a `@ControllerAdvice`. */
  advice?: boolean;
}

// The web layer's own key in a class's decorator metadata; the container never reads it.
const ROUTES = Symbol("thaw.routes");

/** The web record of the class whose decorators receive `metadata`. */
export function ownControllerRecord(metadata: DecoratorMetadataObject): ControllerRecord {
  return ownEntry(metadata, ROUTES, () => ({
    routes: [],
    middleware: [],
    methodMiddleware: new Map(),
    exceptionHandlers: [],
  }));
}

/** The web records of a class and its superclasses, the most basic first. */
export function controllerRecordChain(cls: Class): ControllerRecord[] {
  return entryChain(cls, ROUTES);
}

/**
 * The record a compiled route's method comes from: the one in `type`'s chain (the subclass's
 * first) that maps `methodName` with these very `binders`, since a compiled route keeps its
 * record's array as it is.
 */
export function routeRecordOf(
  type: Class,
  methodName: string,
  binders: readonly ParameterBinder[],
): RouteRecord | undefined {
  for (const record of controllerRecordChain(type).reverse()) {
    const found = record.routes.find((r) => r.methodName === methodName && r.binders === binders);
    if (found !== undefined) return found;
  }
  return undefined;
}
