// Why the brokers would not let a client in, when the cause is the connection's security. The
// package reports a refused password or an untrusted certificate deep in the errors of its tries
// ("initProducerId failed 11 times."), where a log line or a rejected send hides it; these name
// it, with the keys that set it, on Deno, Bun and Node alike (each reports the same codes).

/** What a client says of itself that the explanation names; never the password. */
export interface ClientIdentity {
  readonly sasl?: { readonly mechanism: string; readonly username?: unknown } | undefined;
}

const TRUST_STORE =
  "kafka.ssl.trust-store-certificates holds the certificates it is checked against";

// Node's (and Bun's and Deno's node:tls) codes for a broker certificate the client refuses, and
// what to look at for each.
const REFUSED_CERTIFICATE: ReadonlyMap<string, string> = new Map([
  ...[
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "UNABLE_TO_GET_ISSUER_CERT",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
    "CERT_UNTRUSTED",
    "CERT_SIGNATURE_FAILURE",
  ].map((code) => [code, `is not trusted (${code}); ${TRUST_STORE}`] as const),
  ...["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"].map((code) =>
    [code, `is outside its validity dates (${code})`] as const
  ),
  [
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "does not name the host the client reached (ERR_TLS_CERT_ALTNAME_INVALID); the brokers' " +
    "advertised host names must be in their certificates",
  ],
]);

// How many errors the walk reads at most: the client's tries nest a few dozen.
const MAX_ERRORS = 1000;

// The errors an error holds (an AggregateError's, its cause), breadth first, each once.
function* errorTree(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  for (let at = 0; at < queue.length && seen.size < MAX_ERRORS; at++) {
    const node = queue[at];
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    const fields = node as Record<string, unknown>;
    yield fields;
    if (Array.isArray(fields.errors)) queue.push(...fields.errors.slice(0, MAX_ERRORS));
    queue.push(fields.cause);
  }
}

function explain(error: unknown, client: ClientIdentity): string | undefined {
  const nodes = [...errorTree(error)];
  const mechanism = client.sasl?.mechanism ?? "";
  // A mechanism the listener does not offer is said as an authentication failure too.
  if (nodes.some((node) => node.apiId === "UNSUPPORTED_SASL_MECHANISM")) {
    return `the broker does not take the SASL mechanism ${mechanism} on this listener; see ` +
      "kafka.sasl.mechanism and kafka.security.protocol";
  }
  for (const node of nodes) {
    if (node.code === "PLT_KFK_AUTHENTICATION") {
      const username = client.sasl?.username;
      const who = typeof username === "string"
        ? ` of ${JSON.stringify(username)} (${mechanism})`
        : mechanism === ""
        ? ""
        : ` (${mechanism})`;
      return `the broker refused the SASL credentials${who}; see kafka.sasl.username and ` +
        "kafka.sasl.password";
    }
    const certificate = typeof node.code === "string"
      ? REFUSED_CERTIFICATE.get(node.code)
      : undefined;
    if (certificate !== undefined) return `the broker's TLS certificate ${certificate}`;
  }
  return undefined;
}

/**
 * Why `error` (what the Kafka client rejected with) happened, when a broker refused the client's
 * SASL credentials or mechanism, or the client refused a broker's certificate; `undefined`
 * otherwise, and for an error that cannot be read (a getter that throws, a Proxy): it never
 * throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { securityFailure } from "./security_failure.ts";
 *
 * const refused = Object.assign(new Error("SASL authentication failed."), {
 *   code: "PLT_KFK_AUTHENTICATION",
 * });
 * const tries = new AggregateError([new Error("Connection failed.", { cause: refused })]);
 * assert.equal(
 *   securityFailure(tries, { sasl: { mechanism: "PLAIN", username: "orders" } }),
 *   'the broker refused the SASL credentials of "orders" (PLAIN); see kafka.sasl.username and ' +
 *     "kafka.sasl.password",
 * );
 * assert.equal(securityFailure(new Error("Connection closed"), {}), undefined);
 * ```
 */
export function securityFailure(error: unknown, client: ClientIdentity): string | undefined {
  try {
    return explain(error, client);
  } catch {
    return undefined;
  }
}

/**
 * `error` itself, or, when {@linkcode securityFailure} says why, an error that says it after
 * `prefix` (`send("orders"): `), with `error` as its cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { explainedError } from "./security_failure.ts";
 *
 * const refused = Object.assign(new Error("SASL authentication failed."), {
 *   code: "PLT_KFK_AUTHENTICATION",
 * });
 * const explained = explainedError(refused, {}, 'send("orders"): ') as Error;
 * assert.equal(
 *   explained.message,
 *   'send("orders"): the broker refused the SASL credentials; see kafka.sasl.username and ' +
 *     "kafka.sasl.password",
 * );
 * assert.equal(explained.cause, refused);
 * const other = new Error("Connection closed");
 * assert.equal(explainedError(other, {}), other);
 * ```
 */
export function explainedError(error: unknown, client: ClientIdentity, prefix = ""): unknown {
  const why = securityFailure(error, client);
  return why === undefined ? error : new Error(`${prefix}${why}`, { cause: error });
}
