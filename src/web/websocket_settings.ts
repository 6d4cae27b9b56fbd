// The `server.websocket.*` keys, read by the feature `@WebSocketMapping` brings: an app without it
// carries no code for them.
import { ConfigError } from "../config/config_error.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { serializedOrigin } from "./websocket_origin.ts";

/** `server.websocket.max-message-size` when the configuration leaves it out: 1 MiB. */
export const DEFAULT_MAX_MESSAGE_SIZE = 1_048_576;

/** What the sockets of an app are bound by. */
export interface WebSocketSettings {
  /** The largest message, in bytes. */
  readonly maxMessageSize: number;
  /** The origins, as browsers send them, whose pages may open a socket; `*`: any. */
  readonly allowedOrigins: readonly string[];
}

/**
 * Reads `server.websocket.max-message-size` (a whole number of bytes, at least 1; numeric text as
 * the environment gives it) and `server.websocket.allowed-origins` (origins, or `*`; a text is
 * split on `,`), each refused with a `ConfigError` that says where it is.
 */
export function webSocketSettings(settings: ThawSettings): WebSocketSettings {
  return {
    maxMessageSize: maxMessageSize(settings),
    allowedOrigins: allowedOrigins(settings),
  };
}

function maxMessageSize(settings: ThawSettings): number {
  const value = settings.get("server.websocket.max-message-size");
  if (value === undefined || value === null) return DEFAULT_MAX_MESSAGE_SIZE;
  const size = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 1) {
    throw new ConfigError(
      `${settings.where("server.websocket.max-message-size")} must be a whole number of bytes, ` +
        `at least 1, got ${JSON.stringify(value)}`,
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
