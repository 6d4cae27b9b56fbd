// The `storage:` list: each entry a store, by kind. Pure: the configuration and the environment
// are given; every error names the file, the line and the key.
import { configLocation, configValue, type LoadedConfig } from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import type { EnvLookup } from "../config/env.ts";
import { isMapping } from "../object_guards.ts";
import { shownValue } from "../shown_value.ts";
import type { S3Settings } from "./s3_driver.ts";

/** What every store's settings hold. */
interface StoreBase {
  /** The bean's name. */
  readonly name: string;
  /** Whether it is the one injected by class (the only store is, unasked). */
  readonly primary: boolean;
}

/** A store on the disk. */
export interface FileStoreSettings extends StoreBase {
  readonly kind: "file";
  /** The folder, as written (relative to the working directory). */
  readonly folder: string;
}

/** A store in an S3-compatible bucket: where it is and who it signs as. */
export interface S3StoreSettings extends StoreBase, Omit<S3Settings, "fetch"> {
  readonly kind: "s3";
}

/** A store in an R2 bucket, through a Worker's binding. */
export interface R2StoreSettings extends StoreBase {
  readonly kind: "r2";
  /** The binding's name in the Worker's environment. */
  readonly binding: string;
}

/** One store's settings. */
export type StoreSettings = FileStoreSettings | S3StoreSettings | R2StoreSettings;

/** The store an app has when its configuration names none. */
export const DEFAULT_STORE: FileStoreSettings = {
  kind: "file",
  name: "storage",
  primary: true,
  folder: "./data/storage",
};

const KEYS: Readonly<Record<StoreSettings["kind"], readonly string[]>> = {
  file: ["name", "url", "primary"],
  s3: [
    "name",
    "url",
    "primary",
    "region",
    "endpoint",
    "path-style",
    "access-key-id",
    "secret-access-key",
    "session-token",
    "prefix",
    "timeout",
  ],
  r2: ["name", "url", "primary"],
};

// A bean's name: what `@Autowired("uploads")` writes.
const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
// S3's bucket names (the DNS-safe rules), and a binding's name (a JavaScript identifier).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const BINDING = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The stores `storage:` lists, or the default one when it lists none. */
export function storeSettings(config: LoadedConfig, env: EnvLookup): StoreSettings[] {
  const list = configValue(config.values, "storage");
  if (list === undefined || list === null) return [DEFAULT_STORE];
  if (!Array.isArray(list) || list.length === 0) {
    throw new ConfigError(
      `${
        configLocation(config, "storage")
      } is a list of stores (- name: uploads, url: s3://bucket)`,
    );
  }
  const stores = list.map((item, i) => storeOf(config, item, `storage[${i}]`, env));
  const names = new Set<string>();
  for (const [i, store] of stores.entries()) {
    if (names.has(store.name)) {
      throw new ConfigError(
        `${configLocation(config, `storage[${i}].name`)}: "${store.name}" is used twice`,
      );
    }
    names.add(store.name);
  }
  const primaries = stores.filter((store) => store.primary);
  if (primaries.length > 1) {
    throw new ConfigError(
      `${configLocation(config, "storage")}: only one store is primary, got ${
        primaries.map((store) => store.name).join(", ")
      }`,
    );
  }
  // The only store is the primary one unasked, as the only datasource is.
  return stores.length === 1 ? [{ ...stores[0] as StoreSettings, primary: true }] : stores;
}

