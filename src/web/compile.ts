import { type Context, Hono, type MiddlewareHandler, type Next } from "hono";
import { GUARD_HOST, type GuardHost } from "./guard_host.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import type { Class } from "../context/class.ts";
import { controllerRecordChain, type MiddlewareEntry, type RouteRecord } from "./route_record.ts";
import { exceptionResolver, type ExceptionScope, exceptionScope } from "./exception_resolver.ts";
import { adoptAnswer, guardedChain, middlewareName } from "./middleware.ts";
import { DefinitionError } from "../context/errors.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import type { ServerRequest } from "../http/server_request.ts";
import { compileArgument } from "./arguments.ts";
import type { ArgumentResolver } from "./argument_resolver.ts";
import { clip } from "./convert.ts";
import type { ParameterBinder } from "./binder.ts";
import { type ErrorResponder, type Logger, MethodNotAllowedException } from "./error_responder.ts";
import { compileHandler, type RouteHandler } from "./handler.ts";
import {
  joinPaths,
  mayHoldRegex,
  parsePathPattern,
  type PathPattern,
  type RegexParser,
} from "./path_pattern.ts";
import { type PathReader, pathReader } from "./path_variables.ts";
import { HttpRequest } from "../http/http_request.ts";
import { REFUSED_PATHS, requestPath, requestPathAllowingEncodedSlash } from "./request_path.ts";
import {
  IMPLEMENTED_METHODS,
  type MappedMethod,
  type RouteTable,
  routeTable,
} from "./route_table.ts";
import type { RouteMarks } from "../observe/request_observer.ts";
import { requestTimeout } from "./request_timeout.ts";
import { responseStatusOf } from "./response_status.ts";

/** A controller bean to compile. */
export interface ControllerBean {
  readonly type: Class;
  readonly instance: unknown;
}

/** A route ready for the router: its method, pattern, handler, and what declared it. */
export interface CompiledRoute {
  readonly httpMethod: MappedMethod;
  readonly pattern: PathPattern;
  /** `UserController.get (GET /users/{id})`, for errors and logs. */
  readonly label: string;
  readonly handler: RouteHandler;
  /** The controller method it calls; absent for a route the framework serves itself. */
  readonly method?: RouteMethod;
  /** Its class's then its method's `@UseMiddleware`, ready to run ahead of `handler`. */
  readonly middleware?: readonly MiddlewareHandler[];
  /** The names of that middleware, for the actuator's `mappings`. */
  readonly middlewareNames?: readonly string[];
  /** `public`: a route of Thaw's own that any caller may reach with security on (health). */
  readonly access?: "public";
}

/** The controller method behind a route, as its decorators declared it. */
export interface RouteMethod {
  readonly type: Class;
  readonly methodName: string;
  readonly binders: readonly ParameterBinder[];
  /** Its class's then its own `@UseMiddleware` items, in the order they run. */
  readonly middleware?: readonly MiddlewareEntry[];
  /** Its `@ResponseStatus`. */
  readonly status?: number;
}

/** A mapping and the `@UseMiddleware` items of its method, from the class that declared it. */
interface MappedRoute {
  readonly record: RouteRecord;
  readonly middleware: readonly MiddlewareEntry[];
}

/**
 * The routes of a class and its superclasses (a subclass's mapping of a method replaces its
 * parent's) and the class-level middleware, the most basic class's first.
 */
