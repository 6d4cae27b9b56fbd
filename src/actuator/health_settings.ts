import type { ThawSettings } from "../config/thaw_settings.ts";
import { checkOptionsObject } from "../options_object.ts";
import { MANAGEMENT_KEYS } from "../config/management_keys.ts";
import { ConfigError } from "../config/config_error.ts";
import type { ShowDetails } from "./health.ts";

/**
 * Options of the health endpoint: `actuator({ health })`, over the `management.*` keys of
 * `application.yml` (an option's key wins over the file's).
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#healthoptions
 */
export interface HealthOptions {
  /**
   * `always`: the body lists every component, its status and details (an error's message
   * included); `never`: the status alone. `management.endpoint.health.show-details`, else `never`.
   */
  readonly showDetails?: "always" | "never";
  /**
   * How long an async `check()` may take, in milliseconds, before its component is DOWN;
   * `management.health.timeout`, else 5000.
   */
  readonly timeout?: number;
}

/** The options resolved. */
export interface HealthSettings {
  readonly showDetails: ShowDetails;
  readonly timeout: number;
}

const MAX_TIMEOUT = MANAGEMENT_KEYS["management.health.timeout"].max;
const OPTION_KEYS = ["showDetails", "timeout"] as const;

function describeValue(value: unknown): string {
  if (value === undefined) return "undefined";
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

/**
 * Checks the `health` option of `actuator()` when it is given, so that a wrong one fails where it
 * is written: a `ConfigError` naming the option for a value of the wrong kind.
 */
export function checkHealthOption(option: unknown): void {
  // Checked, not trusted: `health: isProduction ? null : {...}` must not pass by mistake.
  if (option === undefined) return;
  checkOptionsObject(option, "actuator() option health", OPTION_KEYS, { error: ConfigError });
  const code = option;
  const shown = code.showDetails;
  if (shown !== undefined && shown !== "always" && shown !== "never") {
    throw new ConfigError(
      `actuator() option health.showDetails must be always or never, got ${describeValue(shown)}`,
    );
  }
  const given = code.timeout;
  if (
    given !== undefined &&
    (typeof given !== "number" || !Number.isInteger(given) || given < 1 || given > MAX_TIMEOUT)
  ) {
    throw new ConfigError(
      `actuator() option health.timeout must be a whole number of milliseconds from 1 to ` +
        `${MAX_TIMEOUT}, got ${describeValue(given)}`,
    );
  }
}

/**
 * Resolves the `health` option of `actuator()` (checked by {@linkcode checkHealthOption}) over the
 * `management.*` keys: each key the option gives wins.
 */
export function healthSettings(
  settings: ThawSettings,
  option: HealthOptions | undefined,
): HealthSettings {
  checkHealthOption(option);
  return {
    showDetails: option?.showDetails ?? settings.get("management.endpoint.health.show-details"),
    timeout: option?.timeout ?? settings.get("management.health.timeout"),
  };
}
