/**
 * Security: `security()` for `bootstrap({ security })`, the JWT resource server (Spring Boot's
 * `security.oauth2.resourceserver.jwt.*` keys; tokens checked with jose, on every runtime), HTTP
 * Basic against the app's `UserDetailsService` (PBKDF2 hashes: `hashPassword`) and API keys, the
 * caller as `SecurityContext.current()` and the `Principal()` binder, `@PermitAll()`, and method
 * security: `@Secured`, `@PreAuthorize` and `@PostAuthorize` on any bean's methods
 * (`AccessDeniedError`).
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * @example An app whose routes need a bearer token signed by the issuer's key
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { security } from "@thaw/thaw/security";
 * import { exportSPKI, generateKeyPair } from "jose";
 *
 * const { publicKey } = await generateKeyPair("ES256", { extractable: true });
 * const app = await bootstrap({
 *   config: {
 *     security: { oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } } },
 *   },
 *   security: security(),
 * });
 * // No token: 401, whether a route is there or not.
 * const anonymous = await app.fetch(new Request("http://localhost/anything"));
 * assert.equal(anonymous.status, 401);
 * assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
 * await app.close();
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/security.md
 *
 * @module
 */
import "./src/config/security_keys.ts";
import "./src/config/security_scheme_keys.ts";

export { security, type SecurityOptions } from "./src/security/security_setup.ts";
export type { TokenValidator } from "./src/security/bearer_authenticator.ts";
export type { SecurityFeature } from "./src/security/security_feature.ts";
export { type Authentication, SecurityContext } from "./src/security/security_context.ts";
export { Principal } from "./src/security/principal.ts";
export type { Binder } from "./src/web/binder.ts";
export { PermitAll, type PermitAllDecorator } from "./src/security/permit_all.ts";
export {
  PostAuthorize,
  type PostAuthorizeDecorator,
  PreAuthorize,
  type PreAuthorizeDecorator,
  Secured,
  type SecuredDecorator,
} from "./src/security/method_security.ts";
export { AccessDeniedError } from "./src/security/access_denied_error.ts";
export { TokenClient, type TokenClientOptions } from "./src/security/token_client.ts";
export { TokenClientError } from "./src/security/token_client_error.ts";
export { relay } from "./src/security/token_relay.ts";
export type { ClientRegistration, TokenEndpoint } from "./src/security/client_registrations.ts";
export { hashPassword } from "./src/security/password_hash.ts";
export {
  type TestClaims,
  type TestTokenConfig,
  type TestTokenOptions,
  TestTokens,
  testTokens,
} from "./src/security/test_tokens.ts";
export { type UserDetails, UserDetailsService } from "./src/security/user_details.ts";
export {
  TOKEN_FAILURE_REASONS,
  TokenFailure,
  type TokenFailureReason,
} from "./src/security/token_failure.ts";
