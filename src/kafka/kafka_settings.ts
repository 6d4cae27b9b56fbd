// What the `kafka.*` keys ask of the client, read and checked once, at start: the brokers, who
// the client says it is, the consumers' and the producer's defaults, and how the connection is
// secured, as the options every client of `@platformatic/kafka` takes.
import "../config/kafka_keys.ts";
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import { shownValue } from "../shown_value.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { definedFields } from "../defined_fields.ts";

/** `kafka.consumer.auto-offset-reset`. */
export type OffsetReset = "earliest" | "latest" | "none";

/** `kafka.producer.acks`, as the protocol counts it: -1 is `all`. */
export type Acks = -1 | 0 | 1;

/** `kafka.sasl.mechanism`. */
export type SaslMechanism = "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";

/** The options every client of the package takes: where the brokers are, and how to reach them. */
export interface KafkaClientOptions {
  readonly clientId: string;
  readonly bootstrapBrokers: string[];
  readonly tls?: { ca?: string; cert?: string; key?: string };
  readonly sasl?: { mechanism: SaslMechanism; username: string; password: string };
}

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s:/?#@[\]]+):\d{1,5}$/;

/** The outbox's settings (`kafka.outbox.*`), every duration in milliseconds. */
export interface OutboxSettings {
  readonly table: string;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly sendTimeoutMs: number;
  readonly retentionMs: number;
}

/** The `kafka.*` settings of an app. */
export class KafkaSettings {
  /** The options each client is made with. */
  readonly client: KafkaClientOptions;
  /** `kafka.consumer.group-id`: the group of a listener that names none. */
  readonly groupId: string | undefined;
  readonly autoOffsetReset: OffsetReset;
  readonly acks: Acks;
  /** `kafka.producer.retries`. */
  readonly retries: number;
  /** `kafka.producer.delivery-timeout`, in ms: how long a send may wait for its acknowledgement. */
  readonly deliveryTimeoutMs: number;
  /** `kafka.listener.concurrency`. */
  readonly concurrency: number;
  /** The outbox's settings; `undefined` when `kafka.outbox.enabled` is false. */
  readonly outbox: OutboxSettings | undefined;
  /** The values no message may show: the SASL password, the client's private key. */
  readonly secrets: readonly string[];

  constructor(settings: ThawSettings) {
    const servers = settings.get("kafka.bootstrap-servers").flatMap((s) => s.split(","))
      .map((s) => s.trim()).filter((s) => s !== "");
    if (servers.length === 0) {
      throw new ConfigError(`${settings.where("kafka.bootstrap-servers")}: name a broker`);
    }
    for (const server of servers) {
      if (!HOST_PORT.test(server) || Number(server.slice(server.lastIndexOf(":") + 1)) > 65535) {
        throw new ConfigError(
          `${settings.where("kafka.bootstrap-servers")}: ${
            shownValue(server)
          } is not host:port (127.0.0.1:9092)`,
        );
      }
    }
    this.groupId = settings.get("kafka.consumer.group-id");
    this.autoOffsetReset = settings.get("kafka.consumer.auto-offset-reset") as OffsetReset;
    this.acks = acksOf(settings);
    this.retries = settings.get("kafka.producer.retries");
    this.deliveryTimeoutMs = durationOf(settings, "kafka.producer.delivery-timeout", 120_000, 1);
    this.concurrency = settings.get("kafka.listener.concurrency");
    this.outbox = settings.get("kafka.outbox.enabled") ? outboxOf(settings) : undefined;
    const protocol = settings.get("kafka.security.protocol");
    const sasl = protocol.startsWith("SASL_") ? saslOf(settings, protocol) : undefined;
    const tls = protocol.endsWith("SSL") ? tlsOf(settings) : undefined;
    if (!protocol.startsWith("SASL_") && settings.get("kafka.sasl.mechanism") !== undefined) {
      throw new ConfigError(
        `${settings.where("kafka.sasl.mechanism")}: SASL is used only when ` +
          `kafka.security.protocol is SASL_PLAINTEXT or SASL_SSL (it is ${protocol})`,
      );
    }
    this.client = Object.freeze(definedFields({
      clientId: settings.get("kafka.client-id") ?? "thaw",
      bootstrapBrokers: servers,
      tls,
      sasl,
    })) as KafkaClientOptions;
    this.secrets = [sasl?.password, tls?.key].filter((s): s is string => s !== undefined);
  }
}

