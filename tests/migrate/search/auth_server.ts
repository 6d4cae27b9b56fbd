import { createHash, createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import { forward, serveLoopback } from "./loopback_server.ts";

/** Credentials a SigV4 checking server knows, by access key id. */
export interface KnownKey {
  readonly secretAccessKey: string;
  /** The session token the key must come with (temporary credentials). */
  readonly sessionToken?: string;
}

/** What a SigV4 checking server accepts. */
export interface SigV4Check {
  readonly region: string;
  readonly service: string;
  readonly keys: ReadonlyMap<string, KnownKey>;
}

/** One request as an auth server received it. */
export interface AuthReceived {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** SigV4 only: `undefined` when the signature holds, else why it does not. */
  readonly refused?: string;
}

/**
 * What an auth server does with a request that passed its checks: `forward` it to the real node
 * (without its authentication headers), or answer `{ status, body }` itself (`body` a string is
 * sent as text, anything else as JSON). `answer` sees the request, to echo its headers.
 */
export type AuthAnswer = "forward" | { readonly status: number; readonly body: unknown };

/** A loopback host in front of the real node that checks or records authentication. */
export interface AuthServer {
  readonly url: string;
  /** Every request received, in order. */
  readonly received: readonly AuthReceived[];
  close(): Promise<void>;
}

/** The body AWS answers a request whose signature does not hold. */
export const SIGNATURE_MISMATCH = {
  message: "The request signature we calculated does not match the signature you provided. " +
    "Check your AWS Secret Access Key and signing method. Consult the service documentation " +
    "for details.",
};

// SHA-256 and HMAC-SHA256 on node:crypto, in the shape @smithy/signature-v4 takes: an
// implementation independent of the Web Crypto one aws4fetch signs with.
class NodeSha256 {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {}
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === "string") return data;
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  return new Uint8Array(data);
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * Whether a received request carries a valid SigV4 signature, checked as AWS does: the scope (key,
 * date, region, service), the time within 5 minutes, the body's SHA-256 against
 * `x-amz-content-sha256`, the host being this server, the session token of temporary
 * credentials, and the signature itself, recomputed by `@smithy/signature-v4` (the AWS SDK's
 * signer) over exactly the headers the request says it signed. `undefined` when it holds.
 */
export async function sigV4Problem(
  check: SigV4Check,
  request: { method: string; path: string; headers: IncomingHttpHeaders; body: string },
  host: string,
  now: Date = new Date(),
): Promise<string | undefined> {
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v.join(",") : v;
  };
  const authorization = header("authorization");
  if (authorization === undefined) return "no Authorization header";
  const m = AUTHORIZATION.exec(authorization);
  if (m === null) return "malformed Authorization header";
  const [, keyId, day, region, service, signedList] = m;
  const key = check.keys.get(keyId);
  if (key === undefined) return "unknown access key id";
  if (region !== check.region) return `region ${region}, expected ${check.region}`;
  if (service !== check.service) return `service ${service}, expected ${check.service}`;
  const amzDate = header("x-amz-date") ?? "";
  const d = AMZ_DATE.exec(amzDate);
  if (d === null) return "no x-amz-date";
  if (!amzDate.startsWith(day)) return "x-amz-date is not the day of the credential scope";
  const signedAt = new Date(Date.UTC(+d[1], +d[2] - 1, +d[3], +d[4], +d[5], +d[6]));
  if (Math.abs(signedAt.getTime() - now.getTime()) > 5 * 60_000) return "signed too long ago";
  const signed = signedList.split(";");
  for (const required of ["host", "x-amz-date", "x-amz-content-sha256"]) {
    if (!signed.includes(required)) return `${required} is not signed`;
  }
  if (header("host") !== host) return `signed for host ${header("host")}, this is ${host}`;
  const bodyHash = createHash("sha256").update(request.body).digest("hex");
  if (header("x-amz-content-sha256") !== bodyHash) return "x-amz-content-sha256 is not the body's";
  if ((header("x-amz-security-token") ?? undefined) !== key.sessionToken) {
    return "wrong or missing session token";
  }
  if (key.sessionToken !== undefined && !signed.includes("x-amz-security-token")) {
    return "the session token is not signed";
  }
  const [pathname, query = ""] = splitOnce(request.path, "?");
  const parsed: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const had = parsed[name];
    parsed[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  // The signer adds x-amz-date and the token itself; every other signed header as received.
  const headers: Record<string, string> = {};
  for (const name of signed) {
    if (name === "x-amz-date" || name === "x-amz-security-token") continue;
    const value = header(name);
    if (value === undefined) return `signed header ${name} is missing`;
    headers[name] = value;
  }
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: keyId,
      secretAccessKey: key.secretAccessKey,
      ...(key.sessionToken === undefined ? {} : { sessionToken: key.sessionToken }),
    },
    region: check.region,
    service: check.service,
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  const expected = await signer.sign({
    method: request.method,
    protocol: "http:",
    hostname: host.split(":")[0],
    path: pathname,
    query: parsed,
    headers,
    body: request.body,
  }, { signingDate: signedAt });
  if (expected.headers.authorization !== authorization) return "signature mismatch";
  return undefined;
}

function splitOnce(text: string, separator: string): [string, string?] {
  const i = text.indexOf(separator);
  return i === -1 ? [text] : [text.slice(0, i), text.slice(i + 1)];
}

const AUTH_HEADERS = [
  "authorization",
  "x-amz-date",
  "x-amz-content-sha256",
  "x-amz-security-token",
];

/**
 * Starts a server on 127.0.0.1 in front of `upstream` (the real node). With `sigv4`, a request
 * whose signature does not hold is answered 403 with AWS's body and not forwarded. Then `answer`
 * decides (default: forward). A forwarded request loses its authentication headers.
 */
export async function startAuthServer(
  upstream: string,
  options: { sigv4?: SigV4Check; answer?: (r: AuthReceived) => AuthAnswer } = {},
): Promise<AuthServer> {
  const received: AuthReceived[] = [];
  let host = "";
  const server = await serveLoopback(async (req, res, raw) => {
    const request = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: req.headers,
      body: raw.toString("utf8"),
    };
    const refused = options.sigv4 === undefined
      ? undefined
      : await sigV4Problem(options.sigv4, request, host).catch((e) => `verifier: ${e}`);
    const entry: AuthReceived = { ...request, ...(refused === undefined ? {} : { refused }) };
    received.push(entry);
    if (refused !== undefined) {
      const known = !refused.startsWith("unknown access key");
      res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify(
        known
          ? SIGNATURE_MISMATCH
          : { message: "The security token included in the request is invalid." },
      ));
      return;
    }
    const answer = options.answer?.(entry) ?? "forward";
    if (answer !== "forward") {
      const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
      const type = typeof answer.body === "string" ? "text/plain" : "application/json";
      res.writeHead(answer.status, { "content-type": type }).end(text);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (AUTH_HEADERS.includes(name) || typeof value !== "string") continue;
      if (name === "content-type" || name === "accept") headers[name] = value;
    }
    const forwarded = await forward(upstream, req, raw, headers);
    res.writeHead(forwarded.status, { "content-type": "application/json" }).end(forwarded.text);
  });
  // Read by the signature check, which runs only once requests come.
  host = server.host;
  return { url: server.url, received, close: () => server.close() };
}
