// What `bootstrap` knows of the actuator: an opaque value made by `actuator()` of the `actuator`
// entry point, so that the default entry neither imports nor (bundled) carries the endpoints.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { DocumentedRoute } from "../openapi/openapi_document.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { IndicatorBean } from "./health_beans.ts";
import { featureKind } from "../feature_value.ts";

/**
 * The actuator's endpoints (health, info, mappings), for `bootstrap({ actuator })`: made by
 * `actuator()` of `@thaw/thaw/actuator`.
 */
export interface ActuatorFeature {
  /** What this is, for messages. */
  readonly feature: "actuator";
}

/** What the app gives the actuator. */
export interface ActuatorInput {
  readonly settings: ThawSettings;
  /** The `@HealthIndicator` beans. */
  readonly indicators: readonly IndicatorBean[];
  /** Whether the app takes traffic: readiness is DOWN once shutdown starts. */
  readonly accepting: () => boolean;
  /** The app's routes, for `mappings`. */
  readonly routes: readonly CompiledRoute[];
  /** The names of the middleware run around every request, for `mappings`. */
  readonly middleware: readonly string[];
}

/** The routes of the exposed endpoints, and how the OpenAPI document describes them. */
export interface ActuatorServing {
  readonly routes: CompiledRoute[];
  readonly documented: DocumentedRoute[];
}

type Setup = (input: ActuatorInput) => ActuatorServing;
const kind = featureKind<"actuator", Setup>(
  "actuator",
  "actuator",
  "actuator",
  "@thaw/thaw/actuator",
);

/** Makes the value `bootstrap({ actuator })` takes. */
export const actuatorFeature = (setup: Setup): ActuatorFeature => kind.make(setup);

/** The endpoints behind a feature value; a `TypeError` for anything `actuator()` did not make. */
export const actuatorSetup = (feature: unknown): Setup => kind.setupOf(feature);
