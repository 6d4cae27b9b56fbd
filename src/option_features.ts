// The features that live in entry points of their own and come as `bootstrap` options: one table,
// in the order they are folded (OpenAPI last, since it documents the routes of those before it).
// The keys that configure one, set while the option is left out, would be ignored without a
// word: they stop `bootstrap`, saying what to import (the actuator's and the logging feature's
// only when a file or the configuration object sets them: an environment variable alone may be
// shared with other services).
import type { LoadedConfig } from "./config/application_config.ts";
import { ConfigError } from "./config/config_error.ts";
import type { ThawSettings } from "./config/thaw_settings.ts";
import type { FeatureFactory } from "./app_feature.ts";
import { openApiConfigured } from "./openapi/openapi_feature.ts";
import { type FeatureOrigin, featureSetup, type SetupHost } from "./feature_value.ts";

/** One feature given as a `bootstrap` option, with the keys that configure it or none. */
type OptionFeature = FeatureOrigin & {
  readonly option:
    | "logging"
    | "data"
    | "search"
    | "tasks"
    | "kafka"
    | "security"
    | "actuator"
    | "openapi";
} & (FeatureKeys | { readonly section?: undefined });

/** The keys of an option feature, which stop `bootstrap` when set without the option. */
interface FeatureKeys {
  /** The section of the configuration that configures it. */
  readonly section: string;
  /** Whether the configuration asks for the feature. */
  readonly asked: (config: LoadedConfig, settings: ThawSettings) => boolean;
  /** What the keys ask for, as the refusal says it. */
  readonly needs: string;
}

const OPTION_FEATURES: readonly OptionFeature[] = [
  // First: the lines the others write as they are set up go through it.
  {
    option: "logging",
    factory: "logging",
    section: "logging",
    asked: (config) => configuredInFile(config, "logging"),
    needs: "these keys configure logging",
  },
  // The datasources serve the migration runner without it: they never ask for it.
  { option: "data", factory: "data" },
  // Likewise the search connections, which the runner reads without it.
  { option: "search", factory: "search" },
  // Its keys are unknown to an app that does not import it: they never ask for it either.
  { option: "tasks", factory: "tasks" },
  {
    option: "kafka",
    factory: "kafka",
    section: "kafka",
    asked: (config) => configuredInFile(config, "kafka"),
    needs: "these keys configure the Kafka client",
  },
  // Before the actuator, whose routes (on a port of their own too) it guards.
  {
    option: "security",
    factory: "security",
    section: "security.oauth2",
    asked: (config) => configuredInFile(config, "security.oauth2"),
    needs: "these keys configure the resource server",
  },
  {
    option: "actuator",
    factory: "actuator",
    section: "management",
    asked: (config) => configuredInFile(config, "management"),
    needs: "these keys configure the actuator",
  },
  {
    option: "openapi",
    factory: "openApi",
    section: "app.openapi",
    asked: (_, settings) => openApiConfigured(settings.get("app.openapi")),
    needs: "serving OpenAPI needs the generator",
  },
];

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
      factories.push(await featureSetup(value, feature)(settings, host));
    } else if (
      value === undefined && feature.section !== undefined && feature.asked(config, settings)
    ) {
      throw new ConfigError(
        `${settings.where(feature.section)}: ${feature.needs}, ${entryHint(feature.option)}`,
      );
    }
  }
  return factories;
}

/** Where the feature given as `option` lives, and how to pass it, as the refusals say it. */
export function entryHint(option: OptionFeature["option"]): string {
  const { factory } = OPTION_FEATURES.find((feature) => feature.option === option) as OptionFeature;
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
  return walk(
    section.split(".").reduce<unknown>(
      (v, k) => (v as Record<string, unknown> | null)?.[k],
      config.values,
    ),
    section,
  );
}
