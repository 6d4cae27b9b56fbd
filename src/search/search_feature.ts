// What `bootstrap` knows of the search connections: an opaque value made by `search()` of the
// `search` entry point, so that an app that does not use it neither imports nor (bundled) carries
// it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The search connections' clients, for `bootstrap({ search })`: made by `search()` of
 * `@thaw/thaw/search`.
 */
export interface SearchFeature {
  /** What this is, for messages. */
  readonly feature: "search";
}

/** Makes the value `bootstrap({ search })` takes. */
export const searchFeature = (setup: FeatureSetup): SearchFeature => makeFeature("search", setup);
