// `security()`: the schemes that are on, each read and checked once (the resource server's keys
// and its verifier, a public key read and imported at start, a key set fetched at the first token;
// the API keys, digested; HTTP Basic, once the app's `UserDetailsService` bean is made), and the
// guard of each route.
import type { FeatureFactory } from "../app_feature.ts";
import { ConfigError } from "../config/config_error.ts";
import { DefinitionError } from "../context/errors.ts";
import { configValue } from "../config/application_config.ts";
import { shownValue } from "../shown_value.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { SetupHost } from "../feature_value.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import { checkOptionsObject } from "../options_object.ts";
import { ApiKeyAuthenticator, apiKeySettings } from "./api_keys.ts";
import { BasicAuthenticator } from "./basic_authenticator.ts";
import { basicChallenge } from "./basic_credentials.ts";
import { apiKeyChallenge, type Challenges } from "./challenges.ts";
import { optionalApi } from "../actuator/opentelemetry.ts";
import { NO_EVENTS, type SecurityEvents } from "./authentication_events.ts";
import type { TokenValidator } from "./bearer_authenticator.ts";
import { bearerSetup } from "./bearer_setup.ts";
import { clientRegistrations } from "./client_registrations.ts";
import { TokenClient } from "./token_client.ts";
import { MethodSecurityInterceptor } from "./method_security.ts";
import { routeGuard } from "./route_guard.ts";
import { keepCaller } from "./security_context.ts";
import {
  apiKeyScheme,
  basicScheme,
  bearerScheme,
  documentedGuard,
  type DocumentedScheme,
} from "./security_document.ts";
import { type SecurityFeature, securityFeature } from "./security_feature.ts";
import { UserDetailsService } from "./user_details.ts";
import { registerCallContext } from "../web/call_context.ts";

/** What `security()` takes. */
export interface SecurityOptions {
  /** The `realm` of the `WWW-Authenticate` challenges; none when left out. */
  readonly realm?: string | undefined;
  /**
   * The app's own checks of a verified token's claims, run in order after the signature, `exp`,
   * `iss` and `aud`: one that answers a text refuses the token (`401`, `invalid_token`, the text
   * as `error_description`); one that throws refuses it too, and the log says why.
   */
  readonly validators?: readonly TokenValidator[] | undefined;
}

