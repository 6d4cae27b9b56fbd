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
  return anyCause(
    error,
    ({ code, message }) =>
      (typeof code === "string" && NOT_CONNECTED.has(code)) ||
      (typeof message === "string" && message.includes("client error (Connect)")),
  );
}

/**
 * Error codes of a connection that closed under a request: reset by the peer, a write to a
 * closed socket, undici's "other side closed", an aborted connection.
 */
const DROPPED = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ECONNABORTED"]);

/**
 * Whether a failed `fetch` ended because its connection was closed under it, without an answer:
 * what a kept-alive connection that a proxy or load balancer closed while idle gives the next
 * request sent on it. Not a timeout, a refused connection, a TLS or an HTTP-level error. Node's
 * `node:http` and Bun say `ECONNRESET`, undici `UND_ERR_SOCKET`; Deno's fetch gives no code, only
 * hyper's or the system's words (it sends such a request once more by itself first, which may take
 * another dead connection of the pool).
 */
export function connectionDropped(error: unknown): boolean {
  return anyCause(
    error,
    ({ code, message }) =>
      (typeof code === "string" && DROPPED.has(code)) ||
      (typeof message === "string" && DENO_DROPPED.test(message)),
  );
}

const DENO_DROPPED =
  /connection closed before message completed|Connection reset by peer \(os error 104\)|Broken pipe \(os error 32\)/;

/** Whether `test` holds for the error or one of its first causes (4 at most: causes may loop). */
function anyCause(
  error: unknown,
  test: (e: { code?: unknown; message?: unknown }) => boolean,
): boolean {
  for (
    let e: unknown = error, depth = 0;
    e !== null && typeof e === "object" && depth < 4;
    depth++
  ) {
    if (test(e as { code?: unknown; message?: unknown })) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
