// What `bootstrap` knows of the Kafka client: an opaque value made by `kafka()` of the `kafka`
// entry point, so that an app that does not use it neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The Kafka client (`KafkaTemplate`, `@KafkaListener`), for `bootstrap({ kafka })`: made by
 * `kafka()` of `@thaw/thaw/kafka`.
 */
export interface KafkaFeature {
  /** What this is, for messages. */
  readonly feature: "kafka";
}

/** Makes the value `bootstrap({ kafka })` takes. */
export const kafkaFeature = (setup: FeatureSetup): KafkaFeature => makeFeature("kafka", setup);
