/**
 * The security feature's guard of each route: decided once per route as the app is built, on the
 * route the router picked (never on a path read again from the request), so that no spelling of
 * a path (a trailing slash, `%2e%2e`, a case, a doubled slash) reaches a route past its guard.
 * Every guard checks the request's credentials, scheme after scheme of those that are on (a
 * bearer token, HTTP Basic, an API key: the first the request carries decides, a refusal is not
 * passed on to the next), and runs the route as a call of its caller; a request without any is
 * refused, but on a route any caller may reach, which it serves to no one (as Spring Security's
 * authentication filters check credentials on every path, open or not).
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { DefinitionError } from "../context/errors.ts";
import type { CompiledRoute, FallbackAnswer, RouteGuard } from "../web/compile.ts";
import type { Logger } from "../web/error_responder.ts";
import type { GuardHost } from "../web/guard_host.ts";
import type { ApiKeyAuthenticator } from "./api_keys.ts";
import type { BasicAuthenticator } from "./basic_authenticator.ts";
import type { BearerRefusal } from "./bearer_answer.ts";
import type { BearerAuthenticator } from "./bearer_authenticator.ts";
import { bearerToken } from "./bearer_token.ts";
import { type Challenges, refusalResponse } from "./challenges.ts";
import { methodSecured } from "./method_security.ts";
import { permitted } from "./permit_all.ts";
import { isPrincipal } from "./principal.ts";
import type { SchemeResult } from "./scheme_authentication.ts";
import { type Authentication, runAs } from "./security_context.ts";
import { NO_EVENTS, type SecurityEvents } from "./authentication_events.ts";
import { TokenFailure } from "./token_failure.ts";
import { rememberToken } from "./token_relay.ts";

/** What the guard of every route is made of. */
export interface GuardParts {
  /** Bearer tokens, when a JWT key source is set. */
  readonly bearer?: BearerAuthenticator | undefined;
  /** HTTP Basic, when the app has a `UserDetailsService` bean. */
  readonly basic?: Pick<BasicAuthenticator, "authenticate"> | undefined;
  /** API keys, when keys are configured. */
  readonly apiKeys?: Pick<ApiKeyAuthenticator, "authenticate" | "header"> | undefined;
  /** The challenges of the schemes that are on, for every refusal (method security's alike). */
  readonly challenges: Challenges;
  /** `security.permit-all`, checked. */
  readonly permitAll: readonly string[];
  /** Where `security.permit-all` is set, for errors. */
  readonly permitAllWhere: string;
  readonly logger: Logger;
  /** Told of each request whose credentials were checked; nothing by default. */
  readonly events?: SecurityEvents | undefined;
}

/**
 * The guard `bootstrap` puts first in each route's chain, and around the answer of a request no
 * route takes (see {@linkcode fallbackGuard}).
 */
export function routeGuard(parts: GuardParts): RouteGuard {
  const routes: CompiledRoute[] = [];
  const forRoute = (route: CompiledRoute, host: GuardHost): MiddlewareHandler => {
    routes.push(route);
    if (!openRoute(route, route.pattern, parts.permitAll)) {
      return guard(route.label, parts, host, undefined);
    }
    if (route.method?.binders.some(isPrincipal)) {
      throw new DefinitionError(
        `${route.label}: Principal() on a route any caller may reach (@PermitAll(), or ` +
          `${parts.permitAllWhere}): there is no caller to bind`,
      );
    }
    return guard(route.label, parts, host, ANYONE);
  };
  return Object.assign(forRoute, { fallback: fallbackGuard(parts, routes) });
}

/**
 * The guard of the answers of a request no route takes (404, 405 with `Allow`, 204 with `Allow`
 * to an `OPTIONS`), as Spring Security's `anyRequest().authenticated()`: an anonymous client
 * learns neither which paths exist nor which methods they take, but under a path
 * `security.permit-all` opens (by path alone, whatever the method). An unknown method (501) and a
 * path no request may have (400) say nothing of the routes: answered first, as Spring's firewall
 * does.
 */
