// What `bootstrap` knows of data access: an opaque value made by `data()` of the `data` entry
// point, so that an app that does not use it neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The datasources' clients and transactions, for `bootstrap({ data })`: made by `data()` of
 * `@thaw/thaw/data`.
 */
export interface DataFeature {
  /** What this is, for messages. */
  readonly feature: "data";
}

/** Makes the value `bootstrap({ data })` takes. */
export const dataFeature = (setup: FeatureSetup): DataFeature => makeFeature("data", setup);
