// What `actuator()` takes, and the check that refuses what it does not.
import { checkOptionsObject } from "../options_object.ts";
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
  checkOptionsObject(options as unknown, "actuator()", [
    "health",
    "migrations",
    "opentelemetry",
  ], { error: ConfigError, hint: "to serve nothing, pass bootstrap({ actuator: false })" });
  checkHealthOption(options.health);
  if (options.migrations !== undefined && typeof options.migrations !== "function") {
    throw new ConfigError(
      "actuator() option migrations takes what migrationStatus({ config, migrations }) of " +
        '"@thaw/thaw/migrate" returns',
    );
  }
}
