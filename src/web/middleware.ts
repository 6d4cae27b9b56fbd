import type { Context, MiddlewareHandler, Next } from "hono";
import type { Class } from "../context/class.ts";
import { DefinitionError } from "../context/errors.ts";
import { isResponse, sendableResponse } from "../http/response_headers.ts";
import { answerWatchers } from "./answer_sent.ts";
import { withDefaultHeaders } from "./default_headers.ts";
import { headAnswer, toResponse } from "./return_value.ts";
import type { ErrorResponder } from "./error_responder.ts";
import { type MiddlewareEntry, ownControllerRecord } from "./route_record.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import type { DescribedRoute, MiddlewareDocs } from "../openapi/api_docs.ts";

/**
 * A middleware bean: a class the container builds, so that it can use `@Autowired` beans (an auth
 * guard reading a token store). `handle` runs as a Hono middleware does: it may answer early by
 * returning a response without calling `next`, or change the answer after `await next()`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/middleware.md#middleware
 */
export interface Middleware {
  /** Runs around the rest of the chain: answer early, or `await next()` and change the answer. */
  handle(c: Context, next: Next): Promise<Response | void>;
  /**
   * What the OpenAPI document says of each route this runs around: the security scheme it
   * reads, and the answers it gives (a guard's 401 and 403). Asked only when a document is
   * built; `undefined` for a route it lets through. A middleware function may carry the same
   * `describe` as a property.
   */
  describe?(route: DescribedRoute): MiddlewareDocs | undefined;
}

/** What `@UseMiddleware` and `bootstrap({ middleware })` take: a Hono middleware or a bean class. */
export type MiddlewareItem = MiddlewareHandler | Class<Middleware>;

