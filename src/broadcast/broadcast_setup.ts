// `broadcast()`: the `Broadcaster` bean over the transport `thaw.broadcast.transport` names. Its
// transport starts receiving before the app serves (a start that fails fails `bootstrap`), and
// closes once the work that may publish has stopped, after the streams and sockets ended.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { SetupHost } from "../feature_value.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { Logger } from "../web/error_responder.ts";
import { safeLogger } from "../observe/loggable.ts";
import { Broadcaster, broadcasterOver, closeBroadcaster, startBroadcaster } from "./broadcaster.ts";
import { type BroadcastFeature, broadcastFeature } from "./broadcast_feature.ts";
import type { BroadcastTransport } from "./broadcast_transport.ts";
import { MemoryTransport } from "./memory_transport.ts";

/**
 * Broadcast to open streams and sockets, for `bootstrap({ broadcast: broadcast() })`: a
 * `Broadcaster` bean (found by class) whose `publish(channel, data)` reaches every subscriber of
 * the channel in every replica, through the transport `thaw.broadcast.transport` names: `memory`
 * (this process alone), `redis` (pub/sub, the `redis` package) or `kafka` (a topic, the
 * `@platformatic/kafka` package).
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md#broadcast-to-streams-and-sockets
 */
export function broadcast(): BroadcastFeature {
  return broadcastFeature(setUp);
}

async function setUp(
  settings: ThawSettings,
  { context, logger }: SetupHost,
): Promise<FeatureFactory> {
  const safe = safeLogger(logger);
  const transport = await transportOf(settings, safe);
  const broadcaster = broadcasterOver(transport, {
    maxBuffered: settings.get("thaw.broadcast.max-buffered"),
    logger: safe,
  });
  context.registerBean({
    name: "broadcaster",
    type: Broadcaster,
    source: "broadcast()",
    create: () => Promise.resolve(broadcaster),
  });
  return () => ({
    started: async () => {
      try {
        await startBroadcaster(broadcaster);
      } catch (error) {
        await closeBroadcaster(broadcaster);
        throw error;
      }
    },
    close: {
      // After the jobs and listeners that may publish: what they sent still goes out.
      listeners: async () => {
        await closeBroadcaster(broadcaster);
        return undefined;
      },
    },
  });
}

async function transportOf(settings: ThawSettings, logger: Logger): Promise<BroadcastTransport> {
  const warn = (message: string, error: unknown) => {
    try {
      (logger.warn ?? logger.error).call(logger, `[thaw] ${message}`, error);
    } catch {
      // Nowhere left to report it.
    }
  };
  switch (settings.get("thaw.broadcast.transport")) {
    case "redis": {
      const { RedisTransport } = await import("./redis_transport.ts");
      return new RedisTransport({
        url: settings.get("thaw.broadcast.redis.url"),
        channel: settings.get("thaw.broadcast.redis.channel"),
      }, warn);
    }
    case "kafka": {
      const { KafkaTransport } = await import("./kafka_transport.ts");
      return new KafkaTransport({
        bootstrapServers: settings.get("thaw.broadcast.kafka.bootstrap-servers"),
        topic: settings.get("thaw.broadcast.kafka.topic"),
        clientId: settings.get("thaw.broadcast.kafka.client-id"),
      }, warn);
    }
    default:
      return new MemoryTransport();
  }
}
