// Loaded by the actuator entry point only: an app without it never evaluates this module, the
// checks' runner or the aggregation, nor (bundled) carries them.
import type { ApiResponseOptions } from "../openapi/api_docs.ts";
import type { JsonSchema } from "../openapi/json_schema.ts";
import type { DocumentedRoute, FrameworkOperation } from "../openapi/documented_route.ts";
import type { CompiledRoute } from "../web/compile.ts";
import { parsePathPattern } from "../web/path_pattern.ts";
import {
  aggregateHealth,
  type ComponentHealth,
  type HealthAnswer,
  type HealthDetails,
  joinHealth,
  statusAnswer,
} from "./health.ts";
import type { IndicatorBean } from "./health_hooks.ts";
import { runCheck } from "./health_check.ts";
import type { HealthSettings } from "./health_settings.ts";

/**
 * Spring Boot's paths under the default base path, so that probes and dashboards written for
 * Spring work as they are.
 */
export const HEALTH_PATH = "/actuator/health";
export const LIVENESS_PATH = "/actuator/health/liveness";
export const READINESS_PATH = "/actuator/health/readiness";

/** The health routes, and how the OpenAPI document describes them. */
export interface HealthRoutes {
  readonly routes: CompiledRoute[];
  readonly documented: DocumentedRoute[];
}

// One source object for the three operations: the document converts it once, so its definitions
// are shared once (`components.schemas.Health`).
const BODY_SCHEMA: JsonSchema = {
  $defs: {
    Health: {
      type: "object",
      required: ["status"],
      properties: {
        status: { $ref: "#/$defs/HealthStatus" },
        components: {
          type: "object",
          description: "Each component by name: only at `/actuator/health`, with show-details " +
            "`always`",
          additionalProperties: { $ref: "#/$defs/HealthComponent" },
        },
      },
    },
    HealthComponent: {
      type: "object",
      required: ["status"],
      properties: {
        status: { $ref: "#/$defs/HealthStatus" },
        details: {
          type: "object",
          description: "What the check reported; `error` says why it is DOWN",
        },
      },
    },
    HealthStatus: { type: "string", enum: ["UP", "DOWN"] },
  },
  $ref: "#/$defs/Health",
};

// What Thaw's own checks answer: a component's health already.
const ownHealth = (answer: unknown): ComponentHealth => answer as ComponentHealth;

function respond(answer: HealthAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.httpStatus,
    // A probe's answer is of this moment: no cache may hand it to the next probe.
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

function operation(
  operationId: string,
  summary: string,
  responses: [number, string][],
): FrameworkOperation {
  return {
    operationId,
    tags: ["Actuator"],
    summary,
    responses: new Map<number, ApiResponseOptions>(
      responses.map(([status, description]) => [status, { description, schema: BODY_SCHEMA }]),
    ),
  };
}

/**
 * The routes of `{base}/health` (every indicator's check, at once, each given
 * `settings.timeout`), `{base}/health/liveness` (UP while the process answers at all) and
 * `{base}/health/readiness` (UP while `accepting()` says the app takes traffic); `base` is
 * `/actuator` unless configured. Each component's details (an error's message included) go
 * through `shown` before they are shown: the mask `info` uses, so that show-details `always`
 * shows no secret `info` hides.
 */
export function healthRoutes(
  indicators: readonly IndicatorBean[],
  settings: HealthSettings,
  accepting: () => boolean,
  shown: (value: unknown) => unknown,
  base = "/actuator",
): HealthRoutes {
  const { showDetails, timeout } = settings;
  const masked = (health: ComponentHealth): ComponentHealth =>
    health.details === undefined
      ? health
      : { status: health.status, details: shown(health.details) as HealthDetails };
  const health = async (): Promise<Response> => {
    const results = await Promise.all(
      indicators.map((i) =>
        runCheck(i.check, timeout, i.builtIn === undefined ? undefined : ownHealth)
      ),
    );
    const components = new Map<string, ComponentHealth>();
    indicators.forEach((indicator, i) => {
      const part = indicator.builtIn?.part;
      const result = part === undefined
        ? results[i]
        : { status: results[i].status, details: { [part]: results[i].details ?? {} } };
      const other = components.get(indicator.name);
      components.set(indicator.name, other === undefined ? result : joinHealth(other, result));
    });
    if (showDetails === "always") {
      for (const [name, component] of components) components.set(name, masked(component));
    }
    return respond(aggregateHealth(components, showDetails));
  };
  const endpoints: [string, CompiledRoute["handler"], FrameworkOperation][] = [
    [
      `${base}/health`,
      health,
      operation("health", "The app's health: DOWN when any health indicator is DOWN", [
        [200, "UP"],
        [503, "DOWN: a health indicator is DOWN"],
      ]),
    ],
    [
      `${base}/health/liveness`,
      () => respond(statusAnswer("UP")),
      operation("healthLiveness", "Liveness: UP while the process answers", [[200, "UP"]]),
    ],
    [
      `${base}/health/readiness`,
      () => respond(statusAnswer(accepting() ? "UP" : "DOWN")),
      operation("healthReadiness", "Readiness: UP while the app takes traffic", [
        [200, "UP"],
        [503, "DOWN: the app is shutting down"],
      ]),
    ],
  ];
  const routes: CompiledRoute[] = [];
  const documented: DocumentedRoute[] = [];
  for (const [path, handler, described] of endpoints) {
    const pattern = parsePathPattern(path);
    routes.push({
      httpMethod: "GET",
      pattern,
      label: `the actuator's health endpoint (GET ${path})`,
      handler,
      // Probes and load balancers call it without a token, as Spring Boot lets them.
      access: "public",
    });
    documented.push({
      httpMethod: "GET",
      path,
      variables: [],
      operation: described,
      access: "public",
    });
  }
  return { routes, documented };
}
