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
 * An app adds endpoints of its own, served, exposed and guarded as these are: a bean class marked
 * `@Endpoint("id")`, with `@ReadOperation()`, `@WriteOperation()` and `@DeleteOperation()`
 * methods (`GET`, `POST`, `DELETE` at `/actuator/<id>`) and `@Selector(...)` for path segments.
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

export { actuator } from "./src/actuator/actuator.ts";
export {
  DeleteOperation,
  Endpoint,
  type OperationDecorator,
  type OperationOptions,
  ReadOperation,
  Selector,
  WriteOperation,
} from "./src/actuator/endpoint.ts";
export type { ActuatorOptions } from "./src/actuator/actuator_options.ts";
export type { ActuatorFeature } from "./src/actuator/actuator_feature.ts";
export type { EndpointId, Mapping } from "./src/actuator/actuator_endpoints.ts";
export type { HealthOptions } from "./src/actuator/health_settings.ts";
export type { OpenTelemetryModules } from "./src/actuator/opentelemetry_modules.ts";