function storeOf(config: LoadedConfig, item: unknown, key: string, env: EnvLookup): StoreSettings {
  const at = (k: string) => configLocation(config, k === "" ? key : `${key}.${k}`);
  if (!isMapping(item)) throw new ConfigError(`${at("")} is a mapping with name and url`);
  const { name, url } = item;
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new ConfigError(
      `${at("name")} is a bean name (letters, digits, _ $ -), got ${shownValue(name)}`,
    );
  }
  if (typeof url !== "string") {
    throw new ConfigError(
      `${at("url")} is file:<folder>, s3://<bucket> or r2:<BINDING>, got ${shownValue(url)}`,
    );
  }
  const kind = url.startsWith("file:")
    ? "file"
    : url.startsWith("s3://")
    ? "s3"
    : url.startsWith("r2:")
    ? "r2"
    : undefined;
  if (kind === undefined) {
    throw new ConfigError(
      `${at("url")} is file:<folder>, s3://<bucket> or r2:<BINDING>, got ${shownValue(url)}`,
    );
  }
  for (const k of Object.keys(item)) {
    if (!KEYS[kind].includes(k)) {
      throw new ConfigError(
        `${at(k)} is not a setting of a ${kind} store (${KEYS[kind].join(", ")})`,
      );
    }
  }
  const primary = booleanOf(item.primary, at("primary"));
  if (kind === "file") {
    const folder = url.slice("file:".length);
    if (folder === "") throw new ConfigError(`${at("url")} names a folder: file:./data/storage`);
    return { kind, name, primary, folder };
  }
  if (kind === "r2") {
    const binding = url.slice("r2:".length);
    if (!BINDING.test(binding)) {
      throw new ConfigError(`${at("url")} names a binding (r2:UPLOADS), got ${shownValue(url)}`);
    }
    return { kind, name, primary, binding };
  }
  return s3Of(item, at, { name, primary, url }, env);
}

function s3Of(
  item: Readonly<Record<string, unknown>>,
  at: (key: string) => string,
  base: { readonly name: string; readonly primary: boolean; readonly url: string },
  env: EnvLookup,
): S3StoreSettings {
  const bucket = base.url.slice("s3://".length);
  if (!BUCKET.test(bucket) || bucket.includes("..")) {
    throw new ConfigError(
      `${at("url")} names a bucket (s3://my-bucket), got ${shownValue(base.url)}`,
    );
  }
  const text = (key: string, fallback?: string): string | undefined => {
    const value = item[key] ?? fallback;
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      // A credential is not shown, even refused.
      const shown = key === "endpoint" || key === "region" || key === "prefix"
        ? shownValue(value)
        : typeof value;
      throw new ConfigError(`${at(key)} is text, got ${shown}`);
    }
    return value;
  };
  const endpoint = text("endpoint");
  if (endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint)) {
    throw new ConfigError(
      `${at("endpoint")} is an origin (https://host:port), got ${shownValue(endpoint)}`,
    );
  }
  const accessKeyId = text("access-key-id", env("AWS_ACCESS_KEY_ID"));
  const secretAccessKey = text("secret-access-key", env("AWS_SECRET_ACCESS_KEY"));
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new ConfigError(
      `${
        at("")
      }: an s3 store needs access-key-id and secret-access-key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`,
    );
  }
  const prefix = text("prefix") ?? "";
  if (prefix !== "" && (!prefix.endsWith("/") || prefix.startsWith("/"))) {
    throw new ConfigError(
      `${at("prefix")} ends with "/" and does not start with one, got ${shownValue(prefix)}`,
    );
  }
  return {
    kind: "s3",
    name: base.name,
    primary: base.primary,
    bucket,
    region: text("region", env("AWS_REGION") ?? env("AWS_DEFAULT_REGION")) ?? "us-east-1",
    endpoint: endpoint?.replace(/\/$/, ""),
    pathStyle: booleanOf(item["path-style"], at("path-style")),
    accessKeyId,
    secretAccessKey,
    sessionToken: text(
      "session-token",
      item["access-key-id"] === undefined ? env("AWS_SESSION_TOKEN") : undefined,
    ),
    prefix,
    timeoutMs: item.timeout === undefined
      ? 30_000
      : durationKey(item.timeout, at("timeout"), { min: 1 }),
  };
}

function booleanOf(value: unknown, where: string): boolean {
  if (value === undefined || value === false || value === "false") return false;
  if (value === true || value === "true") return true;
  throw new ConfigError(`${where} is true or false, got ${shownValue(value)}`);
}
