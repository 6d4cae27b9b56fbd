/** The code the `node:http` transport gives its connect timeout: undici's own. */
export const CONNECT_TIMEOUT_CODE = "UND_ERR_CONNECT_TIMEOUT";

/**
 * Error codes that mean the connection was never made, so no byte of the request reached the host:
 * refused, no route, DNS, and a connect timeout (undici's, and the `node:http` transport's own).
 * Node and Bun put them on the error or its cause.
 */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  CONNECT_TIMEOUT_CODE,
  "ConnectionRefused",
  "FailedToOpenSocket",
]);

/**
 * Whether a failed `fetch` provably never sent the request: the connection itself failed. A reset,
 * a timeout after connecting, or an error this does not know are not proof: the host may have
 * forwarded the request to the cluster before the answer was lost. Deno names the phase in its
 * message (`client error (Connect)`: refused, DNS, TLS handshake) instead of a code.
 */
export function neverSent(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e !== null && typeof e === "object" && depth < 4;
    depth++
  ) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && NOT_CONNECTED.has(code)) return true;
    if (typeof message === "string" && message.includes("client error (Connect)")) return true;
    e = cause;
  }
  return false;
}
