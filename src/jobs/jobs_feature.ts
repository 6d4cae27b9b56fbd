// What `bootstrap` knows of the jobs feature: an opaque value made by `jobs()` of the `jobs` entry
// point, so that an app that does not use it neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/** The job queue and its workers, for `bootstrap({ jobs })`: made by `jobs()` of `@thaw/thaw/jobs`. */
export interface JobsFeature {
  /** What this is, for messages. */
  readonly feature: "jobs";
}

/** Makes the value `bootstrap({ jobs })` takes. */
export const jobsFeature = (setup: FeatureSetup): JobsFeature => makeFeature("jobs", setup);
