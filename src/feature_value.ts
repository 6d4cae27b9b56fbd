// What `bootstrap` knows of a feature that lives in an entry point of its own (the OpenAPI
// generator, the actuator): an opaque, frozen value whose setup only that entry point made, so
// that the default entry neither imports nor (bundled) carries the feature.

/** A feature's value, as `bootstrap` takes it: opaque but for what it is. */
export interface FeatureValue<K extends string> {
  /** What this is, for messages. */
  readonly feature: K;
}

/** Makes a feature's values, and finds the setup behind one. */
export interface FeatureKind<K extends string, S> {
  /** A value standing for `setup`. */
  make(setup: S): FeatureValue<K>;
  /** The setup behind a value; a `TypeError` saying what to pass for anything else. */
  setupOf(value: unknown): S;
}

/**
 * The values of one feature: `option` is its `bootstrap` option, `factory` the function of
 * `entry` that makes them (`openApi`, `@thaw/thaw/openapi`).
 */
export function featureKind<K extends string, S>(
  kind: K,
  option: string,
  factory: string,
  entry: string,
): FeatureKind<K, S> {
  const setups = new WeakMap<object, S>();
  return {
    make(setup) {
      const value: FeatureValue<K> = Object.freeze({ feature: kind });
      setups.set(value, setup);
      return value;
    },
    setupOf(value) {
      const setup = typeof value === "object" && value !== null ? setups.get(value) : undefined;
      if (setup !== undefined) return setup;
      if ((value as { feature?: unknown } | null)?.feature === kind) {
        throw new TypeError(
          `bootstrap({ ${option} }) takes what ${factory}() of this copy of @thaw/thaw returns; ` +
            "this one comes from another copy (npm and JSR, or two versions): import every " +
            "entry point from one",
        );
      }
      throw new TypeError(
        `bootstrap({ ${option} }) takes what ${factory}() returns (import { ${factory} } from ` +
          `"${entry}"), or false; got ${
            value === null
              ? "null"
              : typeof value === "function"
              ? `the function ${value.name || "(anonymous)"}: call it, ${value.name || factory}()`
              : typeof value === "object"
              ? "an object"
              : JSON.stringify(value)
          }`,
      );
    },
  };
}
