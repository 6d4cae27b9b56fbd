/**
 * The one hook every scheme reports to: each request whose credentials were checked (the bearer
 * token, HTTP Basic, an API key) is one {@linkcode AuthenticationEvent}, and each call method
 * security refused is one {@linkcode AccessDenial}. `security()` makes the recorder: OpenTelemetry
 * counters where the app has the API (`security_metrics.ts`, loaded only then), else nothing, so
 * that an app without OpenTelemetry pays one empty call per request.
 *
 * @module
 */
import type { CredentialFailureReason, CredentialScheme } from "./scheme_authentication.ts";
import type { TokenFailureReason } from "./token_failure.ts";

/** The schemes that authenticate a request. */
export type AuthenticationScheme = "bearer" | CredentialScheme;

/**
 * Why credentials were refused: a token's reason, a Basic or API key reason, or `invalid-request`
 * (an `Authorization` header of no one scheme's grammar). A closed set: never what the client sent.
 */
export type AuthenticationFailureReason =
  | TokenFailureReason
  | CredentialFailureReason
  | "invalid-request";

/** One request's credentials, checked: a success, or a failure and why. */
export type AuthenticationEvent =
  | {
    readonly scheme: AuthenticationScheme;
    readonly outcome: "success";
    readonly reason?: undefined;
  }
  | {
    readonly scheme: AuthenticationScheme;
    readonly outcome: "failure";
    readonly reason: AuthenticationFailureReason;
  };

/**
 * Why method security refused a call: the caller lacked every authority `@Secured` names, a
 * `@PreAuthorize` check did not hold, a `@PostAuthorize` check refused the result (all 403), or
 * there was no caller at all (401).
 */
export type AccessDenial = "authority" | "check" | "result" | "no-caller";

/** What `security()` hands its guard and its interceptor. */
export interface SecurityEvents {
  /** Records one request's authentication. */
  readonly authentication: (event: AuthenticationEvent) => void;
  /** Records one refused call. */
  readonly denied: (reason: AccessDenial) => void;
}

/** Records nothing: an app without OpenTelemetry's API. */
export const NO_EVENTS: SecurityEvents = Object.freeze({
  authentication: () => {},
  denied: () => {},
});