function routesOf(
  type: Class,
): { prefix: string; routes: MappedRoute[]; middleware: MiddlewareEntry[] } {
  let prefix = "";
  const byMethod = new Map<string, RouteRecord[]>();
  const middleware: MiddlewareEntry[] = [];
  // A method's middleware adds up along the chain, the parent's first, as the class's does: a
  // subclass that maps a method again keeps its parent's guard, and may add one to an inherited
  // mapping without mapping it again.
  const methodMiddleware = new Map<string, MiddlewareEntry[]>();
  for (const record of controllerRecordChain(type)) {
    if (record.prefix !== undefined) prefix = record.prefix;
    middleware.push(...record.middleware);
    for (const [name, items] of record.methodMiddleware) {
      methodMiddleware.set(name, [...(methodMiddleware.get(name) ?? []), ...items]);
    }
    const own = new Map<string, RouteRecord[]>();
    for (const route of record.routes) {
      own.set(route.methodName, [...(own.get(route.methodName) ?? []), route]);
    }
    for (const [name, routes] of own) byMethod.set(name, routes);
  }
  for (const name of methodMiddleware.keys()) {
    if (!byMethod.has(name)) {
      throw new DefinitionError(
        `${type.name}.${name}: @UseMiddleware on a method without a mapping would never run; ` +
          "give it to a mapped method or to the class",
      );
    }
  }
  const routes = [...byMethod.values()].flat().map((record) => ({
    record,
    middleware: methodMiddleware.get(record.methodName) ?? [],
  }));
  return { prefix, routes, middleware };
}

/** What every route is compiled with. */
export interface CompileOptions {
  /** Parses `{name:regex}` variables; loaded only when a path may hold one. */
  readonly parseRegex?: RegexParser | undefined;
  /** Where every failed request goes. */
  readonly errors: ErrorResponder;
  /** The largest request body in bytes. */
  readonly maxBodySize: number;
  /** How the body binding reads what the server parsed already. */
  readonly server: ServerRequest;
  /** The bean of a middleware class; throws when there is none. */
  readonly beanOf: (type: Class) => unknown;
  /** The `@ControllerAdvice` beans' exception handlers. */
  readonly advice: ExceptionScope;
  /** Whether global middleware checks every answer already (see `sendableAnswer`). */
  readonly answersChecked: boolean;
  /** The names of the global middleware, which runs before every route's own. */
  readonly globalMiddleware?: readonly string[];
  /** Takes `%2F` in a path (`bootstrap`'s `allowEncodedSlash`): a catch-all checks paths so. */
  readonly allowEncodedSlash?: boolean;
}

/** What a controller's routes share: its prefix, its middleware, its error path. */
interface ControllerScope {
  readonly prefix: string;
  readonly middleware: readonly MiddlewareEntry[];
  readonly errors: ErrorResponder;
}

function compileRoute(
  controller: ControllerBean,
  { record: route, middleware: methodMiddleware }: MappedRoute,
  scope: ControllerScope,
  options: CompileOptions,
): CompiledRoute {
  const { prefix } = scope;
  const where = `${controller.type.name}.${route.methodName}`;
  const fail = (why: string): never => {
    throw new DefinitionError(`${where} (@${route.httpMethod} "${route.path}"): ${why}`);
  };
  if (route.isStatic) fail("mappings decorate instance methods, not static ones");
  let pattern: PathPattern;
  try {
    pattern = parsePathPattern(joinPaths(prefix, route.path), options.parseRegex);
  } catch (error) {
    return fail((error as Error).message);
  }
  // Thaw awaits what a handler answers: its interceptors may answer a value with a promise.
  const method = awaitedForm(route.get(controller.instance));
  if (typeof method !== "function") return fail("is not a method");
  const reader = pathReader(pattern, options.allowEncodedSlash);
  const errors = reader?.rest === undefined
    ? scope.errors
    : withPathVariables(scope.errors, reader.all, options.maxBodySize);
  const resolvers = compileArguments(route.binders, pattern, reader?.rest, options.server, fail);
  if (method.length > resolvers.length) {
    fail(
      `the method takes ${method.length} argument(s) but ${resolvers.length} binder(s) are given; ` +
        `give a binder for each argument`,
    );
  }
  const label = `${where} (${route.httpMethod} ${pattern.source})`;
  const middlewareItems = [...scope.middleware, ...methodMiddleware];
  const status = responseStatusOf(controller.type, route.methodName);
  const middleware = guardedChain(
    middlewareItems,
    options.beanOf,
    errors,
    label,
    () => label,
    options.answersChecked,
  );
  return {
    httpMethod: route.httpMethod,
    pattern,
    label,
    method: {
      type: controller.type,
      methodName: route.methodName,
      binders: route.binders,
      middleware: middlewareItems,
      ...(status === undefined ? {} : { status }),
    },
    middleware,
    middlewareNames: middlewareItems.map(middlewareName),
    handler: compileHandler({
      bean: controller.instance,
      method: method as (...args: unknown[]) => unknown,
      resolvers,
      errors,
      label,
      maxBodySize: options.maxBodySize,
      server: options.server,
      hasPathVariables: pattern.variables.length > 0,
      pathVariables: reader?.rest === undefined ? undefined : reader.all,
      behindMiddleware: middleware.length > 0 || options.answersChecked,
      middlewareNames: [...options.globalMiddleware ?? [], ...middlewareItems.map(middlewareName)],
      status,
    }),
  };
}

