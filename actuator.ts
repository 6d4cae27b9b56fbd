/**
 * The actuator: Spring Boot's operational endpoints for `bootstrap({ actuator: actuator() })`,
 * served under `management.endpoints.web.base-path` (`/actuator`) as
 * `management.endpoints.web.exposure.include` exposes them (`health` unless it says otherwise):
 *
 * - `caches`: the caches of the app's `CacheManager` beans; `DELETE` evicts one, or all;
 * - `configprops`: Thaw's settings by section and the app's `@ConfigurationProperties` beans,
 *   every value masked unless `management.endpoint.configprops.show-values` says `always`;
 * - `env`: the configuration's keys by the file or variable each value comes from, every value
 *   masked unless `management.endpoint.env.show-values` says `always`;
 * - `health`: `/actuator/health`, with its `liveness` and `readiness` groups;
 * - `info`: the `info` section of the configuration, Thaw's version and the runtime;
 * - `loggers`: each logger's configured and effective level; `POST` sets or clears one (reads
 *   the `LoggingSystem` bean that `bootstrap({ logging: logging() })` of `@thaw/thaw/logging`
 *   registers);
 * - `mappings`: every route the app serves, its handler and its middleware;
 * - `migrations`: the state of each SQL and search migration file, from the records (with
 *   `actuator({ migrations: migrationStatus(...) })` of `@thaw/thaw/migrate`);
 * - `prometheus`: the request metrics (`http_server_request_duration_seconds`), the process's
 *   (CPU time, memory, uptime, and the runtime's heap, event-loop delay and GC where it gives them)
 *   and the app's own OpenTelemetry meters, for Prometheus (needs `@opentelemetry/api`,
 *   `@opentelemetry/sdk-metrics` and `@opentelemetry/exporter-prometheus`; on an edge runtime,
 *   handed in by the app: `actuator({ opentelemetry })`);
 * - `scheduledtasks`: the `@Scheduled` jobs, when each runs next and how its latest run went.
 *
 * Where `@opentelemetry/api` is installed (or handed in), every request is also a SERVER span of
 * the tracer provider the app registered, and a measurement of the meter provider it registered.
 *
 * An endpoint not exposed answers 404, as an unknown path does. Apart from the default entry
 * point, so that an app that serves none of them does not carry them.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#thawthawactuator
 *
 * @module
 */
// First: the actuator's keys are declared before the app's configuration can be read.
import "./src/config/management_keys.ts";
import { type ActuatorFeature, actuatorFeature } from "./src/actuator/actuator_feature.ts";
import { endpointRoutes, exposure } from "./src/actuator/actuator_endpoints.ts";
import {
  checkHealthOption,
  type HealthOptions,
  healthSettings,
} from "./src/actuator/health_settings.ts";
import { healthRoutes } from "./src/actuator/health_routes.ts";
import { showValues } from "./src/actuator/show_values.ts";
import { shownValueMask } from "./src/actuator/shown_values.ts";
import { ConfigError } from "./src/config/config_error.ts";
import { requestTelemetry } from "./src/actuator/request_telemetry.ts";
import { configSecrets } from "./src/config/application_config.ts";
import { composeMasks, maskUrls, secretsMask } from "./src/config/secrets_mask.ts";
import { observeOpenStreams } from "./src/actuator/stream_metrics.ts";
import { observeCaches } from "./src/actuator/cache_metrics.ts";
import { observeScheduledRuns } from "./src/actuator/scheduler_metrics.ts";
import { observeExecutors } from "./src/actuator/executor_metrics.ts";
import { openStreamsOf } from "./src/observe/open_streams.ts";
import { checkOpenTelemetryOption } from "./src/actuator/opentelemetry.ts";
import type { OpenTelemetryModules } from "./src/actuator/opentelemetry_modules.ts";
import { indicatorBeans } from "./src/actuator/health_hooks.ts";
import { contributedHealth, diskSpaceHealth } from "./src/actuator/builtin_health.ts";
import type { ThawSettings } from "./src/config/thaw_settings.ts";
import { middlewareName } from "./src/web/middleware.ts";
import { publishedJobs } from "./src/scheduling/published_jobs.ts";
import { loggingSystemOf, noLoggingSystem } from "./src/actuator/loggers_endpoint.ts";

export type { ActuatorFeature } from "./src/actuator/actuator_feature.ts";
export type { EndpointId, Mapping } from "./src/actuator/actuator_endpoints.ts";
export type { HealthOptions } from "./src/actuator/health_settings.ts";
export type { OpenTelemetryModules } from "./src/actuator/opentelemetry_modules.ts";