/** `@UseMiddleware`: a class decorator for a controller, or a method decorator for a mapping. */
export type UseMiddlewareDecorator = (
  value: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

/**
 * Runs middleware around the routes of a controller (on the class) or of one mapped method. An
 * item is a Hono `MiddlewareHandler` (`cors()`, `bearerAuth(...)`, or your own function) or a
 * bean class implementing {@linkcode Middleware}, which the container builds. The order: the
 * `bootstrap({ middleware })` list, then the class's items as written (top to bottom), then the
 * method's. A bean class that is not registered is a startup error naming the route.
 *
 * @param items Hono middleware functions and `Middleware` bean classes, outermost first
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/middleware.md#usemiddleware
 */
export function UseMiddleware(...items: MiddlewareItem[]): UseMiddlewareDecorator {
  if (items.length === 0) throw new TypeError("@UseMiddleware needs at least one middleware");
  items.forEach((item, i) => {
    if (typeof item !== "function") {
      throw new TypeError(
        `@UseMiddleware: item ${i + 1} is a ${item === null ? "null" : typeof item}, not a ` +
          "middleware function or a Middleware bean class",
      );
    }
  });
  const given = [...items] as MiddlewareEntry[];
  return (_value, context) => {
    checkDecoratorCall("@UseMiddleware", _value, context);
    const record = ownControllerRecord(context.metadata);
    // Decorators apply bottom-up: each one goes in front, so that the list reads as written.
    if (context.kind === "class") record.middleware.unshift(...given);
    else if (context.kind === "method" && !context.static) {
      const name = String(context.name);
      record.methodMiddleware.set(name, [...given, ...(record.methodMiddleware.get(name) ?? [])]);
    } else {
      throw new TypeError(
        `@UseMiddleware on ${String(context.name)}: it decorates a controller class or an ` +
          "instance method with a mapping",
      );
    }
  };
}

// A class, not a function: calling it as a middleware would fail on every request. A class
// compiled down to a function still shows itself by the `handle` on its prototype.
export function isMiddlewareClass(item: MiddlewareEntry): item is Class {
  return /^class\b/.test(Function.prototype.toString.call(item)) ||
    typeof (item.prototype as Partial<Middleware> | undefined)?.handle === "function";
}

/** How a middleware item is named in errors: its class's or function's name. */
export function middlewareName(item: MiddlewareEntry): string {
  return item.name === "" ? "an anonymous function" : item.name;
}

/**
 * A middleware item as the Hono handler that runs it: a bean class's `handle`, bound to the bean
 * `beanOf` gives, or the function as it is. `where` names the route or option for an error.
 */
export function resolveMiddleware(
  item: MiddlewareEntry,
  beanOf: (type: Class) => unknown,
  where: string,
): MiddlewareHandler {
  if (!isMiddlewareClass(item)) return item as MiddlewareHandler;
  if (typeof (item.prototype as Partial<Middleware>).handle !== "function") {
    throw new DefinitionError(
      `${where}: middleware class ${middlewareName(item)} has no handle(c, next) method`,
    );
  }
  let bean: unknown;
  try {
    bean = beanOf(item);
  } catch {
    throw new DefinitionError(
      `${where}: middleware ${
        middlewareName(item)
      } is not a registered bean; mark it @Component() ` +
        "and list it in components (or scan its directory)",
    );
  }
  const handle = (bean as Middleware).handle;
  return (c, next) => handle.call(bean, c, next);
}

// The headers middleware set before the route answered, by request: an error thrown after `next()`
// keeps them (CORS, so that a browser can read the error) and drops the route's own.
const defaultsOf = new WeakMap<Context, Headers>();

// The answers a route made with those headers in (see `answerWithDefaults`): taken as they are.
const madeWithDefaults = new WeakSet<Response>();

/**
 * A route's return value as its answer where middleware runs around it: made with the headers
 * middleware set before `next()` in, as {@linkcode withDefaultHeaders} adds them, rather than
 * copied with them after. `status`: the route's `@ResponseStatus`.
 */
export function answerWithDefaults(c: Context, value: unknown, status?: number): Response {
  const answer = toResponse(value, c.res.headers, status);
  madeWithDefaults.add(answer);
  return answer;
}

/**
 * A route's answer (or Thaw's 404, 405, `OPTIONS`) where middleware runs around it: set on the
 * context with the headers middleware set before `next()` as defaults (see
 * {@linkcode withDefaultHeaders}), rather than by Hono's merge, in which they would win.
 */
export function adoptAnswer(handler: (c: Context) => Response | Promise<Response>) {
  const adopt = (c: Context, answer: Response): Response => {
    // The placeholder Hono makes holds what `c.header()` set before `next()`.
    const defaults = c.res.headers;
    defaultsOf.set(c, defaults);
    return setAnswer(
      c,
      madeWithDefaults.delete(answer) ? answer : withDefaultHeaders(answer, defaults),
    );
  };
  return (c: Context): Response | Promise<Response> => {
    const answer = handler(c);
    return answer instanceof Promise ? answer.then((a) => adopt(c, a)) : adopt(c, answer);
  };
}

/**
 * The headers middleware set before the route ran, for an error's answer: kept aside once the route
 * answered (see {@linkcode adoptAnswer}), else on the placeholder Hono makes.
 */
export function headersBeforeRoute(c: Context): Headers | undefined {
  return c.finalized ? defaultsOf.get(c) : c.res.headers;
}

/**
 * Runs a middleware so that whatever it throws, or answers with that is not a `Response`, becomes
 * the answer `errors` makes (an exception handler's or the errorController's) rather than escaping
 * to Hono, which drops any thrown value that is not an `Error`. The error's answer keeps the
 * headers middleware set before the route ran, never the route's own.
 */
export function guardMiddleware(
  middleware: MiddlewareHandler,
  errors: ErrorResponder,
  route: string | undefined,
  name: string,
): MiddlewareHandler {
  const fail = async (error: unknown, c: Context): Promise<Response> => {
    const response = await errors(error, c, undefined, route);
    // Thrown after `next()`: the route's answer is set, and what middleware set before it is
    // kept aside; before: the placeholder holds it.
    const defaults = headersBeforeRoute(c);
    return setAnswer(c, defaults === undefined ? response : withDefaultHeaders(response, defaults));
  };
  // `return next()` answers with the context, as Hono's own middleware does: nothing to set.
  const checked = (c: Context, value: unknown): Response | void | Promise<Response> => {
    if (value === undefined || value === c) return undefined;
    if (typeof value === "object" && value !== null && isResponse(value)) {
      // Returned after `next()`: Hono keeps the answer already set, and so does Thaw.
      return c.finalized ? value : earlyAnswer(c, value);
    }
    const why = `Middleware ${name} answered with a ${kindOf(value)}, not a Response`;
    return fail(new TypeError(why), c);
  };
  return async (c, next) => {
    let value: unknown;
    try {
      value = await middleware(c, next);
    } catch (error) {
      return fail(error, c);
    }
    return checked(c, value);
  };
}

/**
 * A middleware's early answer (a guard's 401), set on the context with the headers the middleware
 * before it set as defaults, as a route's answer is (see {@linkcode withDefaultHeaders}). Left to
 * Hono, a `new Response` would lose what `c.header()` set ahead of `next()` while no `c.res` had
 * been made yet (Hono merges only with a `c.res`), and otherwise have its own values replaced.
 */
export function earlyAnswer(c: Context, answer: Response): Response {
  // The placeholder Hono makes holds what `c.header()` set before `next()`.
  return setAnswer(c, withDefaultHeaders(answer, withoutCookiesOf(c.res.headers, answer)));
}

/**
 * Sets `answer` on the context as it is: Hono's `c.res` setter copies a new answer with the
 * headers of the one it replaces over its own, unless `c.res` is cleared first.
 */
export function setAnswer(c: Context, answer: Response): Response {
  c.res = undefined;
  c.res = answer;
  return answer;
}

// `c.text()` and `c.json()` make their answer with those defaults in already: their cookies are not
// added twice.
function withoutCookiesOf(defaults: Headers, answer: Response): Headers {
  if (!defaults.has("set-cookie")) return defaults;
  const own = new Set(answer.headers.getSetCookie());
  const left = new Headers();
  defaults.forEach((value, name) => {
    if (name !== "set-cookie" || !own.has(value)) left.append(name, value);
  });
  return left;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return Object.getPrototypeOf(value)?.constructor?.name ?? "object";
}

/**
 * The outermost middleware wherever there is middleware: what the chain made of the route's answer
 * is held to what the route's own answer is held to (a `Response`, a header value HTTP allows, a
 * status from 200 to 599, no framing headers), since middleware may echo a client's text into a
 * header and Deno would end the process on it. What fails becomes the answer `errors` makes.
 */
export function sendableAnswer(
  errors: ErrorResponder,
  route: string | undefined,
): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const answer: unknown = c.res;
    let sendable: Response;
    try {
      if (typeof answer !== "object" || answer === null || !isResponse(answer)) {
        throw new TypeError(`Middleware left a ${kindOf(answer)} as the answer, not a Response`);
      }
      sendable = sendableResponse(answer);
      // The route kept a HEAD answer's body for the middleware; it goes no further.
      if (c.req.method === "HEAD" && sendable.body !== null) sendable = headAnswer(sendable);
    } catch (error) {
      sendable = await errors(error, c, undefined, route);
    }
    if (sendable !== answer) setAnswer(c, sendable);
    answerWatchers.get(c.req.raw)?.(sendable);
  };
}

/**
 * Middleware items as the handlers that run them, each guarded, behind {@linkcode sendableAnswer}
 * unless global middleware checks every answer already (`answersChecked`). `route` is the route's
 * label, `where` names an item in the errors of {@linkcode resolveMiddleware}.
 */
export function guardedChain(
  items: readonly MiddlewareEntry[],
  beanOf: (type: Class) => unknown,
  errors: ErrorResponder,
  route: string | undefined,
  where: (index: number) => string,
  answersChecked = false,
): MiddlewareHandler[] {
  const chain = items.map((item, i) =>
    guardMiddleware(resolveMiddleware(item, beanOf, where(i)), errors, route, middlewareName(item))
  );
  if (chain.length > 0 && !answersChecked) chain.unshift(sendableAnswer(errors, route));
  return chain;
}
