/**
 * How a search connection proves who it is: one method per connection, HTTP basic
 * (`username`/`password`), an API key (`api_key`), a bearer token (`bearer_token`), or AWS
 * Signature Version 4 (`aws_sigv4`) for Amazon OpenSearch Service (`es`) and OpenSearch
 * Serverless (`aoss`). The configuration is read once; every attempt of every request on every
 * host then gets its own headers from {@linkcode authorize}. Secrets appear in no message: the
 * configuration's errors never quote them, and {@linkcode authSecrets} lists what the client masks
 * in any text it builds from an answer or an error.
 *
 * SigV4 is signed by aws4fetch (Web Crypto, no dependencies), loaded with `import()` the first
 * time a request is signed: an application that never signs never evaluates it.
 *
 * @module
 */
import { ConfigError } from "../../../config/config_error.ts";
import type { EnvLookup } from "../../../config/env.ts";
import { optionalString, shown } from "../../config/connection_settings.ts";
import { isJsonObject } from "../../files/json_object.ts";

/** The services SigV4 signs for: Amazon OpenSearch Service and OpenSearch Serverless. */
export type AwsService = "es" | "aoss";

/** An AWS key pair, with the session token of temporary credentials. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** How a connection authenticates: a closed set, one per connection. */
export type SearchAuth =
  | { readonly method: "basic"; readonly username: string; readonly password: string }
  | { readonly method: "api_key"; readonly apiKey: string }
  | { readonly method: "bearer_token"; readonly token: string }
  | {
    readonly method: "aws_sigv4";
    readonly region: string;
    readonly service: AwsService;
    readonly credentials: AwsCredentials;
  };

/** The connection keys this module reads, beside `username` and `password`. */
export const AUTH_KEYS: readonly string[] = ["api_key", "bearer_token", "aws_sigv4"];

/** The environment variables SigV4 credentials come from when the config gives none. */
export const AWS_ENV = {
  accessKeyId: "AWS_ACCESS_KEY_ID",
  secretAccessKey: "AWS_SECRET_ACCESS_KEY",
  sessionToken: "AWS_SESSION_TOKEN",
} as const;

const SIGV4_KEYS = ["region", "service", "access_key_id", "secret_access_key", "session_token"];
const SERVICES: readonly string[] = ["es", "aoss"] satisfies AwsService[];
// eu-west-1, us-gov-west-1, cn-north-1: the region is part of what is signed, nothing else.
const REGION = /^[a-z0-9]+(-[a-z0-9]+)+$/;
// What may go into a header (or a signing key): printable ASCII, no space. Refusing a line break
// here is what keeps a value from adding a header of its own, and a runtime's "invalid header
// value" error (which may quote the value) from ever happening.
const CREDENTIAL = /^[\x21-\x7e]+$/;

/**
 * Reads the authentication of one connection entry. A method counts as given when its key has a
 * value: an empty string (what `${VAR:}` gives for an unset variable) counts as not given, so a
 * configuration can leave the choice to the environment. Two given methods are an error. A value
 * that may be a secret is never shown in a message.
 *
 * @param values the entry's keys
 * @param at `file:line: key` of one of the entry's keys
 * @param env where SigV4 credentials come from when the config gives none
 */
export function authSetting(
  values: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
  env?: EnvLookup,
): SearchAuth | undefined {
  const given = (key: string) => {
    const v = values[key];
    return v !== undefined && v !== null && v !== "";
  };
  const methods: { readonly name: string; readonly key: string }[] = [];
  const basicKey = ["username", "password"].find(given);
  if (basicKey !== undefined) methods.push({ name: "username/password", key: basicKey });
  for (const key of ["api_key", "bearer_token"]) if (given(key)) methods.push({ name: key, key });
  // `aws_sigv4:` with every line commented out is a mistake to report, not "no signing".
  if (values.aws_sigv4 !== undefined) methods.push({ name: "aws_sigv4", key: "aws_sigv4" });
  if (methods.length > 1) {
    throw new ConfigError(
      `${at(methods[1].key)}: ${methods[1].name} and ${methods[0].name} are both given; a ` +
        `connection authenticates one way: username/password, api_key, bearer_token or aws_sigv4`,
    );
  }
  switch (methods[0]?.name) {
    case "api_key":
      return { method: "api_key", apiKey: credential(values.api_key, at("api_key"))! };
    case "bearer_token":
      return {
        method: "bearer_token",
        token: credential(values.bearer_token, at("bearer_token"))!,
      };
    case "aws_sigv4":
      return sigV4Setting(values.aws_sigv4, at, env);
  }
  // As before: a `username` (even empty) is basic authentication.
  const username = optionalString(values.username, at("username"));
  if (username === undefined) return undefined;
  const password = optionalString(values.password, at("password"), true) ?? "";
  return { method: "basic", username, password };
}