/** Options of {@linkcode actuator}. */
export interface ActuatorOptions {
  /** The health endpoint's options, over the `management.*` keys (an option's key wins). */
  readonly health?: HealthOptions;
  /**
   * What the `migrations` endpoint answers: `migrationStatus({ config, migrations })` of
   * `@thaw/thaw/migrate`, called for each request to the endpoint (and never when it is not
   * exposed).
   */
  readonly migrations?: () => Promise<object>;
  /**
   * OpenTelemetry's modules, imported by the app: `{ api }`, plus `sdkMetrics` and
   * `PrometheusSerializer` for `prometheus`. The actuator then uses these, for traces and metrics
   * alike, and imports none of them itself. Without it, it imports them from `node_modules` where
   * they are installed, through specifiers no bundler follows: an edge worker (workerd,
   * Cloudflare Workers), whose bundle holds only what the app imports, needs this option to
   * observe anything or to serve `prometheus`.
   */
  readonly opentelemetry?: OpenTelemetryModules;
}

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
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigError(
      `actuator() takes an object of options, got ${
        options === null ? "null" : Array.isArray(options) ? "an array" : JSON.stringify(options)
      }; to serve nothing, pass bootstrap({ actuator: false })`,
    );
  }
  for (const key of Object.keys(options)) {
    if (key !== "health" && key !== "migrations" && key !== "opentelemetry") {
      throw new ConfigError(
        `actuator() option ${key}: unknown; the options are health, migrations, opentelemetry`,
      );
    }
  }
  checkHealthOption(options.health);
  const opentelemetry = checkOpenTelemetryOption(options.opentelemetry);
  const migrations = options.migrations;
  if (migrations !== undefined && typeof migrations !== "function") {
    throw new ConfigError(
      "actuator() option migrations takes what migrationStatus({ config, migrations }) of " +
        '"@thaw/thaw/migrate" returns',
    );
  }
  return actuatorFeature(async (settings) => {
    const asked = exposure(settings);
    // Read whether or not the endpoints are exposed: a value Thaw cannot honour is refused now.
    showValues(settings, "env");
    showValues(settings, "configprops");
    // What can be served of what was asked: `*` leaves out what cannot, a name is refused.
    const available = new Set(asked.exposed);
    if (available.has("migrations") && migrations === undefined) {
      if (asked.named.has("migrations")) {
        throw new ConfigError(
          `${settings.where("management.endpoints.web.exposure.include")}: the migrations ` +
            "endpoint reads the records of a config folder: pass actuator({ migrations: " +
            'migrationStatus({ config, migrations }) }), import { migrationStatus } from "@thaw/thaw/migrate"',
        );
      }
      available.delete("migrations");
    }
    const telemetry = await requestTelemetry(
      !available.has("prometheus")
        ? "off"
        : asked.named.has("prometheus")
        ? "required"
        : "optional",
      opentelemetry,
      settings.get("server.forward-headers-strategy"),
      // A span is exported as a log line is: its texts masked as the log's lines are.
      composeMasks(maskUrls, secretsMask(configSecrets(settings.config))),
    );
    if (telemetry.scrape === undefined) available.delete("prometheus");
    const disk = available.has("health") ? await diskSpaceHealth(settings) : undefined;
    return (host) => {
      const beans = host.context.beans();
      if (disk !== undefined && "leftOut" in disk) {
        (host.logger.warn ?? host.logger.error).call(host.logger, disk.leftOut);
      }
      // The logging system is a bean: known only now that the beans are made.
      const loggingSystem = available.has("loggers") ? loggingSystemOf(beans) : undefined;
      if (available.has("loggers") && loggingSystem === undefined) {
        if (asked.named.has("loggers")) {
          throw noLoggingSystem(settings.where("management.endpoints.web.exposure.include"));
        }
        available.delete("loggers");
      }
      const exposed = { ...asked, exposed: available };
      const served = exposed.exposed.has("health")
        ? healthRoutes(
          [
            ...indicatorBeans(beans),
            ...contributedHealth(beans, settings),
            ...(disk !== undefined && "indicator" in disk ? [disk.indicator] : []),
          ],
          healthSettings(settings, options.health),
          host.accepting,
          shownValueMask(settings.config),
          exposed.base,
        )
        : { routes: [], documented: [] };
      const routes = [
        ...served.routes,
        ...endpointRoutes(
          exposed,
          settings.config,
          () => host.routes,
          host.middleware.map(middlewareName),
          {
            scrape: telemetry.scrape,
            migrations,
            beans: () => host.context.beans(),
            jobs: () => publishedJobs(host.context),
            settings,
            loggingSystem,
          },
        ),
      ];
      const management = managementPort(settings);
      // The app's event streams and sockets as a gauge beside the requests' (no series without).
      const streams = telemetry.api === undefined
        ? undefined
        : observeOpenStreams(openStreamsOf(host), telemetry.api);
      // The caches' and the scheduler's series, on the providers the request metrics go to.
      const providers = telemetry.providers;
      const caches = providers === undefined
        ? undefined
        : observeCaches(host.context.beans(), providers);
      const runs = providers === undefined
        ? undefined
        : observeScheduledRuns(host.context, providers);
      const executors = providers === undefined
        ? undefined
        : observeExecutors(host.context.beans(), providers);
      // The process's series, where prometheus is served; its monitors stop with the app's last
      // step before the beans, so that a scrape while requests drain still reads them.
      const unobserve = telemetry.runtime?.observe();
      const close = {
        announce: () => {
          streams?.();
          caches?.();
          runs?.();
          executors?.();
          return Promise.resolve(undefined);
        },
        listeners: () => Promise.resolve(void unobserve?.()),
      };
      // On a port of its own, the actuator answers with none of the app's middleware, so that an
      // auth guard leaves the probes open.
      return management === undefined
        ? {
          routes,
          documented: served.documented,
          observers: telemetry.observers,
          close,
        }
        : {
          observers: telemetry.observers,
          internals: { management: { ...management, fetch: host.serveApart(routes) } },
          close,
        };
    };
  });
}

// `management.server.port`, and the address to bind it on, if the app asks for a port of its own.
function managementPort(
  settings: ThawSettings,
): { port: number; hostname?: string; where: string } | undefined {
  const port = settings.get("management.server.port");
  const address = settings.get("management.server.address");
  if (port === undefined) {
    if (address === undefined) return undefined;
    // The actuator would stay on the app's port, open on its address: not what the key asks.
    throw new ConfigError(
      `${settings.where("management.server.address")}: an address for the management port, ` +
        "which management.server.port gives: set it, or leave the address out",
    );
  }
  return {
    port,
    ...(address === undefined ? {} : { hostname: address }),
    where: settings.where("management.server.port"),
  };
}
