// What `bootstrap` knows of the logging feature: an opaque value made by `logging()` of the
// `logging` entry point, so that the default entry neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * Levelled, named and structured logs, for `bootstrap({ logging })`: made by `logging()` of
 * `@thaw/thaw/logging`.
 */
export interface LoggingFeature {
  /** What this is, for messages. */
  readonly feature: "logging";
}

/** Makes the value `bootstrap({ logging })` takes. */
export const loggingFeature = (setup: FeatureSetup): LoggingFeature =>
  makeFeature("logging", setup);
