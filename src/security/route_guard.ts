/**
 * The security feature's guard of each route: decided once per route as the app is built, on the
 * route the router picked (never on a path read again from the request), so that no spelling of
 * a path (a trailing slash, `%2e%2e`, a case, a doubled slash) reaches a route past its guard. A
 * route any caller may reach gets no guard at all; any other checks the request's bearer token
 * and runs the route as a call of its caller.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { DefinitionError } from "../context/errors.ts";
import type { CompiledRoute, RouteGuard } from "../web/compile.ts";
import type { Logger } from "../web/error_responder.ts";
import { earlyAnswer } from "../web/middleware.ts";
import { authoritiesOf } from "./authorities.ts";
import { bearerAnswer, type BearerRefusal, bearerResponse } from "./bearer_answer.ts";
import { bearerToken } from "./bearer_token.ts";
import type { JwtSettings } from "./jwt_settings.ts";
import type { JwtVerifier } from "./jwt_verifier.ts";
import { permitted } from "./permit_all.ts";
import { isPrincipal } from "./principal.ts";
import { type Authentication, runAs } from "./security_context.ts";
import { NO_EVENTS, type SecurityEvents } from "./authentication_events.ts";
import { TokenFailure } from "./token_failure.ts";

/** What the guard of every route is made of. */
export interface GuardParts {
  readonly verifier: Pick<JwtVerifier, "verify">;
  readonly jwt: JwtSettings;
  /** `security.permit-all`, checked. */
  readonly permitAll: readonly string[];
  /** Where `security.permit-all` is set, for errors. */
  readonly permitAllWhere: string;
  readonly logger: Logger;
  /** The challenge's `realm`. */
  readonly realm?: string | undefined;
  /** Told of each request whose credentials were checked; nothing by default. */
  readonly events?: SecurityEvents | undefined;
}

/** The guard `bootstrap` puts first in each route's chain. */
export function routeGuard(parts: GuardParts): RouteGuard {
  return (route) => {
    const { source, template } = route.pattern;
    if (!openRoute(route, [source, template], parts.permitAll)) return guard(route.label, parts);
    if (route.method?.binders.some(isPrincipal)) {
      throw new DefinitionError(
        `${route.label}: Principal() on a route any caller may reach (@PermitAll(), or ` +
          `${parts.permitAllWhere}): there is no caller to bind`,
      );
    }
    return undefined;
  };
}

/**
 * Whether any caller may reach a route: the actuator's health, `@PermitAll()`, or one of its
 * `paths` (as written, as the router's template) in `permitAll`. The guard and the document ask.
 */
export function openRoute(
  route: Pick<CompiledRoute, "access" | "method">,
  paths: readonly string[],
  permitAll: readonly string[],
): boolean {
  if (route.access === "public") return true;
  if (route.method !== undefined && permitted(route.method.type, route.method.methodName)) {
    return true;
  }
  return permitAll.some((pattern) =>
    pattern.endsWith("/**")
      ? paths.some((path) => under(path, pattern.slice(0, -3)))
      : paths.includes(pattern)
  );
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`) || prefix === "";
}

const SUCCESS = Object.freeze({ scheme: "bearer", outcome: "success" } as const);

function guard(label: string, parts: GuardParts): MiddlewareHandler {
  const { verifier, jwt, logger, realm } = parts;
  const { authentication: record } = parts.events ?? NO_EVENTS;
  const warn = (logger.warn ?? logger.error).bind(logger);
  const refuse = (c: Parameters<MiddlewareHandler>[0], refusal: BearerRefusal) =>
    earlyAnswer(c, bearerResponse(bearerAnswer(refusal, realm)));
  return async (c, next) => {
    const found = bearerToken(c.req.raw.headers.get("authorization"));
    if (found.kind === "missing") return refuse(c, found);
    if (found.kind === "invalid-request") {
      warn(`${label}: bearer token refused (invalid request): not one Bearer token`);
      record({ scheme: "bearer", outcome: "failure", reason: "invalid-request" });
      return refuse(c, found);
    }
    let caller: Authentication;
    try {
      const { claims } = await verifier.verify(found.token);
      const name = Object.hasOwn(claims, jwt.principalClaim)
        ? claims[jwt.principalClaim]
        : undefined;
      if (typeof name !== "string" || name === "") throw new TokenFailure("missing-claim");
      caller = { name, authorities: authoritiesOf(claims, jwt), claims };
    } catch (error) {
      const failure = error instanceof TokenFailure ? error : new TokenFailure("malformed");
      const cause = failure.reason === "keys-unavailable" && failure.cause instanceof Error
        ? ` (${failure.cause.message})`
        : "";
      warn(`${label}: ${failure.message}${cause}`);
      record({ scheme: "bearer", outcome: "failure", reason: failure.reason });
      return refuse(c, { kind: "invalid-token" });
    }
    record(SUCCESS);
    return runAs(caller, next);
  };
}
