// The `server.websocket.*` keys, read by the feature `@WebSocketMapping` brings: an app without it
// carries no code for them.
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { serializedOrigin } from "./websocket_origin.ts";

/** `server.websocket.max-message-size` when the configuration leaves it out: 1 MiB. */
export const DEFAULT_MAX_MESSAGE_SIZE = 1_048_576;

/** `server.websocket.max-buffered` when the configuration leaves it out: 16 MiB. */
export const DEFAULT_MAX_BUFFERED = 16_777_216;

/** What the sockets of an app are bound by. */
export interface WebSocketSettings {
  /** The largest message, in bytes. */
  readonly maxMessageSize: number;
  /** The most bytes a socket may hold waiting to be sent, in bytes. */
  readonly maxBuffered: number;
  /** The origins, as browsers send them, whose pages may open a socket; `*`: any. */
  readonly allowedOrigins: readonly string[];
}

/**
 * Reads `server.websocket.max-message-size` and `server.websocket.max-buffered` (each a whole
 * number of bytes, at least 1; numeric text as the environment gives it) and
 * `server.websocket.allowed-origins` (origins, or `*`; a text is split on `,`), each refused with a
 * `ConfigError` that says where it is.
 */
export function webSocketSettings(settings: ThawSettings): WebSocketSettings {
  return {
    maxMessageSize: bytes(settings, "server.websocket.max-message-size", DEFAULT_MAX_MESSAGE_SIZE),
    maxBuffered: bytes(settings, "server.websocket.max-buffered", DEFAULT_MAX_BUFFERED),
    allowedOrigins: allowedOrigins(settings),
  };
}

function bytes(
  settings: ThawSettings,
  key: "server.websocket.max-message-size" | "server.websocket.max-buffered",
  fallback: number,
): number {
  const value = settings.get(key);
  if (value === undefined || value === null) return fallback;
  const size = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 1) {
    throw new ConfigError(
      `${settings.where(key)} must be a whole number of bytes, at least 1, got ` +
        JSON.stringify(value),
    );
  }
  return size;
}

function allowedOrigins(settings: ThawSettings): readonly string[] {
  const value = settings.get("server.websocket.allowed-origins");
  if (value === undefined || value === null) return [];
  const where = settings.where("server.websocket.allowed-origins");
  const list = typeof value === "string"
    ? value.split(",").map((s) => s.trim()).filter((s) => s !== "")
    : value;
  if (!Array.isArray(list)) {
    throw new ConfigError(`${where} must be a list of origins, got ${JSON.stringify(value)}`);
  }
  return Object.freeze(list.map((origin: unknown) => {
    const serialized = origin === "*"
      ? "*"
      : typeof origin === "string"
      ? serializedOrigin(origin)
      : undefined;
    if (serialized === undefined) {
      throw new ConfigError(
        `${where}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], as ` +
          'https://app.example.com; "*": any)',
      );
    }
    return serialized;
  }));
}