// The argument readers of a route's binders; `fail` throws the route's DefinitionError.
function compileArguments(
  binders: readonly ParameterBinder[],
  pattern: PathPattern,
  rest: PathReader["rest"] | undefined,
  server: ServerRequest,
  fail: (why: string) => never,
): ArgumentResolver[] {
  const resolvers = binders.map((binder, i) => {
    if (
      typeof binder === "object" && binder?.kind === "path" &&
      !pattern.variables.includes(binder.name)
    ) {
      fail(`PathVariable("${binder.name}") has no {${binder.name}} in path "${pattern.source}"`);
    }
    try {
      return compileArgument(binder, server, rest);
    } catch (error) {
      return fail(`argument ${i + 1}: ${(error as Error).message}`);
    }
  });
  const bodies = binders.filter((b) => typeof b === "object" && b?.kind === "body").length;
  if (bodies > 1) fail("a request has one body; only one RequestBody() binder may be given");
  if (bodies > 0 && binders.some((b) => typeof b === "object" && b?.kind === "part")) {
    fail("a request has one body; RequestBody() and RequestPart() cannot both read it");
  }
  return resolvers;
}

// A route whose `{*name}` Hono does not name: an error path that makes its own `HttpRequest` gets
// the catch-all's value too.
function withPathVariables(
  errors: ErrorResponder,
  all: (c: Context) => Record<string, string>,
  maxBodySize: number,
): ErrorResponder {
  const variables = (c: Context): Record<string, string> => {
    try {
      return all(c);
    } catch {
      return c.req.param(); // a refused rest: the others, without it
    }
  };
  return (error, c, request, route) =>
    errors(
      error,
      c,
      request ?? new HttpRequest(c.req.raw, { pathVariables: variables(c), maxBodySize }),
      route,
    );
}

/**
 * Compiles the mapped methods of controllers into routes: every binder closure and handler is
 * built here, once. Throws a `DefinitionError` naming the method for a bad mapping. The parser of
 * `{name:regex}` variables is loaded only when a path may hold one.
 */
export async function compileRoutes(
  controllers: readonly ControllerBean[],
  options: CompileOptions,
): Promise<CompiledRoute[]> {
  const mapped = controllers.map((controller) => ({ controller, ...routesOf(controller.type) }));
  const paths = mapped.flatMap((c) => c.routes.map(({ record }) => c.prefix + record.path));
  const withRegex = {
    ...options,
    parseRegex: mayHoldRegex(paths.join())
      ? (await import("./path_regex_parser.ts")).parsePathRegex
      : undefined,
  };
  const routes: CompiledRoute[] = [];
  for (const { controller, prefix, routes: records, middleware } of mapped) {
    const own = exceptionScope([controller]);
    const errors = exceptionResolver(own, options.advice, options.errors, options.maxBodySize);
    const scope = { prefix, middleware, errors };
    for (const record of records) routes.push(compileRoute(controller, record, scope, withRegex));
  }
  return routes;
}

