// What `bootstrap` knows of the actuator: an opaque value made by `actuator()` of the `actuator`
// entry point, so that the default entry neither imports nor (bundled) carries the endpoints.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The actuator's endpoints (health, info, mappings, prometheus, caches, scheduledtasks...) and
 * request telemetry, for `bootstrap({ actuator })`: made by `actuator()` of `@thaw/thaw/actuator`.
 */
export interface ActuatorFeature {
  /** What this is, for messages. */
  readonly feature: "actuator";
}

/** Makes the value `bootstrap({ actuator })` takes. */
export const actuatorFeature = (setup: FeatureSetup): ActuatorFeature =>
  makeFeature("actuator", setup);
