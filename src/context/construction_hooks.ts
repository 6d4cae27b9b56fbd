// What the container knows of `@Value` and `@ConfigurationProperties` as it constructs a bean:
// where each decorator leaves, in the metadata of the class it marks, the code that fills such a
// bean. The filling comes with the decorators, so that an app whose classes use neither carries
// none of it: this file is all such an app carries.
import type { ConfigValues } from "../config/config_values.ts";
import type { Class } from "./class.ts";

/**
 * The values of a class's `@Value` fields (its superclasses' too), by the key each field's
 * initializer looks up; errors name the class, the field and the configuration key.
 */
export type ConfiguredFields = (
  cls: Class,
  values: ConfigValues,
  locate: (key: string) => string,
) => Map<symbol, unknown>;

/** Where `@Value` leaves the {@linkcode ConfiguredFields} in a class's metadata. */
export const CONFIGURED_FIELDS: unique symbol = Symbol("thaw.configured-fields");

/**
 * Fills a constructed `@ConfigurationProperties` instance with its section, validated; does
 * nothing for a class that is not one itself.
 */
export type PropertiesBinding = (
  cls: Class,
  instance: object,
  values: ConfigValues,
  locate: (key: string) => string,
) => Promise<void>;

/** Where `@ConfigurationProperties` leaves the {@linkcode PropertiesBinding} in a class's metadata. */
export const PROPERTIES_BINDING: unique symbol = Symbol("thaw.properties-binding");

/**
 * What the decorators of a class or of its superclasses left under `key`: a class's metadata
 * inherits its superclass's (and an undecorated class sees its parent's), so one read finds it
 * for the whole chain.
 */
export function constructionHook<T>(cls: Class, key: symbol): T | undefined {
  return (cls as unknown as Record<symbol, Record<symbol, unknown> | undefined>)[
    Symbol.metadata
  ]?.[key] as T | undefined;
}
