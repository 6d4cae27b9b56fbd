/**
 * How a search connection proves who it is: one method per connection, HTTP basic
 * (`username`/`password`), an API key (`api_key`), a bearer token (`bearer_token`), or AWS
 * Signature Version 4 (`aws_sigv4`) for Amazon OpenSearch Service (`es`) and OpenSearch
 * Serverless (`aoss`), read from the configuration once. Every attempt of every request on every
 * host then gets its own headers from `authorize` (authorize.ts). Secrets appear in no message:
 * the configuration's errors never quote them, and the client masks what `authSecrets`
 * (authorize.ts) lists in any text it builds from an answer or an error.
 *
 * @module
 */
import { ConfigError } from "../../../config/config_error.ts";
import type { EnvLookup } from "../../../config/env.ts";
import { optionalString, shown } from "../../../config/connection_settings.ts";
import { isJsonObject } from "../../files/json_object.ts";
import { definedFields } from "../../../defined_fields.ts";

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
      ...definedFields({ sessionToken: token }),
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
    ...definedFields({ sessionToken: token }),
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
