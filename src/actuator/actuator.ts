// `actuator()`: the actuator feature, from its options and the settings before the beans are made
// (what to observe, which endpoints may be served), then, once they are, its table of endpoints
// served on the app's port or on one of its own.
import { type ActuatorFeature, actuatorFeature } from "./actuator_feature.ts";
import { type ActuatorOptions, checkActuatorOptions } from "./actuator_options.ts";
import type { EndpointHost } from "./actuator_endpoint.ts";
import { BUILT_IN, endpointRoutes, exposure } from "./actuator_endpoints.ts";
import { ownEndpoints } from "./endpoint_hooks.ts";
import { checkOpenTelemetryOption } from "./opentelemetry.ts";
import { type RequestTelemetry, requestTelemetry } from "./request_telemetry.ts";
import { showValues } from "./show_values.ts";
import { diskSpaceHealth } from "./builtin_health.ts";
import { observeOpenStreams } from "./stream_metrics.ts";
import { observeCaches } from "./cache_metrics.ts";
import { observeScheduledRuns } from "./scheduler_metrics.ts";
import { observeExecutors } from "./executor_metrics.ts";
import { managementPort } from "./management_port.ts";
import { configSecrets } from "../config/application_config.ts";
import { composeMasks, maskUrls, secretsMask } from "../config/secrets_mask.ts";
import type { AppFeature, FeatureHost } from "../app_feature.ts";
import { openStreamsOf } from "../observe/open_streams.ts";
import { middlewareName } from "../web/middleware.ts";

/**
 * The actuator's endpoints, for `bootstrap({ actuator })`. Throws a `ConfigError` naming the
 * option for options that are not an object of known keys, or for an option of the wrong shape.
 *
 * @param options `health`: the health endpoint's options; `migrations`: what the `migrations`
 * endpoint answers; `opentelemetry`: OpenTelemetry's modules, imported by the app, used instead of
 * the actuator's own imports of them (which an edge worker's bundle does not hold)
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#actuator
 */
export function actuator(options: ActuatorOptions = {}): ActuatorFeature {
  checkActuatorOptions(options);
  const opentelemetry = checkOpenTelemetryOption(options.opentelemetry);
  return actuatorFeature(async (settings) => {
    const asked = exposure(settings);
    // Read whether or not the endpoints are exposed: a value Thaw cannot honour is refused now.
    showValues(settings, "env");
    showValues(settings, "configprops");
    const mask = composeMasks(maskUrls, secretsMask(configSecrets(settings.config)));
    const telemetry = await requestTelemetry(
      !asked.exposed.has("prometheus")
        ? "off"
        : asked.named.has("prometheus")
        ? "required"
        : "optional",
      opentelemetry,
      settings.get("server.forward-headers-strategy"),
      // A span is exported as a log line is: its texts masked as the log's lines are.
      mask,
    );
    const disk = asked.exposed.has("health") ? await diskSpaceHealth(settings) : undefined;
    return (host) =>
      served(host, {
        base: asked.base,
        settings,
        mask,
        telemetry,
        disk,
        health: options.health,
        migrations: options.migrations,
      });
  });
}

// What the setup made of the options and the settings, for the endpoints.
type Prepared = Pick<
  EndpointHost,
  "base" | "settings" | "mask" | "telemetry" | "disk" | "health" | "migrations"
>;

// The table, Thaw's endpoints then the app's, served where `management.server.port` says: on a
// port of its own, with none of the app's middleware, so that an auth guard leaves probes open.
function served(host: FeatureHost, prepared: Prepared): AppFeature {
  const { settings, telemetry } = prepared;
  // Thaw's endpoints, then the app's, none of which may take an id of Thaw's.
  const own = ownEndpoints(host.context.beans(), BUILT_IN.map((e) => e.id));
  const table = [...BUILT_IN, ...own];
  const made = endpointRoutes(table, exposure(settings, table.map((e) => e.id)), {
    ...prepared,
    config: settings.config,
    context: host.context,
    logger: host.logger,
    beans: () => host.context.beans(),
    routes: () => host.routes,
    globalMiddleware: host.middleware.map(middlewareName),
    accepting: host.accepting,
  });
  const unobserve = observeSeries(host, telemetry);
  const close = {
    announce: () => Promise.resolve(void unobserve()),
    listeners: () => Promise.resolve(void made.close()),
  };
  const management = managementPort(settings);
  if (management === undefined) {
    return {
      routes: made.routes,
      documented: made.documented,
      observers: telemetry.observers,
      close,
    };
  }
  const fetch = host.serveApart(made.routes);
  return {
    observers: telemetry.observers,
    internals: { management: { ...management, fetch } },
    close,
  };
}

// The open streams', the caches', the scheduler's and the task executors' series, on the providers the request metrics
// go to (none without OpenTelemetry's API); what stops them, as the app's close begins.
function observeSeries(host: FeatureHost, telemetry: RequestTelemetry): () => void {
  const streams = telemetry.api === undefined
    ? undefined
    : observeOpenStreams(openStreamsOf(host), telemetry.api);
  const providers = telemetry.providers;
  const caches = providers === undefined
    ? undefined
    : observeCaches(host.context.beans(), providers);
  const runs = providers === undefined ? undefined : observeScheduledRuns(host.context, providers);
  const executors = providers === undefined
    ? undefined
    : observeExecutors(host.context.beans(), providers);
  return () => {
    streams?.();
    caches?.();
    runs?.();
    executors?.();
  };
}
