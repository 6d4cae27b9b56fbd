/**
 * What the OpenAPI document says of `security()`: the schemes it reads credentials by, under
 * `components.securitySchemes`, and each operation's requirement, from the same rules the guard
 * runs: on a route anyone may reach (`@PermitAll()`, `security.permit-all`, health) no credentials
 * or any one scheme's (`[{}, { bearerAuth: [] }]`: those sent are checked), otherwise any one of the
 * schemes, with the authorities `@Secured` names (any one of them, so
 * one requirement each). A list of schemes, so that each scheme `security()` turns on appears by
 * adding its entry. Only data: the generator reads it where the app serves a document.
 *
 * @module
 */
import type { SecurityRequirement, SecurityScheme } from "../openapi/api_docs.ts";
import type { DocumentedGuard } from "../openapi/documented_route.ts";
import { methodSecured, securedAuthorities } from "./method_security.ts";
import { openRoute } from "./route_guard.ts";

// The guard's own answers (their bodies say no more than RFC 6750's codes): 403 where `@Secured`,
// `@PreAuthorize` or `@PostAuthorize` decides, as the route's own check answers.
const REFUSED = Object.freeze({
  401: "No credentials, or refused ones (WWW-Authenticate says which scheme)",
});
// A route anyone may reach checks the credentials sent all the same.
const OPEN = Object.freeze({
  401: "Refused credentials: none are needed, but those sent are checked",
});
const DENIED = Object.freeze({
  ...REFUSED,
  403: "The caller lacks the authority the operation needs",
});
const OPEN_CHECKED = Object.freeze({ ...OPEN, 403: DENIED[403] });

const asItIs = (authority: string): string => authority;

/** One scheme in the document. */
export interface DocumentedScheme {
  /** Its name under `components.securitySchemes` (`bearerAuth`). */
  readonly name: string;
  readonly scheme: SecurityScheme;
  /**
   * What an operation's requirement lists for one authority `@Secured` names: the bearer token's
   * scopes, unprefixed; the authority as it is when left out.
   */
  readonly requirementOf?: (authority: string) => string;
}

/**
 * The resource server's scheme: `bearerAuth`, HTTP bearer of JWTs (of no stated format for
 * opaque tokens). `@Secured("SCOPE_x")` is
 * listed as the scope `x`; another authority (`ROLE_ADMIN`) as itself, as OpenAPI 3.1 lets a
 * non-OAuth scheme list the roles it needs.
 */
export function bearerScheme(scopePrefix: string, jwt = true): DocumentedScheme {
  return {
    name: "bearerAuth",
    // An opaque token has no format a client could rely on.
    scheme: jwt
      ? { type: "http", scheme: "bearer", bearerFormat: "JWT" }
      : { type: "http", scheme: "bearer" },
    requirementOf: (authority) =>
      authority.startsWith(scopePrefix) ? authority.slice(scopePrefix.length) : authority,
  };
}

/** HTTP Basic: `basicAuth`; a requirement lists the authorities `@Secured` names as they are. */
export function basicScheme(): DocumentedScheme {
  return { name: "basicAuth", scheme: { type: "http", scheme: "basic" } };
}

/** API keys in the header `header`: `apiKeyAuth`; a requirement lists the authorities as they are. */
export function apiKeyScheme(header: string): DocumentedScheme {
  return {
    name: "apiKeyAuth",
    scheme: { type: "apiKey", in: "header", name: header },
  };
}

/**
 * The document's view of the guard: `schemes` on every route, the requirement as the guard
 * decides it.
 */
export function documentedGuard(
  schemes: readonly DocumentedScheme[],
  permitAll: readonly string[],
): DocumentedGuard {
  const securitySchemes = Object.fromEntries(schemes.map((s) => [s.name, s.scheme]));
  return (route) => {
    const checked = route.method !== undefined &&
      methodSecured(route.method.type, route.method.methodName);
    if (
      openRoute(route, { source: route.path, template: route.template }, permitAll)
    ) {
      // `{}` first: no credentials will do. A client that has some sends them, and the route
      // runs as their caller (Swagger UI sends what "Authorize" was given).
      const security = [{}, ...schemes.map(({ name }) => ({ [name]: [] }))];
      return { securitySchemes, security, responses: checked ? OPEN_CHECKED : OPEN };
    }
    const authorities = route.method === undefined
      ? undefined
      : securedAuthorities(route.method.type, route.method.methodName);
    const security: SecurityRequirement[] = schemes.flatMap(({ name, requirementOf = asItIs }) =>
      authorities === undefined
        ? [{ [name]: [] }]
        : authorities.map((authority) => ({ [name]: [requirementOf(authority)] }))
    );
    return { securitySchemes, security, responses: checked ? DENIED : REFUSED };
  };
}