/**
 * The handler that runs first for a route, or none: made once per route as the app is built;
 * `fallback`, when given, wraps the answer of a request no route takes (404, 405, `OPTIONS`).
 * Both are handed the host through which a guard reads the routes and answers early.
 */
export type RouteGuard =
  & ((route: CompiledRoute, host: GuardHost) => MiddlewareHandler | undefined)
  & {
    readonly fallback?: (answer: FallbackAnswer, host: GuardHost) => FallbackAnswer;
  };

/** The answer of a request no route takes. */
export type FallbackAnswer = (c: Context) => Response | Promise<Response>;

/** How {@linkcode buildApp} builds the app. */
export interface BuildOptions {
  /** Put first in each route's own chain (see {@linkcode RouteGuard}). */
  readonly guard?: RouteGuard | undefined;
  /** Takes `%2F` in a path (`bootstrap`'s `allowEncodedSlash`). */
  readonly allowEncodedSlash?: boolean;
  /** Runs around every request, the framework's own answers included, in this order. */
  readonly middleware?: readonly MiddlewareHandler[];
  /** The largest request body in bytes, for the `HttpRequest` of a 404 or 405. */
  readonly maxBodySize?: number;
  /** Where each route marks the requests it takes, for the request observers. */
  readonly marks?: RouteMarks;
  /** `server.request-timeout`: a request unanswered after `ms` is answered 503 (logged). */
  readonly requestTimeout?: { readonly ms: number; readonly logger: Logger };
}

/**
 * Builds the Hono app that serves `routes`. Routes are added most specific first; unknown paths
 * answer 404, known paths with another method 405 with `Allow`, `OPTIONS` on a known path 204
 * with `Allow`; every error goes through `errors`. Two routes for one method and path shape are a
 * `DefinitionError` naming both.
 */
export function buildApp(
  routes: readonly CompiledRoute[],
  errors: ErrorResponder,
  options: BuildOptions = {},
): Hono {
  checkDistinct(routes);
  const table = routeTable(routes);
  // Hono tries routes in the order they were added: most specific first.
  const hono = new Hono({
    getPath: options.allowEncodedSlash === true ? requestPathAllowingEncodedSlash : requestPath,
  });
  // Added first, so that Hono runs them ahead of every route and of the answers below.
  const globalMiddleware = options.middleware ?? [];
  const global = globalMiddleware.length > 0;
  // The request the app was given, by context, for the route marks: global middleware may replace
  // `c.req.raw` (Hono's `bodyLimit` does) before a route takes it. Without global middleware
  // nothing runs before a route's first handler, which marks the request as it comes.
  const originals = new WeakMap<Context, Request>();
  // Outermost: it bounds the global middleware too. Each route's handlers name its template.
  const templates = new WeakMap<object, string>();
  const timeout = options.requestTimeout;
  if (timeout !== undefined) {
    hono.use(
      "*",
      requestTimeout(timeout.ms, errors, (h) => templates.get(h as object), timeout.logger),
    );
  }
  if (options.marks !== undefined && global) {
    hono.use("*", (c, next) => {
      originals.set(c, c.req.raw);
      return next();
    });
  }
  if (global) hono.use("*", ...globalMiddleware);
  for (const route of table.routes) {
    const handlers = routeHandlers(
      route,
      options.guard?.(route, GUARD_HOST),
      global,
      options.marks,
      originals,
    );
    if (timeout !== undefined) { for (const h of handlers) templates.set(h, route.pattern.source); }
    hono.on(route.httpMethod, route.pattern.honoPath, ...handlers);
  }
  let notFound = notFoundAnswer(table, errors, options.maxBodySize);
  if (global) notFound = adoptAnswer(notFound);
  hono.notFound(options.guard?.fallback?.(notFound, GUARD_HOST) ?? notFound);
  // Thaw's handlers and middleware catch their own errors; this serves what is mounted by hand.
  hono.onError((error, c) => errors(error, c));
  return hono;
}

