/**
 * How the app shows its own client credentials to an authorization server: HTTP Basic with each
 * part form-encoded first (RFC 6749, 2.3.1), as Spring Authorization Server and Keycloak read
 * them. A secret with `:`, `+` or `%` in it reaches the server as it is only this way.
 *
 * @module
 */

/** The `Authorization` header of the client `clientId` with `clientSecret`. */
export function clientAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${btoa(`${formEncoded(clientId)}:${formEncoded(clientSecret)}`)}`;
}

function formEncoded(text: string): string {
  return new URLSearchParams({ x: text }).toString().slice(2);
}
