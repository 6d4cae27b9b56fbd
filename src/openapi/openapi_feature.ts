// What `bootstrap` knows of the OpenAPI generator: an opaque value made by `openApi()` of the
// `openapi` entry point, so that the default entry neither imports nor (bundled) carries it.
import { type FeatureSetup, makeFeature } from "../feature_value.ts";

/**
 * The OpenAPI document and docs page, for `bootstrap({ openapi })`: made by `openApi()` of
 * `@thaw/thaw/openapi`.
 */
export interface OpenApiFeature {
  /** What this is, for messages. */
  readonly feature: "openapi";
}

/** Makes the value `bootstrap({ openapi })` takes. */
export const openApiFeature = (setup: FeatureSetup): OpenApiFeature =>
  makeFeature("openapi", setup);

/** `true`/`false`, also as the text a `${VAR}` placeholder gives; anything else: `undefined`. */
export function asFlag(value: unknown): boolean | undefined {
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  return undefined;
}

/**
 * Whether the `app.openapi` keys ask for something to be served: set, and not turned off by
 * `app.openapi: false` or `app.openapi.enabled: false`.
 */
export function openApiConfigured(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  const flag = asFlag(value);
  if (flag !== undefined) return flag;
  if (typeof value === "object" && !Array.isArray(value)) {
    return asFlag((value as Record<string, unknown>).enabled) !== false;
  }
  return true;
}
