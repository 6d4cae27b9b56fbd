import { awaitedForm } from "../context/awaited_form.ts";
import type { Class } from "../context/class.ts";
import { DefinitionError } from "../context/errors.ts";
import type { HttpRequest } from "../http/http_request.ts";
import {
  type ErrorResponder,
  MethodNotAllowedException,
  requestLabel,
  requestOf,
} from "./error_responder.ts";
import { headAnswer, toResponse } from "./return_value.ts";
import { controllerRecordChain, type ExceptionHandlerRecord } from "./route_record.ts";
import { responseStatusOf } from "./response_status.ts";

/** An `@ExceptionHandler` method bound to its bean. */
interface BoundHandler {
  /** `ApiErrors.outOfRange`, for errors and logs. */
  readonly label: string;
  readonly call: (error: unknown, request: HttpRequest) => unknown;
  /** Its `@ResponseStatus`. */
  readonly status?: number;
}

/**
 * The handlers of one scope (a controller's own, or every advice bean's), by the prototype of
 * the error class each takes: an error's handler is the first its prototype chain reaches.
 */
export type ExceptionScope = ReadonlyMap<object, BoundHandler>;

/** A bean whose `@ExceptionHandler` methods make, or add to, a scope. */
export interface HandlerBean {
  readonly type: Class;
  readonly instance: unknown;
}

/**
 * Collects the `@ExceptionHandler` methods of `beans` (and their superclasses; a subclass's
 * method of one name replaces its parent's) into one scope. Two handlers for one error class are
 * a `DefinitionError` naming both.
 */
export function exceptionScope(beans: readonly HandlerBean[]): ExceptionScope {
  const scope = new Map<object, BoundHandler>();
  for (const { type, instance } of beans) {
    const byName = new Map<string, ExceptionHandlerRecord[]>();
    for (const record of controllerRecordChain(type)) {
      const own = new Map<string, ExceptionHandlerRecord[]>();
      for (const h of record.exceptionHandlers) {
        own.set(h.methodName, [...(own.get(h.methodName) ?? []), h]);
      }
      for (const [name, handlers] of own) byName.set(name, handlers);
    }
    for (const handlers of byName.values()) {
      for (const record of handlers) {
        const label = `${type.name}.${record.methodName}`;
        if (record.isStatic) {
          throw new DefinitionError(`@ExceptionHandler on ${label}: it decorates instance methods`);
        }
        const method = awaitedForm(record.get(instance));
        if (typeof method !== "function") {
          throw new DefinitionError(`@ExceptionHandler on ${label}: it is not a method`);
        }
        const status = responseStatusOf(type, record.methodName);
        const bound: BoundHandler = {
          label,
          call: (error, request) => method.call(instance, error, request),
          ...(status === undefined ? {} : { status }),
        };
        for (const errorType of record.types) {
          const other = scope.get(errorType.prototype);
          if (other !== undefined && other.label !== label) {
            throw new DefinitionError(
              `Two exception handlers for ${errorType.name} in one scope: ${other.label} and ${label}`,
            );
          }
          scope.set(errorType.prototype, bound);
        }
      }
    }
  }
  return scope;
}

/** The handler `scope` has for `error`: that of the nearest class in its prototype chain. */
export function handlerFor(scope: ExceptionScope, error: unknown): BoundHandler | undefined {
  if (scope.size === 0) return undefined;
  if (error === null || (typeof error !== "object" && typeof error !== "function")) {
    return undefined;
  }
  try {
    for (let p = Object.getPrototypeOf(error); p !== null; p = Object.getPrototypeOf(p)) {
      const handler = scope.get(p);
      if (handler !== undefined) return handler;
    }
  } catch {
    // A proxy whose getPrototypeOf trap throws: no handler can claim it.
  }
  return undefined;
}

/**
 * An error path that offers an error to the controller's own handlers, then to the advice's, and
 * gives what neither takes (or what a handler throws) to `fallback`, the errorController's path.
 * With no handlers at all it is `fallback` itself: an app without them pays nothing.
 */
export function exceptionResolver(
  own: ExceptionScope,
  advice: ExceptionScope,
  fallback: ErrorResponder,
  maxBodySize: number,
): ErrorResponder {
  if (own.size === 0 && advice.size === 0) return fallback;
  return async (error, c, request, route) => {
    const handler = handlerFor(own, error) ?? handlerFor(advice, error);
    if (handler === undefined) return fallback(error, c, request, route);
    try {
      const req = request ?? requestOf(c, maxBodySize);
      const response = toResponse(await handler.call(error, req), undefined, handler.status);
      if (error instanceof MethodNotAllowedException && !response.headers.has("allow")) {
        response.headers.set("allow", error.allow); // a redirect's headers throw: the fallback
      }
      return c.req.method === "HEAD" ? headAnswer(response) : response;
    } catch (failure) {
      return fallback(failure, c, request, `${route ?? requestLabel(c)} (in ${handler.label})`);
    }
  };
}
