import { Hono } from "hono";
import { type Class, recordChain, type RouteRecord } from "../context/class_record.ts";
import { DefinitionError } from "../context/errors.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import { compileArgument } from "./arguments.ts";
import { type ErrorResponder, MethodNotAllowedException } from "./error_responder.ts";
import { compileHandler, type RouteHandler } from "./handler.ts";
import { bySpecificity, joinPaths, parsePathPattern, type PathPattern } from "./path_pattern.ts";

/** A controller bean to compile. */
export interface ControllerBean {
  readonly type: Class;
  readonly instance: unknown;
}

interface CompiledRoute {
  readonly httpMethod: string;
  readonly pattern: PathPattern;
  readonly label: string;
  readonly handler: RouteHandler;
}

/** The routes of a class and its superclasses; a subclass's mapping of a method replaces its parent's. */
function routesOf(type: Class): { prefix: string; routes: RouteRecord[] } {
  let prefix = "";
  const byMethod = new Map<string, RouteRecord[]>();
  for (const record of recordChain(type)) {
    if (record.prefix !== undefined) prefix = record.prefix;
    const own = new Map<string, RouteRecord[]>();
    for (const route of record.routes) {
      own.set(route.methodName, [...(own.get(route.methodName) ?? []), route]);
    }
    for (const [name, routes] of own) byMethod.set(name, routes);
  }
  return { prefix, routes: [...byMethod.values()].flat() };
}

function compileRoute(
  controller: ControllerBean,
  route: RouteRecord,
  prefix: string,
  errors: ErrorResponder,
  maxBodySize: number,
): CompiledRoute {
  const where = `${controller.type.name}.${route.methodName}`;
  const fail = (why: string): never => {
    throw new DefinitionError(`${where} (@${route.httpMethod} "${route.path}"): ${why}`);
  };
  if (route.isStatic) fail("mappings decorate instance methods, not static ones");
  let pattern: PathPattern;
  try {
    pattern = parsePathPattern(joinPaths(prefix, route.path));
  } catch (error) {
    return fail((error as Error).message);
  }
  const method = route.get(controller.instance);
  if (typeof method !== "function") return fail("is not a method");
  const resolvers = route.binders.map((binder, i) => {
    if (
      typeof binder === "object" && binder?.kind === "path" &&
      !pattern.variables.includes(binder.name)
    ) {
      fail(`PathVariable("${binder.name}") has no {${binder.name}} in path "${pattern.source}"`);
    }
    try {
      return compileArgument(binder);
    } catch (error) {
      return fail(`argument ${i + 1}: ${(error as Error).message}`);
    }
  });
  if (route.binders.filter((b) => typeof b === "object" && b?.kind === "body").length > 1) {
    fail("a request has one body; only one RequestBody() binder may be given");
  }
  if (method.length > resolvers.length) {
    fail(
      `the method takes ${method.length} argument(s) but ${resolvers.length} binder(s) are given; ` +
        `give a binder for each argument`,
    );
  }
  const label = `${where} (${route.httpMethod} ${pattern.source})`;
  return {
    httpMethod: route.httpMethod,
    pattern,
    label,
    handler: compileHandler({
      bean: controller.instance,
      method: method as (...args: unknown[]) => unknown,
      resolvers,
      errors,
      label,
      maxBodySize,
      hasPathVariables: pattern.variables.length > 0,
    }),
  };
}

/**
 * Compiles controllers into a Hono app: every route table, binder closure and header set is
 * built here, once. Routes are added most specific first; unknown paths answer 404, known paths
 * with another method 405 with `Allow`, `OPTIONS` on a known path 204 with `Allow`; every error
 * goes through `errors`.
 */
export function compileControllers(
  controllers: readonly ControllerBean[],
  errors: ErrorResponder,
  maxBodySize: number,
): Hono {
  const routes: CompiledRoute[] = [];
  const seen = new Map<string, string>();
  for (const controller of controllers) {
    const { prefix, routes: records } = routesOf(controller.type);
    for (const record of records) {
      const route = compileRoute(controller, record, prefix, errors, maxBodySize);
      const key = `${route.httpMethod} ${route.pattern.shape}`;
      const other = seen.get(key);
      if (other !== undefined) {
        throw new DefinitionError(
          `Two handlers for ${route.httpMethod} ${route.pattern.source}: ${other} and ${route.label}`,
        );
      }
      seen.set(key, route.label);
      routes.push(route);
    }
  }
  routes.sort((a, b) => bySpecificity(a.pattern, b.pattern));

  const hono = new Hono();
  for (const route of routes) hono.on(route.httpMethod, route.pattern.honoPath, route.handler);

  // For 405 and OPTIONS: which methods each path shape allows.
  const shapes = new Map<string, { matcher: RegExp; methods: Set<string> }>();
  for (const { pattern, httpMethod } of routes) {
    let shape = shapes.get(pattern.shape);
    if (shape === undefined) {
      shape = { matcher: pattern.matcher, methods: new Set() };
      shapes.set(pattern.shape, shape);
    }
    shape.methods.add(httpMethod);
    if (httpMethod === "GET") shape.methods.add("HEAD");
  }
  const allowed = (path: string): string | undefined => {
    const methods = new Set<string>();
    for (const { matcher, methods: m } of shapes.values()) {
      if (matcher.test(path)) { for (const method of m) methods.add(method); }
    }
    return methods.size === 0 ? undefined : [...methods, "OPTIONS"].join(", ");
  };

  hono.notFound((c) => {
    const allow = allowed(c.req.path);
    if (allow === undefined) {
      return errors(
        new HttpException(HttpStatus.NOT_FOUND, `No route for ${c.req.method} ${c.req.path}`),
        c,
        undefined,
        undefined,
      );
    }
    if (c.req.method === "OPTIONS") {
      return new Response(null, { status: 204, headers: { Allow: allow } });
    }
    return errors(
      new MethodNotAllowedException(c.req.method, c.req.path, allow),
      c,
      undefined,
      undefined,
    );
  });
  // Thaw's handlers catch their own errors; this serves middleware added to `app.hono`.
  hono.onError((error, c) => errors(error, c, undefined, undefined));
  return hono;
}