function fallbackGuard(
  parts: GuardParts,
  routes: readonly CompiledRoute[],
): (answer: FallbackAnswer, host: GuardHost) => FallbackAnswer {
  const { permitAll } = parts;
  return (answer, host) => {
    // Made with the app, once every route has had its guard. A `{name}` of the list takes any
    // segment, where the router may match a route the list does not open (`/orders/mine` for
    // `/orders/{id}`, `/items/abc` for `/items/{id:\d+}`): the path of a request no route takes
    // is opened only where its answer (404, or the `Allow` of 405 and `OPTIONS`, which the route
    // table alone decides) is the one the listed routes alone would give.
    const open = routes.filter((route) => listedPath(route.pattern, permitAll));
    const all = host.routeTable(routes);
    const listed = open.length === routes.length ? all : host.routeTable(open);
    const gate = guard("a request no route takes", parts, host, (c) => {
      const path = c.req.path;
      return permitAll.some((pattern) => permitsPath(pattern, path)) &&
        (listed === all || all.allowed(path) === listed.allowed(path));
    });
    return fallbackAnswer(answer, gate, host);
  };
}

function fallbackAnswer(
  answer: FallbackAnswer,
  gate: MiddlewareHandler,
  host: GuardHost,
): FallbackAnswer {
  return async (c) => {
    if (!host.implementedMethods.has(c.req.method) || host.refusedPaths.has(c.req.path)) {
      return answer(c);
    }
    let served: Response | undefined;
    const refused = await gate(c, async () => {
      served = await answer(c);
    });
    return served ?? refused ?? c.res;
  };
}

/**
 * Whether the `security.permit-all` entry `pattern` opens the request path `path` (of a request no
 * route takes): under it for `/**`, else segment by segment, a `{name}` (or `{name:regex}`)
 * taking any one segment that is not empty, and a final `{*name}` the rest, none included.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permitsPath } from "./route_guard.ts";
 *
 * assert.equal(permitsPath("/public/**", "/public/a/b"), true);
 * assert.equal(permitsPath("/public/**", "/publicity"), false);
 * assert.equal(permitsPath("/orders/{id}", "/orders/7"), true);
 * assert.equal(permitsPath("/orders/{id}", "/orders/7/lines"), false);
 * ```
 */
export function permitsPath(pattern: string, path: string): boolean {
  if (pattern.endsWith("/**")) return under(path, pattern.slice(0, -3));
  const want = pattern.split("/");
  const have = path.split("/");
  for (let i = 0; i < want.length; i++) {
    const segment = want[i];
    if (segment.startsWith("{*")) return true;
    if (i >= have.length) return false;
    if (segment.startsWith("{") ? have[i] === "" : segment !== have[i]) return false;
  }
  return want.length === have.length;
}

/** A route's path as declared (`source`) and as its template (`/items/{id}` for `/items/{id:\d+}`). */
export interface RoutePath {
  readonly source: string;
  readonly template: string;
}

/**
 * Whether any caller may reach a route: the actuator's health, `@PermitAll()`, or its path in
 * `permitAll`, as declared or as its template; never one whose method `@Secured` or
 * `@PreAuthorize` checks. The guard and the document ask, so that they agree.
 */
export function openRoute(
  route: Pick<CompiledRoute, "access" | "method">,
  path: RoutePath,
  permitAll: readonly string[],
): boolean {
  if (route.access === "public") return true;
  const method = route.method;
  if (method !== undefined) {
    // Its own checks need the caller, whatever opens the route.
    if (methodSecured(method.type, method.methodName)) return false;
    if (permitted(method.type, method.methodName)) return true;
  }
  return listedPath(path, permitAll);
}

// Whether `permitAll` opens the route by its path.
function listedPath({ source, template }: RoutePath, permitAll: readonly string[]): boolean {
  const paths = [source, template];
  return permitAll.some((pattern) =>
    pattern.endsWith("/**")
      ? paths.some((path) => under(path, pattern.slice(0, -3)))
      : paths.includes(pattern)
  );
}

// Every route's path starts with `/`: `/**` (the prefix "") opens them all.
function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

