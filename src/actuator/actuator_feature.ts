// What `bootstrap` knows of the actuator: an opaque value made by `actuator()` of the `actuator`
// entry point, so that the default entry neither imports nor (bundled) carries the endpoints.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { DocumentedRoute } from "../openapi/openapi_document.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { IndicatorBean } from "./health_hooks.ts";
import { featureKind } from "../feature_value.ts";
import type { RequestObserver } from "../observe/request_observer.ts";

/**
 * The actuator's endpoints (health, info, mappings, prometheus) and request telemetry, for `bootstrap({ actuator })`: made by
 * `actuator()` of `@thaw/thaw/actuator`.
 */
export interface ActuatorFeature {
  /** What this is, for messages. */
  readonly feature: "actuator";
}

/** What the app gives the actuator once its beans are made. */
export interface ActuatorInput {
  /** The `@HealthIndicator` beans. */
  readonly indicators: readonly IndicatorBean[];
  /** Whether the app takes traffic: readiness is DOWN once shutdown starts. */
  readonly accepting: () => boolean;
  /** The app's routes, for `mappings`. */
  readonly routes: readonly CompiledRoute[];
  /** The names of the middleware run around every request, for `mappings`. */
  readonly middleware: readonly string[];
}

/**
 * The routes of the exposed endpoints, how the OpenAPI document describes them, and what observes
 * every request (the request metrics and spans), outermost first.
 */
export interface ActuatorServing {
  readonly routes: CompiledRoute[];
  readonly documented: DocumentedRoute[];
  readonly observers: readonly RequestObserver[];
}

// Two steps: what must exist before the beans are made (the meter provider, so that a bean's
// `metrics.getMeter()` finds it: OpenTelemetry's API keeps no proxy for meters), then the routes.
type Setup = (settings: ThawSettings) => Promise<(input: ActuatorInput) => ActuatorServing>;
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