function sigV4Setting(
  value: unknown,
  at: (key: string) => string,
  env: EnvLookup | undefined,
): SearchAuth {
  const where = at("aws_sigv4");
  const settings = value ?? {};
  if (!isJsonObject(settings)) {
    throw new ConfigError(
      `${where} must be a mapping (region: eu-west-1, service: es or aoss), got ${kind(settings)}`,
    );
  }
  for (const k of Object.keys(settings)) {
    if (!SIGV4_KEYS.includes(k)) {
      throw new ConfigError(
        `${at(`aws_sigv4.${k}`)} is not an aws_sigv4 setting (${SIGV4_KEYS.join(", ")})`,
      );
    }
  }
  const region = optionalString(settings.region, at("aws_sigv4.region"));
  if (region === undefined || region === "") {
    throw new ConfigError(
      `${at("aws_sigv4.region")} is missing: the AWS region of the domain or collection ` +
        `(eu-west-1; \${AWS_REGION} reads it from the environment)`,
    );
  }
  if (!REGION.test(region)) {
    throw new ConfigError(
      `${at("aws_sigv4.region")} must be an AWS region such as eu-west-1, got ${shown(region)}`,
    );
  }
  const service = settings.service ?? "es";
  if (typeof service !== "string" || !SERVICES.includes(service)) {
    throw new ConfigError(
      `${at("aws_sigv4.service")} must be es (Amazon OpenSearch Service) or aoss (OpenSearch ` +
        `Serverless), got ${shown(service)}`,
    );
  }
  const id = credential(settings.access_key_id, at("aws_sigv4.access_key_id"));
  const secret = credential(settings.secret_access_key, at("aws_sigv4.secret_access_key"));
  const token = credential(settings.session_token, at("aws_sigv4.session_token"));
  let credentials: AwsCredentials;
  if (id !== undefined && secret !== undefined) {
    credentials = {
      accessKeyId: id,
      secretAccessKey: secret,
      ...(token === undefined ? {} : { sessionToken: token }),
    };
  } else if (id !== undefined || secret !== undefined) {
    const missing = id === undefined ? "access_key_id" : "secret_access_key";
    throw new ConfigError(
      `${at(`aws_sigv4.${missing}`)} is missing: access_key_id and secret_access_key go together`,
    );
  } else if (token !== undefined) {
    throw new ConfigError(
      `${at("aws_sigv4.session_token")} needs access_key_id and secret_access_key beside it ` +
        `(without all three, the credentials come from ${AWS_ENV.accessKeyId}, ` +
        `${AWS_ENV.secretAccessKey} and ${AWS_ENV.sessionToken})`,
    );
  } else {
    credentials = environmentCredentials(env, where);
  }
  return { method: "aws_sigv4", region, service: service as AwsService, credentials };
}

// The standard variables, read only when the config gives no key, and never mixed with it.
function environmentCredentials(env: EnvLookup | undefined, where: string): AwsCredentials {
  const read = (name: string): string | undefined => {
    let value: string | undefined;
    try {
      value = env?.(name);
    } catch (error) {
      throw new ConfigError(
        `${where} gives no access_key_id, and the environment cannot be read (under Deno, run ` +
          `with --allow-env=${Object.values(AWS_ENV).join(",")}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    return credential(value, `${where}: the environment variable ${name}`);
  };
  const id = read(AWS_ENV.accessKeyId);
  const secret = read(AWS_ENV.secretAccessKey);
  if (id === undefined && secret === undefined) {
    throw new ConfigError(
      `${where} has no credentials: give access_key_id and secret_access_key (with ` +
        `session_token for temporary ones), or set ${AWS_ENV.accessKeyId} and ` +
        `${AWS_ENV.secretAccessKey} (and ${AWS_ENV.sessionToken})`,
    );
  }
  if (id === undefined || secret === undefined) {
    const [missing, set] = id === undefined
      ? [AWS_ENV.accessKeyId, AWS_ENV.secretAccessKey]
      : [AWS_ENV.secretAccessKey, AWS_ENV.accessKeyId];
    throw new ConfigError(`${where}: ${set} is set but ${missing} is not; set both`);
  }
  const token = read(AWS_ENV.sessionToken);
  return {
    accessKeyId: id,
    secretAccessKey: secret,
    ...(token === undefined ? {} : { sessionToken: token }),
  };
}

// A secret: a string of printable ASCII; empty is not given. The value is never shown.
function credential(value: unknown, where: string): string | undefined {
  const text = optionalString(value, where, true);
  if (text === undefined || text === "") return undefined;
  if (!CREDENTIAL.test(text)) {
    throw new ConfigError(
      `${where} must be printable ASCII without spaces or line breaks (a trailing newline?); ` +
        `the value is not shown`,
    );
  }
  return text;
}

/** What a value is, without showing it. */
function kind(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}

/** One attempt of a request, on one host. */
export interface AuthRequest {
  readonly method: string;
  /** The host's URL joined with the request's path and query. */
  readonly url: URL;
  /** The exact text sent as the body; `undefined` for none. */
  readonly body: string | undefined;
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
          body: request.body,
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
  readonly body?: string;
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
    body: request.body ?? "",
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    sessionToken: credentials.sessionToken,
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

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
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

const MASK = "***";

/**
 * `text` with every secret masked: as written, percent-encoded, and escaped inside a JSON
 * string (an error body quoting a header).
 */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (
      const form of new Set([
        secret,
        encodeURIComponent(secret),
        JSON.stringify(secret).slice(1, -1),
      ])
    ) {
      out = out.replaceAll(form, MASK);
    }
  }
  return out;
}

/**
 * A parsed JSON value with every secret masked in every string, keys included. A body is
 * untrusted: nesting deeper than any error body has is cut rather than walked.
 */
export function maskJson(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === "string") return maskSecrets(value, secrets);
  if (value === null || typeof value !== "object") return value;
  if (depth >= 64) return "(nested too deep)";
  if (Array.isArray(value)) return value.map((v) => maskJson(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Defined as an own property: a "__proto__" key of a body stays a key.
    Object.defineProperty(out, maskSecrets(k, secrets), {
      value: maskJson(v, secrets, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
