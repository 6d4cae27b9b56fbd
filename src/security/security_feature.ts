// What `bootstrap` knows of the resource server: an opaque value made by `security()` of the
// `security` entry point, so that an app that does not use it neither imports nor carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/** The JWT resource server, for `bootstrap({ security })`: made by `security()` of `@thaw/thaw/security`. */
export interface SecurityFeature {
  /** What this is, for messages. */
  readonly feature: "security";
}

/** Makes the value `bootstrap({ security })` takes. */
export const securityFeature = (setup: FeatureSetup): SecurityFeature =>
  makeFeature("security", setup);
