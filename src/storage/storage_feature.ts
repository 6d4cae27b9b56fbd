// What `bootstrap` knows of the object storage: an opaque value made by `storage()` of the
// `storage` entry point, so that an app that does not use it neither imports nor carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/** The object stores, for `bootstrap({ storage })`: made by `storage()` of `@thaw/thaw/storage`. */
export interface StorageFeature {
  /** What this is, for messages. */
  readonly feature: "storage";
}

/** Makes the value `bootstrap({ storage })` takes. */
export const storageFeature = (setup: FeatureSetup): StorageFeature =>
  makeFeature("storage", setup);