// Two routes for one method and path shape: Hono would serve the first one only.
function checkDistinct(routes: readonly CompiledRoute[]): void {
  const seen = new Map<string, string>();
  for (const route of routes) {
    const key = `${route.httpMethod} ${route.pattern.shape}`;
    const other = seen.get(key);
    if (other !== undefined) {
      throw new DefinitionError(
        `Two handlers for ${route.httpMethod} ${route.pattern.source}: ${other} and ${route.label}`,
      );
    }
    seen.set(key, route.label);
  }
}

// What Hono runs for a route: its own middleware then its handler, the first of them marking the
// request when the observers want marks.
function routeHandlers(
  route: CompiledRoute,
  guard: MiddlewareHandler | undefined,
  global: boolean,
  marks: RouteMarks | undefined,
  originals: WeakMap<Context, Request>,
): [RouteHandler] {
  // The route guard first, then the route's own.
  const own = guard ? [guard, ...route.middleware ?? []] : route.middleware ?? [];
  const handler = global || own.length > 0 ? adoptAnswer(route.handler) : route.handler;
  const handlers = [...own, handler] as [RouteHandler];
  if (marks !== undefined) {
    // The first of the route's handlers, so that a route guard's refusal counts for the route;
    // marked on the request the app was given, which middleware may since have replaced.
    const first = handlers[0] as (c: Context, next: Next) => ReturnType<RouteHandler>;
    const template = route.pattern.template;
    handlers[0] = ((c: Context, next: Next) => {
      if (marks.recording) marks.mark(originals.get(c) ?? c.req.raw, template);
      return first(c, next);
    }) as RouteHandler;
  }
  // A `{name:regex}` is a plain `:name` to Hono; a request whose value fails the regex passes,
  // through each of the route's own handlers, to the next route that matches (else to the 404
  // or 405 below). Routes without constraints are added as they are, and cost nothing more.
  const holds = pathReader(route.pattern)?.holds;
  return holds === undefined
    ? handlers
    : handlers.map((h: (c: Context, next: Next) => unknown) => (c: Context, next: Next) =>
      holds(c) ? h(c, next) : next()
    ) as unknown as [RouteHandler];
}

// The answer when no route takes a request: 501 for an unknown method, 404, 405 with `Allow`, or
// 204 with `Allow` to an `OPTIONS` on a known path.
function notFoundAnswer(
  table: RouteTable<CompiledRoute>,
  errors: ErrorResponder,
  maxBodySize: number | undefined,
): FallbackAnswer {
  // A client's path or method is echoed in an error message only this far.
  const echo = (text: string) => clip(text, 100);
  return (c) => {
    const { method, path } = c.req;
    // No route answers, so none has path variables; but after a route whose regex did not hold
    // passed the request on, `c.req.param()` still reads that route's.
    const refuse = (error: HttpException) =>
      errors(error, c, new HttpRequest(c.req.raw, { maxBodySize }));
    if (!IMPLEMENTED_METHODS.has(method)) {
      return refuse(
        new HttpException(HttpStatus.NOT_IMPLEMENTED, `Method ${echo(method)} is not implemented`),
      );
    }
    const refused = REFUSED_PATHS.get(path);
    if (refused !== undefined) return refuse(new HttpException(HttpStatus.BAD_REQUEST, refused));
    const allow = table.allowed(path);
    if (allow === undefined) {
      return refuse(
        new HttpException(HttpStatus.NOT_FOUND, `No route for ${method} ${echo(path)}`),
      );
    }
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: { Allow: allow } });
    return refuse(new MethodNotAllowedException(method, echo(path), allow));
  };
}
