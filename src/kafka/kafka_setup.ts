// `kafka()`: the `kafka.*` keys read once, the producer, and `KafkaTemplate` as a bean over it,
// which the container closes after the beans that use it; the `kafka` health component. The
// client's package is loaded here, and only by an app that imports the entry point.
import { optionalApi } from "../actuator/opentelemetry.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { PreDestroy } from "../context/lifecycle.ts";
import type { SetupHost } from "../feature_value.ts";
import { checkOptionsObject } from "../options_object.ts";
import { definedFields } from "../defined_fields.ts";
import { importOptional } from "../runtime/optional_module.ts";
import { type KafkaFeature, kafkaFeature } from "./kafka_feature.ts";
import { kafkaHealth } from "./kafka_health.ts";
import { closeKafkaParts } from "./kafka_close.ts";
import type { KafkaProducer } from "./kafka_producer.ts";
import type { ListenerHost, Listeners } from "./listener/listeners.ts";
import type { RecordSender } from "./outgoing_record.ts";
import { KafkaSettings } from "./kafka_settings.ts";
import {
  jsonSerializer,
  KafkaTemplate,
  type OutboxPort,
  type Serializer,
} from "./kafka_template.ts";

/** The package the client is made with, an optional peer dependency. */
export const CLIENT_PACKAGE = "@platformatic/kafka";

/** What `kafka()` takes. */
export interface KafkaOptions {
  /** Makes a value's bytes for `KafkaTemplate.send`: JSON when left out. */
  readonly serializer?: Serializer | undefined;
}

/**
 * The Kafka client for `bootstrap({ kafka: kafka() })`: `KafkaTemplate` as a bean, over one
 * producer made from the `kafka.*` keys (`kafka.bootstrap-servers`, `kafka.producer.acks`:
 * `all` by default, with the idempotent producer), closed after the beans that use it.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/kafka.md
 */
export function kafka(options: KafkaOptions = {}): KafkaFeature {
  checkOptionsObject(options, "kafka(options)", ["serializer"]);
  const serializer = (options as KafkaOptions).serializer ?? jsonSerializer;
  if (typeof serializer !== "function") {
    throw new TypeError(
      "kafka({ serializer }): give a function (value, topic) => Uint8Array",
    );
  }
  return kafkaFeature((settings, host) => setUp(settings, host, serializer));
}

async function setUp(
  settings: ThawSettings,
  { context, logger }: SetupHost,
  serializer: Serializer,
): Promise<FeatureFactory> {
  const kafkaSettings = new KafkaSettings(settings);
  const { producer, telemetry, sender } = await producerParts(kafkaSettings);
  // Loaded only by an app whose transactional sends go through an outbox.
  const outboxes = kafkaSettings.outbox === undefined
    ? undefined
    : new (await import("./outbox/outboxes.ts")).Outboxes(
      context,
      sender,
      kafkaSettings.outbox,
      logger,
    );
  context.registerBean({
    name: "kafkaTemplate",
    type: KafkaTemplate,
    source: "kafka()",
    create: () => Promise.resolve(new OwnedTemplate(producer, sender, serializer, outboxes?.port)),
  });
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  // A little inside the health check's own bound, so that the component says why it is DOWN.
  const healthMs = Math.max(settings.get("management.health.timeout") - 250, 100);
  context.register(kafkaHealth(() => producer.cluster(healthMs)));
  return async (host) => {
    const listeners = await listenersOf(host.context.beans(), {
      clientOptions: kafkaSettings.client,
      defaults: definedFields({
        groupId: kafkaSettings.groupId,
        autoOffsetReset: kafkaSettings.autoOffsetReset,
        concurrency: kafkaSettings.concurrency,
      }),
      deadLetters: sender,
      logger,
      telemetry,
    });
    const stopLag = listeners === undefined || telemetry === undefined
      ? undefined
      : (await import("./consumer_lag.ts")).observeConsumerLag(
        telemetry,
        kafkaSettings.client,
        () => [...new Set(listeners.info.map((l) => l.groupId))],
      );
    return {
      // Before the app serves, and whether or not it listens: a commit's records go out.
      started: async () => await outboxes?.start(telemetry),
      // As the scheduler's jobs: the listeners consume once the app serves.
      start: () => {
        listeners?.start().catch((error: unknown) =>
          logger.error("Kafka listeners: a consumer could not join its group", error)
        );
      },
      close: {
        // Before the beans stop: the listeners call them, the relays use the datasources' pools
        // and the producer. Records a listener's transaction wrote to the outbox go out first.
        jobs: async () => {
          await closeKafkaParts(
            { listeners, stopLag, outboxes, logger },
            host.shutdownTimeoutMs,
          );
          return undefined;
        },
      },
    };
  };
}

// The app's producer, and the sender its sends go through: the producer itself, or, where the app
// has OpenTelemetry's API, the telemetry's over it (without it, nothing of the telemetry is loaded).
async function producerParts(kafkaSettings: KafkaSettings) {
  const { KafkaProducer } = await importOptional(() => import("./kafka_producer.ts"), {
    packages: [CLIENT_PACKAGE],
    neededBy: "kafka()",
    what: "the Kafka client",
  });
  const producer = new KafkaProducer(
    kafkaSettings.client,
    kafkaSettings.acks,
    kafkaSettings.retries,
    kafkaSettings.deliveryTimeoutMs,
  );
  const api = await optionalApi();
  const telemetry = api === undefined
    ? undefined
    : new (await import("./kafka_telemetry.ts")).KafkaTelemetry(
      api,
      kafkaSettings.client.clientId,
      kafkaSettings.client.bootstrapBrokers[0],
    );
  const sender = telemetry === undefined ? producer : telemetry.sender(producer);
  return { producer, telemetry, sender };
}

/** What the listeners of the app take, but the client's module. */
type ListenerParts = Omit<ListenerHost, "client">;

// The app's `@KafkaListener` methods, if any: the listener modules and the client's package are
// loaded only then.
async function listenersOf(
  beans: readonly { readonly instance: unknown }[],
  parts: ListenerParts,
): Promise<Listeners | undefined> {
  const [{ kafkaListeners }, client] = await Promise.all([
    import("./listener/listeners.ts"),
    importOptional(() => import("@platformatic/kafka"), {
      packages: [CLIENT_PACKAGE],
      neededBy: "@KafkaListener",
      what: "the Kafka client",
    }),
  ]);
  const listeners = kafkaListeners(beans, { ...parts, client });
  return listeners.info.length === 0 ? undefined : listeners;
}

/** The app's template: it owns the producer, closed once the beans that send are stopped. */
class OwnedTemplate extends KafkaTemplate {
  readonly #producer: KafkaProducer;

  constructor(
    producer: KafkaProducer,
    sender: RecordSender,
    serializer: Serializer,
    outbox: OutboxPort | undefined,
  ) {
    super(sender, serializer, outbox);
    this.#producer = producer;
  }

  /** Waits for the sends in flight, then closes the producer: the container calls it. */
  @PreDestroy()
  async close(): Promise<void> {
    await this.#producer.close();
  }
}
