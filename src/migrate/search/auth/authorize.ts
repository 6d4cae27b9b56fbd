/**
 * The authentication headers of each attempt of a search request, by the connection's method
 * (search_auth.ts): made again for every attempt on every host, a SigV4 signature for that host
 * and that time. {@linkcode authSecrets} lists the secrets those headers carry, which the client
 * masks in any text it builds from an answer or an error.
 *
 * SigV4 is signed by aws4fetch (Web Crypto, no dependencies), loaded with `import()` the first
 * time a request is signed: an application that never signs never evaluates it.
 *
 * @module
 */
import type { AwsCredentials, SearchAuth } from "./search_auth.ts";

/** One attempt of a request, on one host. */
export interface AuthRequest {
  readonly method: string;
  /** The host's URL joined with the request's path and query. */
  readonly url: URL;
  /** The exact body sent, text or bytes (a compressed one); `undefined` for none. */
  readonly body: string | Uint8Array | undefined;
}

/** What one attempt sends: its URL (exactly as signed) and the headers to add. */
export interface Authorized {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The URL and the authentication headers for one attempt of one request on one host: a SigV4
 * signature covers the host, the path, the query and the body, so it is made again for each host
 * and each attempt, never reused.
 *
 * Under SigV4 the query is written the way the signature reads it (each name and value
 * percent-encoded as RFC 3986 says, `+` as a space, as `URLSearchParams` reads it) so that the
 * URL sent is exactly the URL signed; the path is signed as sent (aws4fetch encodes it again for
 * the canonical request, as AWS does on its side). `x-amz-content-sha256` is always sent
 * (OpenSearch Serverless requires it), `x-amz-security-token` with temporary credentials.
 *
 * @param auth the connection's method (`undefined`: none)
 * @param request the attempt
 * @param now the clock of the signature (tests give a fixed one)
 */
export async function authorize(
  auth: SearchAuth | undefined,
  request: AuthRequest,
  now: () => Date = () => new Date(),
): Promise<Authorized> {
  const out = await authorized(auth, request, now);
  // A connection made in code skips the configuration's checks: a value that would add a header
  // of its own, or that a runtime would refuse (quoting it in its error), is not sent.
  for (const [name, value] of Object.entries(out.headers)) {
    if (!HEADER_VALUE.test(value)) {
      throw new Error(
        `the ${name} header would hold a line break or a character outside printable ASCII`,
      );
    }
  }
  return out;
}

// A header value as sent: printable ASCII and spaces (the Authorization scheme's separator).
const HEADER_VALUE = /^[\x20-\x7e]*$/;

async function authorized(
  auth: SearchAuth | undefined,
  request: AuthRequest,
  now: () => Date,
): Promise<Authorized> {
  const { url } = request;
  switch (auth?.method) {
    case undefined:
      return { url, headers: {} };
    case "basic": {
      const pair = new TextEncoder().encode(`${auth.username}:${auth.password}`);
      return { url, headers: { authorization: `Basic ${base64(pair)}` } };
    }
    case "api_key":
      return { url, headers: { authorization: `ApiKey ${auth.apiKey}` } };
    case "bearer_token":
      return { url, headers: { authorization: `Bearer ${auth.token}` } };
    case "aws_sigv4": {
      const signed = signableUrl(url);
      const payloadHash = await sha256Hex(request.body ?? "");
      const headers = await signV4(
        {
          method: request.method,
          url: signed,
          headers: { "x-amz-content-sha256": payloadHash },
          ...(request.body === undefined ? {} : { body: request.body }),
        },
        auth,
        now(),
      );
      return { url: signed, headers };
    }
    default:
      return auth satisfies never;
  }
}

/** What a SigV4 signature is made for: the region, the service and the credentials. */
export interface SigV4Scope {
  readonly region: string;
  /** `es` or `aoss` for a search connection; any service name for the published test vectors. */
  readonly service: string;
  readonly credentials: AwsCredentials;
}

/** One request to sign, as {@linkcode signV4} takes it. */
export interface SigV4Request {
  readonly method: string;
  readonly url: URL;
  /** Headers to sign, sent as they are; the host is the URL's. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body; its SHA-256 is signed unless `x-amz-content-sha256` is among the headers. */
  readonly body?: string | Uint8Array;
}

/**
 * Signs one request with AWS Signature Version 4 through aws4fetch: every header given is signed,
 * with the host (the URL's), `x-amz-date` (from `at`) and `x-amz-security-token` (temporary
 * credentials). Returns the headers to send, lowercase: those given, and `authorization`,
 * `x-amz-date` and `x-amz-security-token` as aws4fetch set them.
 *
 * @param request what is sent; the URL must be the one sent, byte for byte
 * @param scope the region, the service and the credentials
 * @param at the time of the signature
 */
export async function signV4(
  request: SigV4Request,
  scope: SigV4Scope,
  at: Date,
): Promise<Record<string, string>> {
  const { AwsV4Signer } = await aws4fetch();
  const { credentials } = scope;
  const signer = new AwsV4Signer({
    method: request.method,
    url: request.url.href,
    headers: { ...request.headers },
    body: (request.body ?? "") as BodyInit,
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    region: scope.region,
    service: scope.service,
    datetime: at.toISOString().replace(/[:-]|\.\d{3}/g, ""),
    // Exactly the headers given are signed (aws4fetch would leave out content-type).
    allHeaders: true,
  });
  const signed = await signer.sign();
  const headers: Record<string, string> = {};
  signed.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

// The signer's module, loaded once for the process (again after a failure): module-level as a
// module is.
let loading: Promise<typeof import("aws4fetch")> | undefined;

function aws4fetch(): Promise<typeof import("aws4fetch")> {
  loading ??= import("aws4fetch").catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * `url` with its query written as the signature reads it: `URLSearchParams`' names and values,
 * each encoded as RFC 3986 says (aws4fetch's encoding), in their order; a parameter with an
 * empty name, which aws4fetch leaves out of the signature, is left out of the request too.
 */
function signableUrl(url: URL): URL {
  const out = new URL(url.href);
  const pairs = [...url.searchParams].filter(([name]) => name !== "")
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`);
  out.search = pairs.length === 0 ? "" : `?${pairs.join("&")}`;
  return out;
}

function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/**
 * The secrets of a method, longest first: what must never be printed. Every value sent as it is
 * (an API key, a token, the AWS keys: an error body may echo the header, and a signature's
 * `Credential=` carries the access key id), and Basic's header value (its Base64 holds the
 * password). Basic's password itself only from 8 characters: a server echoes the header, not the
 * decoded password, and masking a demo cluster's `admin` would garble its own messages
 * (`indices:admin/create`, `User [name=admin]`).
 */
export function authSecrets(auth: SearchAuth | undefined): string[] {
  const secrets: string[] = [];
  switch (auth?.method) {
    case "basic":
      secrets.push(base64(new TextEncoder().encode(`${auth.username}:${auth.password}`)));
      if (auth.password.length >= 8) secrets.push(auth.password);
      break;
    case "api_key":
      secrets.push(auth.apiKey);
      break;
    case "bearer_token":
      secrets.push(auth.token);
      break;
    case "aws_sigv4": {
      const c = auth.credentials;
      secrets.push(c.accessKeyId, c.secretAccessKey, ...c.sessionToken ? [c.sessionToken] : []);
      break;
    }
  }
  return [...new Set(secrets.filter((s) => s !== ""))].sort((a, b) => b.length - a.length);
}
