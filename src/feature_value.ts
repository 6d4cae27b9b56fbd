// What `bootstrap` knows of a feature that lives in an entry point of its own (the OpenAPI
// generator, the actuator): an opaque, frozen value whose setup only that entry point made, so
// that the default entry neither imports nor (bundled) carries the feature.
import type { LoadedConfig } from "./config/application_config.ts";
import type { ThawSettings } from "./config/thaw_settings.ts";
import type { ApplicationContext } from "./context/application_context.ts";
import type { FeatureFactory } from "./app_feature.ts";
import type { Logger } from "./web/error_responder.ts";

/** What a feature's setup reads, and the container it may define beans in before they are made. */
export interface SetupHost {
  readonly config: LoadedConfig;
  readonly context: ApplicationContext;
  /**
   * The logger Thaw's own code writes to (the app's, wrapped): its methods are looked up at each
   * line, so that the logging feature may replace them.
   */
  readonly logger: Logger;
}

/**
 * A feature's setup, from the settings, before the beans are made (the actuator's meter provider
 * is one they may ask for; the datasources' clients are beans): what makes the feature once they
 * are.
 */
export type FeatureSetup = (settings: ThawSettings, host: SetupHost) => Promise<FeatureFactory>;

/** A feature's value, as `bootstrap` takes it: opaque but for what it is. */
export interface FeatureValue<K extends string> {
  /** What this is, for messages. */
  readonly feature: K;
}

/** What makes a feature's values, for messages. */
export interface FeatureOrigin {
  /** The `bootstrap` option, which is the feature's kind and its entry point's name (`openapi`). */
  readonly option: string;
  /** The function of that entry point that makes the values (`openApi`). */
  readonly factory: string;
}

const setups = new WeakMap<object, FeatureSetup>();

/** A value of the feature `kind` standing for `setup`. */
export function makeFeature<K extends string>(kind: K, setup: FeatureSetup): FeatureValue<K> {
  const value: FeatureValue<K> = Object.freeze({ feature: kind });
  setups.set(value, setup);
  return value;
}

/** The setup behind a value of the feature; a `TypeError` saying what to pass for anything else. */
export function featureSetup(
  value: unknown,
  { option, factory }: FeatureOrigin,
): FeatureSetup {
  const kind = (value as { feature?: unknown } | null)?.feature;
  const setup = typeof value === "object" && value !== null && kind === option
    ? setups.get(value)
    : undefined;
  if (setup !== undefined) return setup;
  if (kind === option) {
    throw new TypeError(
      `bootstrap({ ${option} }) takes what ${factory}() of this copy of @thaw/thaw returns; ` +
        "this one comes from another copy (npm and JSR, or two versions): import every " +
        "entry point from one",
    );
  }
  throw new TypeError(
    `bootstrap({ ${option} }) takes what ${factory}() returns (import { ${factory} } from ` +
      `"@thaw/thaw/${option}"), or false; got ${
        value === null
          ? "null"
          : typeof value === "function"
          ? `the function ${value.name || "(anonymous)"}: call it, ${value.name || factory}()`
          : typeof value === "object"
          ? "an object"
          : JSON.stringify(value)
      }`,
  );
}