const MISSING: SchemeResult = Object.freeze({ kind: "missing" });
// The schemes other than the bearer token have no claims.
const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});
const SCHEME_NAMES = { "basic": "HTTP Basic credentials", "api-key": "API key" } as const;
const BEARER_SUCCESS = Object.freeze({ scheme: "bearer", outcome: "success" } as const);
const ANYONE = (): boolean => true;

/**
 * The guard of the route `label`; `opens` says whether a request without credentials is served,
 * to no one (`undefined`: never). Credentials are checked alike wherever they come.
 */
function guard(
  label: string,
  parts: GuardParts,
  { earlyAnswer }: GuardHost,
  opens: ((c: Context) => boolean) | undefined,
): MiddlewareHandler {
  const { bearer, basic, apiKeys, logger, challenges } = parts;
  const { authentication: record } = parts.events ?? NO_EVENTS;
  const warn = (logger.warn ?? logger.error).bind(logger);
  const refuse = (c: Parameters<MiddlewareHandler>[0], refusal: BearerRefusal) =>
    earlyAnswer(c, refusalResponse(refusal, challenges));
  const check: MiddlewareHandler = async (c, next) => {
    const authorization = c.req.raw.headers.get("authorization");
    if (bearer !== undefined) {
      const found = bearerToken(authorization);
      if (found.kind === "invalid-request") {
        warn(`${label}: bearer token refused (invalid request): not one Bearer token`);
        record({ scheme: "bearer", outcome: "failure", reason: "invalid-request" });
        return refuse(c, found);
      }
      if (found.kind === "token") {
        let caller: Authentication;
        try {
          caller = await bearer.authenticate(found.token);
          rememberToken(caller, found.token);
        } catch (error) {
          const failure = error instanceof TokenFailure ? error : new TokenFailure("malformed");
          const unavailable = failure.reason === "keys-unavailable" ||
            failure.reason === "introspection-unavailable";
          const cause = unavailable && failure.cause instanceof Error
            ? ` (${failure.cause.message})`
            : "";
          warn(`${label}: ${failure.message}${cause}`);
          record({ scheme: "bearer", outcome: "failure", reason: failure.reason });
          // No verdict on the token: the client may send it again in a moment.
          if (failure.reason === "introspection-unavailable") {
            return earlyAnswer(c, busyResponse("the token could not be checked now"));
          }
          return refuse(c, { kind: "invalid-token", description: failure.description });
        }
        record(BEARER_SUCCESS);
        return runAs(caller, next);
      }
    }
    let result = basic === undefined ? MISSING : await basic.authenticate(authorization);
    if (result.kind === "missing" && apiKeys !== undefined) {
      result = await apiKeys.authenticate(c.req.raw.headers.get(apiKeys.header));
    }
    if (result.kind === "authenticated") {
      const { name, authorities, scheme } = result.authentication;
      record({ scheme, outcome: "success" });
      return runAs({ name, authorities, claims: NO_CLAIMS }, next);
    }
    // The reason alone: never the user name, the password or the key the client sent.
    if (result.kind === "refused") {
      warn(`${label}: ${SCHEME_NAMES[result.scheme]} refused (${result.reason})`);
      record({ scheme: result.scheme, outcome: "failure", reason: result.reason });
      // Not a verdict on the credentials: the client may send them again in a moment.
      if (result.reason === "busy") {
        return earlyAnswer(c, busyResponse("too many password checks at once"));
      }
    } else if (opens?.(c)) return next(); // no credentials of a scheme that is on
    return refuse(c, { kind: "missing" });
  };
  if (opens === undefined) return check;
  const keyHeader = apiKeys?.header;
  // Without credentials, an open route costs the reading of its headers and no more.
  return (c, next) => {
    const headers = c.req.raw.headers;
    return headers.has("authorization") ||
        (keyHeader !== undefined && headers.has(keyHeader)) || !opens(c)
      ? check(c, next)
      : next();
  };
}

// The answer to a request whose credentials could not be checked now: every place for a password
// check was taken, or the introspection endpoint did not answer.
function busyResponse(why: string): Response {
  return new Response(`{"error":"${why}; try again"}`, {
    status: 503,
    headers: { "retry-after": "1", "content-type": "application/json" },
  });
}
