// The transport `thaw.broadcast.transport` names; the Redis and Kafka ones loaded only by an app
// that names them (each needs its package).
import type { BroadcastSettings } from "./broadcast_settings.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { MemoryTransport } from "./memory_transport.ts";

/** The transport of `settings`; `warn` takes what goes wrong once it runs (a lost connection). */
export async function transportOf(
  settings: BroadcastSettings,
  warn: (message: string, error: unknown) => void,
): Promise<BroadcastTransport> {
  switch (settings.transport) {
    case "redis": {
      const { RedisTransport } = await import("./redis_transport.ts");
      return new RedisTransport(settings.redis, warn);
    }
    case "kafka": {
      const { KafkaTransport } = await import("./kafka_transport.ts");
      return new KafkaTransport(settings.kafka, warn);
    }
    default:
      return new MemoryTransport();
  }
}
