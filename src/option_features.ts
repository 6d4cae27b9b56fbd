// The features that live in entry points of their own and come as `bootstrap` options: one table,
// in the order they are folded (OpenAPI last, since it documents the routes of those before it).
// The keys that configure one, set while the option is left out, would be ignored without a
// word: they stop `bootstrap`, saying what to import (the actuator's and the logging feature's
// only when a file or the configuration object sets them: an environment variable alone may be
// shared with other services).
import { configValue, type LoadedConfig } from "./config/application_config.ts";
import { ConfigError } from "./config/config_error.ts";
import type { ThawSettings } from "./config/thaw_settings.ts";
import type { FeatureFactory } from "./app_feature.ts";
import { openApiConfigured } from "./openapi/openapi_feature.ts";
import { type FeatureOrigin, featureSetup, type SetupHost } from "./feature_value.ts";

/** One feature given as a `bootstrap` option, with the keys that configure it or none. */
interface OptionFeature {
  readonly option:
    | "logging"
    | "data"
    | "search"
    | "tasks"
    | "kafka"
    | "jobs"
    | "storage"
    | "security"
    | "actuator"
    | "openapi";
  /** The function of its entry point that makes its values, when not named as the option. */
  readonly factory?: string;
  /** The section of the configuration whose keys stop `bootstrap` when set without the option. */
  readonly section?: string;
  /** What the keys configure, as the refusal says it. */
  readonly needs?: string;
  /**
   * Whether the configuration asks for the feature, when not any key a file or the configuration
   * object set in the section; then `needs` is the whole of what they ask for.
   */
  readonly asked?: (settings: ThawSettings) => boolean;
}

// Terse on purpose: this table is in every app's bundle.
const OPTION_FEATURES: readonly OptionFeature[] = [
  // First: the lines the others write as they are set up go through it.
  { option: "logging", section: "logging", needs: "logging" },
  // The datasources serve the migration runner without it: they never ask for it.
  { option: "data" },
  // Likewise the search connections, which the runner reads without it.
  { option: "search" },
  // Its keys are unknown to an app that does not import it: they never ask for it either.
  { option: "tasks" },
  { option: "kafka", section: "kafka", needs: "the Kafka client" },
  // After the datasources, whose clients it keeps its jobs with.
  { option: "jobs", section: "jobs", needs: "the job queue" },
  { option: "storage", section: "storage", needs: "object storage" },
  // Before the actuator, whose routes (on a port of their own too) it guards.
  { option: "security", section: "security.oauth2", needs: "the resource server" },
  { option: "actuator", section: "management", needs: "the actuator" },
  {
    option: "openapi",
    factory: "openApi",
    section: "app.openapi",
    asked: (settings) => openApiConfigured(settings.get("app.openapi")),
    needs: "serving OpenAPI needs the generator",
  },
];

/** What makes the values of the feature given as `option`, for messages. */
function originOf(feature: OptionFeature): FeatureOrigin {
  return { option: feature.option, factory: feature.factory ?? feature.option };
}

/**
 * The option features an app was given, each set up from the settings (before the beans are
 * made: the actuator's meter provider is one they may ask for), in the order they fold.
 */
export async function optionFeatures(
  options: { readonly [K in OptionFeature["option"]]?: unknown },
  settings: ThawSettings,
  host: SetupHost,
): Promise<FeatureFactory[]> {
  const { config } = host;
  const factories: FeatureFactory[] = [];
  for (const feature of OPTION_FEATURES) {
    const value = options[feature.option];
    if (value !== undefined && value !== false) {
      factories.push(await featureSetup(value, originOf(feature))(settings, host));
    } else if (
      value === undefined && feature.section !== undefined &&
      (feature.asked?.(settings) ?? configuredInFile(config, feature.section))
    ) {
      throw new ConfigError(
        `${settings.where(feature.section)}: ${
          feature.asked ? "" : "these keys configure "
        }${feature.needs}, ${entryHint(feature.option)}`,
      );
    }
  }
  return factories;
}

/** Where the feature given as `option` lives, and how to pass it, as the refusals say it. */
export function entryHint(option: OptionFeature["option"]): string {
  const { factory } = originOf(
    OPTION_FEATURES.find((feature) => feature.option === option) as OptionFeature,
  );
  return `which lives in its own entry point: import { ${factory} } from "@thaw/thaw/${option}" ` +
    `and pass bootstrap({ ${option}: ${factory}() })`;
}

// Whether a section holds a value that a file or the configuration object set: one the
// environment set alone (`MANAGEMENT_HEALTH_TIMEOUT`, shared with other services) is not the app
// asking for a feature.
function configuredInFile(config: LoadedConfig, section: string): boolean {
  const walk = (value: unknown, key: string): boolean => {
    if (config.origins?.get(key)?.startsWith("environment variable ")) return false;
    if (typeof value !== "object" || value === null) return value !== undefined && value !== null;
    return Object.entries(value).some(([k, v]) =>
      walk(v, Array.isArray(value) ? `${key}[${k}]` : `${key}.${k}`)
    );
  };
  // A dotted section (`security.oauth2`) is walked from where it is.
  return walk(configValue(config.values, section), section);
}
