// `security()`: the resource server's keys read and checked once, the verifier made (a public key
// read and imported at start; a key set fetched at the first token), and the guard of each route.
import type { FeatureFactory } from "../app_feature.ts";
import { ConfigError } from "../config/config_error.ts";
import { shownValue } from "../config/application_config.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { SetupHost } from "../feature_value.ts";
import { checkOptionsObject } from "../options_object.ts";
import { optionalApi } from "../actuator/opentelemetry.ts";
import { NO_EVENTS, type SecurityEvents } from "./authentication_events.ts";
import { jwtSettings } from "./jwt_settings.ts";
import { JwtVerifier } from "./jwt_verifier.ts";
import { MethodSecurityInterceptor } from "./method_security.ts";
import { routeGuard } from "./route_guard.ts";
import { bearerScheme, documentedGuard, type DocumentedScheme } from "./security_document.ts";
import { type SecurityFeature, securityFeature } from "./security_feature.ts";

/** What `security()` takes. */
export interface SecurityOptions {
  /** The `realm` of the `WWW-Authenticate` challenges; none when left out. */
  readonly realm?: string | undefined;
}

/**
 * The JWT resource server for `bootstrap({ security: security() })`, configured by the
 * `security.oauth2.resourceserver.jwt.*` keys (Spring Boot's): every route needs a caller with a
 * valid bearer token unless `@PermitAll()` or `security.permit-all` opens it (the actuator's
 * health is open); a refused request is answered 401 as RFC 6750 says, and the log line says why.
 *
 * @example The keys' source is required: without one, bootstrap stops and says which keys
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { security } from "@thaw/thaw/security";
 *
 * await assert.rejects(bootstrap({ security: security() }), /jwt\.issuer-uri/);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/security.md
 */
export function security(options: SecurityOptions = {}): SecurityFeature {
  checkOptionsObject(options, "security(options)", ["realm"]);
  const { realm } = options as SecurityOptions;
  if (realm !== undefined && typeof realm !== "string") {
    throw new TypeError("security({ realm }): give a text");
  }
  return securityFeature((settings, host) => setUp(settings, host, realm));
}

async function setUp(
  settings: ThawSettings,
  { logger, context }: SetupHost,
  realm: string | undefined,
): Promise<FeatureFactory> {
  const jwt = jwtSettings(settings);
  if (jwt === undefined) {
    throw new ConfigError(
      "security(): set security.oauth2.resourceserver.jwt.issuer-uri (or jwk-set-uri, " +
        "public-key, public-key-location): where the keys that sign the tokens come from",
    );
  }
  const permitAllWhere = settings.where("security.permit-all");
  const permitAll = settings.get("security.permit-all");
  for (const pattern of permitAll) {
    if (!pattern.startsWith("/")) {
      throw new ConfigError(
        `${permitAllWhere}: ${shownValue(pattern)} is not a path: give routes' paths as they ` +
          "are written (/orders/{id}, /public/**)",
      );
    }
  }
  const verifier = await JwtVerifier.create(jwt, {
    onKeyFetchFailed: (error) => logger.error(`security: ${error.message}`),
  });
  const events = await securityEvents();
  const guard = routeGuard({ verifier, jwt, permitAll, permitAllWhere, logger, realm, events });
  const interceptor = new MethodSecurityInterceptor(jwt.authorityPrefix, events);
  context.registerBean({
    name: "thaw.methodSecurityInterceptor",
    type: MethodSecurityInterceptor,
    source: "security()",
    create: () => Promise.resolve(interceptor),
  });
  // One entry per scheme turned on: each appears in the OpenAPI document.
  const schemes: DocumentedScheme[] = [bearerScheme(jwt.authorityPrefix)];
  const documented = documentedGuard(schemes, permitAll);
  // Both: the host's for openApi() folded after, the internals' for openApiDocument(app).
  return () => ({ guard, documentedGuard: documented, internals: { documentedGuard: documented } });
}

/**
 * The hook every scheme reports to (`events.authentication({ scheme, outcome, reason })`):
 * OpenTelemetry counters where the app has the API, else nothing, and nothing of them loaded.
 */
async function securityEvents(): Promise<SecurityEvents> {
  const api = await optionalApi();
  if (api === undefined) return NO_EVENTS;
  return (await import("./security_metrics.ts")).securityMetrics(api);
}