function acksOf(settings: ThawSettings): Acks {
  const value = settings.get("kafka.producer.acks");
  if (value === undefined || value === null || value === "all" || String(value) === "-1") return -1;
  if (String(value) === "0") return 0;
  if (String(value) === "1") return 1;
  throw new ConfigError(
    `${settings.where("kafka.producer.acks")} must be all, -1, 0 or 1, got ${shownValue(value)}`,
  );
}

function saslOf(settings: ThawSettings, protocol: string): NonNullable<KafkaClientOptions["sasl"]> {
  const mechanism = settings.get("kafka.sasl.mechanism") as SaslMechanism | undefined;
  const username = settings.get("kafka.sasl.username");
  const password = settings.get("kafka.sasl.password");
  if (mechanism === undefined || username === undefined || password === undefined) {
    const missing = [
      mechanism === undefined ? "kafka.sasl.mechanism" : undefined,
      username === undefined ? "kafka.sasl.username" : undefined,
      password === undefined ? "kafka.sasl.password" : undefined,
    ].filter((k) => k !== undefined);
    throw new ConfigError(
      `${settings.where("kafka.security.protocol")}: ${protocol} needs ${missing.join(", ")}`,
    );
  }
  return { mechanism, username, password };
}

function tlsOf(settings: ThawSettings): NonNullable<KafkaClientOptions["tls"]> {
  const cert = settings.get("kafka.ssl.key-store-certificate-chain");
  const key = settings.get("kafka.ssl.key-store-key");
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError(
      `${
        settings.where(
          cert === undefined ? "kafka.ssl.key-store-key" : "kafka.ssl.key-store-certificate-chain",
        )
      }: a client certificate needs both kafka.ssl.key-store-certificate-chain and ` +
        "kafka.ssl.key-store-key",
    );
  }
  return definedFields({ ca: settings.get("kafka.ssl.trust-store-certificates"), cert, key });
}

/** The keys whose value is a duration. */
type DurationKey =
  | "kafka.producer.delivery-timeout"
  | "kafka.outbox.poll-interval"
  | "kafka.outbox.lease"
  | "kafka.outbox.send-timeout"
  | "kafka.outbox.retention";

function durationOf(
  settings: ThawSettings,
  key: DurationKey,
  fallback: number,
  least: number,
): number {
  const value = settings.get(key);
  if (value === undefined || value === null) return fallback;
  return durationKey(value, settings.where(key), { min: least });
}

function outboxOf(settings: ThawSettings): OutboxSettings {
  const duration = (key: DurationKey, fallback: number, least: number): number =>
    durationOf(settings, key, fallback, least);
  const table = settings.get("kafka.outbox.table");
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,57}$/.test(table)) {
    throw new ConfigError(
      `${settings.where("kafka.outbox.table")}: give a table name of letters, digits and _ ` +
        `(at most 58), got ${shownValue(table)}`,
    );
  }
  return {
    table,
    batchSize: settings.get("kafka.outbox.batch-size"),
    pollIntervalMs: duration("kafka.outbox.poll-interval", 1_000, 1),
    leaseMs: duration("kafka.outbox.lease", 30_000, 1),
    sendTimeoutMs: duration("kafka.outbox.send-timeout", 10_000, 1),
    retentionMs: duration("kafka.outbox.retention", 3_600_000, 0),
  };
}