/**
 * Security for `bootstrap({ security: security() })`: every route needs an authenticated caller
 * unless `@PermitAll()` or `security.permit-all` opens it (the actuator's health is open). A
 * caller comes by one of the schemes that are on: a bearer token (the JWT resource server of the
 * `security.oauth2.resourceserver.jwt.*` keys, Spring Boot's), HTTP Basic (when the app has a
 * bean that extends `UserDetailsService`) and API keys (`security.api-keys.keys`). A refused
 * request is answered 401 with a challenge per scheme (RFC 6750's codes for a token), and the log
 * line says why.
 *
 * @example One scheme at least is required: without one, bootstrap stops and says which keys
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
  checkOptionsObject(options, "security(options)", ["realm", "validators"]);
  const { realm, validators = [] } = options as SecurityOptions;
  if (realm !== undefined && typeof realm !== "string") {
    throw new TypeError("security({ realm }): give a text");
  }
  if (!Array.isArray(validators) || validators.some((v) => typeof v !== "function")) {
    throw new TypeError(
      "security({ validators }): give a list of functions (claims) => string | undefined",
    );
  }
  const checks = Object.freeze([...validators]);
  return securityFeature((settings, host) => setUp(settings, host, realm, checks));
}

async function setUp(
  settings: ThawSettings,
  { logger, context }: SetupHost,
  realm: string | undefined,
  validators: readonly TokenValidator[],
): Promise<FeatureFactory> {
  const keys = apiKeySettings(settings);
  const permitAllWhere = settings.where("security.permit-all");
  const permitAll = checkPermitAll(settings.get("security.permit-all"), permitAllWhere);
  const { bearer, opaque } = await bearerSetup(settings, validators, logger, context);
  const apiKeys = keys === undefined ? undefined : await ApiKeyAuthenticator.create(keys);
  // An SSE stream's pulls and a socket's events run as calls of the request that opened them.
  registerCallContext(keepCaller);
  const events = await securityEvents();
  // The scopes' prefix, which `@Secured` reads whether tokens are on or not.
  const authorityPrefix = settings.get("security.oauth2.resourceserver.jwt.authority-prefix");
  // Whole once the beans are made (HTTP Basic's bean among them), before any request is served.
  let challenges: Challenges = { bearer: bearer !== undefined, realm, others: [] };
  const warn = (logger.warn ?? logger.error).bind(logger);
  const interceptor = new MethodSecurityInterceptor(authorityPrefix, {
    events,
    challenges: () => challenges,
    onDenied: (line) => warn(line),
  });
  registerTokenClients(settings, context);
  context.registerBean({
    name: "thaw.methodSecurityInterceptor",
    type: MethodSecurityInterceptor,
    source: "security()",
    create: () => Promise.resolve(interceptor),
  });
  // HTTP Basic is known once the beans are made: the app's `UserDetailsService` may be any bean.
  return (host) => {
    const users = userDetailsBean(host.context);
    if (bearer === undefined && apiKeys === undefined && users === undefined) {
      throw new ConfigError(
        "security(): no scheme to authenticate callers by: set " +
          "security.oauth2.resourceserver.jwt.issuer-uri (or jwk-set-uri, public-key, " +
          "public-key-location, or jwt.issuers) for bearer tokens, " +
          "security.oauth2.resourceserver.opaquetoken.introspection-uri for opaque ones, " +
          "security.api-keys.keys for API keys, or " +
          "register a bean that extends UserDetailsService for HTTP Basic",
      );
    }
    const basic = users === undefined ? undefined : new BasicAuthenticator(users.instance, {
      iterations: settings.get("security.basic.iterations"),
      beanName: `bean '${users.name}'`,
    });
    // As configured: `apiKeys.header` is lower case.
    const header = settings.get("security.api-keys.header-name");
    challenges = {
      ...challenges,
      others: [
        ...(basic === undefined ? [] : [basicChallenge(basicRealm(settings, realm))]),
        ...(apiKeys === undefined ? [] : [apiKeyChallenge(header)]),
      ],
    };
    const guard = routeGuard({
      bearer,
      basic,
      apiKeys,
      challenges,
      permitAll,
      permitAllWhere,
      logger,
      events,
    });
    // One entry per scheme turned on: each appears in the OpenAPI document.
    const schemes: DocumentedScheme[] = [
      ...(bearer === undefined ? [] : [bearerScheme(authorityPrefix, !opaque)]),
      ...(basic === undefined ? [] : [basicScheme()]),
      ...(apiKeys === undefined ? [] : [apiKeyScheme(header)]),
    ];
    const documented = documentedGuard(schemes, permitAll);
    // Both: the host's for openApi() folded after, the internals' for openApiDocument(app).
    return { guard, documentedGuard: documented, internals: { documentedGuard: documented } };
  };
}

// A `TokenClient` bean per configured registration, by its name.
function registerTokenClients(settings: ThawSettings, context: ApplicationContext): void {
  for (const registration of clientRegistrations(settings)) {
    context.registerBean({
      name: registration.name,
      type: TokenClient,
      source: registration.where,
      create: () => Promise.resolve(new TokenClient(registration)),
    });
  }
}

// `security.permit-all`, each a route's path (or a path and `/**`): a `*` but the final `/**`, or a
// final `/`, would match no route, and what it means to open would stay guarded, unsaid.
function checkPermitAll<T extends readonly string[]>(permitAll: T, where: string): T {
  for (const pattern of permitAll) {
    const path = pattern.endsWith("/**") ? pattern.slice(0, -3) : pattern;
    if (!pattern.startsWith("/") || path.includes("*") || (path.length > 1 && path.endsWith("/"))) {
      throw new ConfigError(
        `${where}: ${shownValue(pattern)} is not a route's path: give routes' paths as ` +
          "they are written (/orders/{id}), or a path and /** for every route under it (/public/**)",
      );
    }
  }
  return permitAll;
}

/**
 * HTTP Basic's realm: `security.basic.realm` where the configuration sets it, else the realm of
 * `security({ realm })`, else the key's default.
 */
function basicRealm(settings: ThawSettings, realm: string | undefined): string {
  const key = "security.basic.realm";
  return realm !== undefined && configValue(settings.config.values, key) === undefined
    ? realm
    : settings.get(key);
}

/** The app's one `UserDetailsService` bean, if any; a `DefinitionError` for two. */
function userDetailsBean(
  context: ApplicationContext,
): { readonly name: string; readonly instance: UserDetailsService } | undefined {
  // An override's instance need not be of the class it stands for: the bean's class counts too.
  const found = context.beans().filter(({ instance, type }) =>
    instance instanceof UserDetailsService ||
    (type !== undefined && type.prototype instanceof UserDetailsService)
  );
  if (found.length === 0) return undefined;
  if (found.length > 1) {
    throw new DefinitionError(
      `security(): ${found.length} beans extend UserDetailsService (${
        found.map(({ name }) => `'${name}' (${context.sourceOf(name)})`).join(", ")
      }): HTTP Basic asks one for its users; keep one`,
    );
  }
  const [{ name, instance }] = found;
  return { name, instance: instance as UserDetailsService };
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
