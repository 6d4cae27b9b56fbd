// What `actuator()` takes, and the check that refuses what it does not.
import { ConfigError } from "../config/config_error.ts";
import { checkHealthOption, type HealthOptions } from "./health_settings.ts";
import type { OpenTelemetryModules } from "./opentelemetry_modules.ts";

/** Options of `actuator()`. */
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

/** Throws a `ConfigError` naming the option for options `actuator()` does not take. */
export function checkActuatorOptions(options: ActuatorOptions): void {
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
  if (options.migrations !== undefined && typeof options.migrations !== "function") {
    throw new ConfigError(
      "actuator() option migrations takes what migrationStatus({ config, migrations }) of " +
        '"@thaw/thaw/migrate" returns',
    );
  }
}
