/**
 * Every configuration key Thaw itself reads, declared once: its type and its default (the line
 * the reference documents it with is in `thaw_key_docs.ts`, which the compiler holds to every key
 * here, apart so that an app does not carry the docs). The settings reader reads these and nothing
 * else; the typo check, the environment overrides and the key reference in the docs are made from
 * this table, so a key added here is checked, reachable from the environment and documented.
 *
 * @module
 */
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";

/** What a key holds: a closed set, each with its own reading and error message. */
export type KeyType =
  /** A whole number within `min` and `max`; numeric text (from `${VAR}`) is taken. */
  | "integer"
  /** `true` or `false`, also as text. */
  | "boolean"
  /** Text. */
  | "string"
  /** One of `choices`. */
  | "choice"
  /** A list of non-empty strings; one string is a list of one, text from the environment is split on `,`. */
  | "list"
  /** Read as it is by the feature it belongs to, which checks it (its keys are declared too). */
  | "feature";

/** One key Thaw reads: a `choice` lists its choices. */
export type KeyDeclaration =
  | KeyBase & { readonly type: "choice"; readonly choices: readonly string[] }
  | KeyBase & { readonly type: Exclude<KeyType, "choice">; readonly choices?: undefined };

/** What every key declaration may say. */
interface KeyBase {
  /** The value when the key is absent; none: the feature decides (or it is off). */
  readonly default?: number | boolean | string | readonly string[];
  /** An integer's least value; 0 when not given. */
  readonly min?: number;
  /** An integer's greatest value; `Number.MAX_SAFE_INTEGER` when not given. */
  readonly max?: number;
}

/** The sections whose every key is Thaw's: an unknown key under them stops `bootstrap`. */
export const THAW_SECTIONS: readonly string[] = [
  "server",
  "management",
  "logging",
  "thaw",
  "kafka",
  "jobs",
];

/**
 * Keys under which everything is Thaw's though the section is not (`app` holds the app's own keys
 * beside `app.component-scan`; `security` may hold an app's own beside the resource server's
 * `security.oauth2`, `security.basic` and `security.api-keys`, checked once the security modules
 * declare their keys).
 */
export const THAW_SUBSECTIONS: readonly string[] = [
  "app.openapi",
  "security.oauth2",
  "security.basic",
  "security.api-keys",
];

/**
 * Sections shared with the app's own keys: a key there is the app's, unless it is near one of
 * Thaw's and holds what that key holds (`app.component-scn: ./src`), which is refused as a typo.
 * (`app.openai: { api-key: ... }` is near `app.openapi`, but holds none of its keys.)
 */
export const SHARED_SECTIONS: readonly string[] = ["app", "security"];

/**
 * Top-level sections the migration runner reads (with their own checks, where each connection's
 * keys are refused when unknown): listed so that a near miss (`datasorce:`) is warned about.
 */
export const RUNNER_SECTIONS: readonly string[] = ["datasource", "search", "opensearch"];

/**
 * Keys Thaw read once and reads no more, with what to write instead: refused with that, rather
 * than as a typo of another key.
 */
export const MOVED_KEYS: Readonly<Record<string, string>> = {
  "management.health.enabled": "the actuator serves health: bootstrap({ actuator: actuator() })",
};

/**
 * The keys of the core, which every app carries. A feature in an entry point of its own declares
 * its keys with {@linkcode declareKeys} (the actuator's `management.*`).
 */
export const THAW_KEYS = {
  // A duration, read by the feature that `@SseMapping` brings (an app without it never parses one).
  "server.sse.heartbeat": {
    type: "feature",
  },
  // Read by the feature that `@WebSocketMapping` brings, as the heartbeat is.
  "server.websocket.max-message-size": {
    type: "feature",
  },
  "server.websocket.allowed-origins": {
    type: "feature",
  },
  "server.websocket.max-buffered": {
    type: "feature",
  },
  "server.port": {
    type: "integer",
    max: 65535,
    default: 8080,
  },
  "server.hostname": {
    type: "string",
    default: "0.0.0.0",
  },
  "server.max-body-size": {
    type: "integer",
    default: 1048576,
  },
  "server.multipart.max-file-size": {
    type: "integer",
    default: 1048576,
  },
  "server.multipart.max-request-size": {
    type: "integer",
    default: 10485760,
  },
  "server.multipart.max-parts": {
    type: "integer",
    default: 1000,
  },
  "server.multipart.file-size-threshold": {
    type: "integer",
    default: 65536,
  },
  "server.multipart.location": {
    type: "string",
  },
  "server.allow-encoded-slash": {
    type: "boolean",
    default: false,
  },
  "server.shutdown-timeout": {
    type: "integer",
    max: 86400,
    default: 30,
  },
  "server.shutdown-delay": {
    type: "integer",
    max: 86400,
    default: 0,
  },
  "server.request-timeout": {
    type: "integer",
    max: MAX_DURATION_MS,
    default: 0,
  },
  // Bun's own bound by default, which Bun keeps whatever the key says. At most Node's
  // requestTimeout (5 min), which Node wants no shorter.
  "server.header-timeout": {
    type: "integer",
    min: 1,
    max: 300_000,
    default: 10_000,
  },
  "app.component-scan": {
    type: "list",
    default: [],
  },
  "app.openapi": {
    type: "feature",
  },
  "app.openapi.enabled": {
    type: "feature",
  },
  "app.openapi.path": {
    type: "feature",
  },
  "app.openapi.docs": {
    type: "feature",
  },
  "app.openapi.title": { type: "feature" },
  "app.openapi.version": { type: "feature" },
  "app.openapi.description": { type: "feature" },
  "thaw.profiles.active": {
    type: "list",
    default: [],
  },
  "thaw.scheduling.enabled": {
    type: "boolean",
    default: true,
  },
  "thaw.cache": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

interface TypeValues {
  integer: number;
  boolean: boolean;
  string: string;
  list: readonly string[];
  feature: unknown;
}

/** The value a key of `table` is read as: its type, `undefined` where it has no default. */
export type SettingOf<Table, K extends keyof Table> = Table[K] extends
  { readonly type: "choice"; readonly choices: readonly (infer C)[] } ? C
  : Table[K] extends { readonly type: infer T extends keyof TypeValues } ?
      | TypeValues[T]
      | (Table[K] extends { readonly default: unknown } ? never : undefined)
  : never;

// Appended to by the modules of entry points as they are imported, never changed after: the
// settings are read from it once the app's imports have all run.
const declared: (readonly [string, KeyDeclaration])[] = Object.entries(THAW_KEYS);

/** Declares a feature's keys beside the core's: checked, set by the environment and read alike. */
export function declareKeys(table: Readonly<Record<string, KeyDeclaration>>): void {
  for (const entry of Object.entries(table)) {
    if (!declared.some(([key]) => key === entry[0])) declared.push(entry);
  }
}

/** The declarations as a list: the core's in the table's order, then those declared since. */
export function keyDeclarations(): readonly (readonly [string, KeyDeclaration])[] {
  return declared;
}
