// What `bootstrap` knows of the broadcast feature: an opaque value made by `broadcast()` of the
// `broadcast` entry point, so that an app that does not use it neither imports nor (bundled)
// carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The `Broadcaster` bean over the transport of `thaw.broadcast.*`, for
 * `bootstrap({ broadcast })`: made by `broadcast()` of `@thaw/thaw/broadcast`.
 */
export interface BroadcastFeature {
  /** What this is, for messages. */
  readonly feature: "broadcast";
}

/** Makes the value `bootstrap({ broadcast })` takes. */
export const broadcastFeature = (setup: FeatureSetup): BroadcastFeature =>
  makeFeature("broadcast", setup);
