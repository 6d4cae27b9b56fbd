// The `thaw.broadcast.*` keys as the app's broadcaster reads them, from the configuration's values
// (the container's, which a bean provider is given). The settings reader checked each of them at
// `bootstrap` already (the entry point declares them): here they are only taken, a text from the
// environment turned into what the key holds, and their defaults come from the one declaration.
import { BROADCAST_KEYS } from "../config/broadcast_keys.ts";
import type { ConfigValues } from "../config/config_values.ts";

/** What the app's broadcaster is made of. */
export interface BroadcastSettings {
  readonly transport: "memory" | "redis" | "kafka";
  readonly maxBuffered: number;
  readonly redis: { readonly url: string; readonly channel: string };
  readonly kafka: {
    readonly bootstrapServers: readonly string[];
    readonly topic: string;
    readonly clientId: string;
  };
}

type Key = keyof typeof BROADCAST_KEYS;

/** The broadcaster's settings in `config`, each key's default where it is left out. */
export function broadcastSettings(config: ConfigValues): BroadcastSettings {
  const at = (key: string): unknown => {
    let value: unknown = config;
    for (const part of key.split(".")) {
      value = typeof value === "object" && value !== null
        ? (value as Record<string, unknown>)[part]
        : undefined;
    }
    return value;
  };
  const get = (key: Key): unknown => at(key) ?? BROADCAST_KEYS[key].default;
  const text = (key: Key): string => String(get(key));
  // An app with a Kafka client broadcasts through its brokers unless told otherwise: one list of
  // brokers to keep, not two.
  const servers = at("thaw.broadcast.kafka.bootstrap-servers") ?? at("kafka.bootstrap-servers") ??
    BROADCAST_KEYS["thaw.broadcast.kafka.bootstrap-servers"].default;
  return {
    transport: text("thaw.broadcast.transport") as BroadcastSettings["transport"],
    maxBuffered: Number(get("thaw.broadcast.max-buffered")),
    redis: { url: text("thaw.broadcast.redis.url"), channel: text("thaw.broadcast.redis.channel") },
    kafka: {
      bootstrapServers: Array.isArray(servers)
        ? servers.map(String)
        : String(servers).split(",").map((s) => s.trim()).filter((s) => s !== ""),
      topic: text("thaw.broadcast.kafka.topic"),
      clientId: text("thaw.broadcast.kafka.client-id"),
    },
  };
}
