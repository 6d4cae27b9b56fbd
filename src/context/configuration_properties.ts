import { configValue } from "../config/application_config.ts";
import type { ConfigValues } from "../config/config_values.ts";
import { copyTree, freezeTree } from "../config/plain_data.ts";
import { ConfigError } from "../config/config_error.ts";
import { isStandardSchema, type StandardSchemaV1 } from "../config/standard_schema.ts";
import type { Class } from "./class.ts";
import { entryOf } from "./class_record.ts";
import { checkDecoratorCall } from "./decorator_call.ts";
import { PROPERTIES_BINDING, type PropertiesBinding } from "./construction_hooks.ts";
import { DefinitionError } from "./errors.ts";
import { stereotype } from "./stereotypes.ts";

/** What a Standard Schema gives once it has validated and converted a value. */
export type SchemaOutput<S extends StandardSchemaV1> = NonNullable<
  S["~standard"]["types"]
>["output"];

/** Whether two types are the same, readonly-ness included: `true` or `false`. */
export type Same<X, Y> = (<T>() => T extends X ? 1 : 2) extends (<T>() => T extends Y ? 1 : 2)
  ? true
  : false;

/**
 * The fields of an instance type that the configuration fills: its methods and function fields
 * left out, and its readonly members (a getter alone is one), which it computes itself.
 */
export type FieldsOf<T> = {
  [
    K in keyof T as Same<{ [Q in K]: T[K] }, { -readonly [Q in K]: T[K] }> extends true
      // deno-lint-ignore no-explicit-any
      ? T[K] extends (...args: any[]) => unknown ? never : K
      : never
  ]: T[K];
};

/**
 * What a class must be for {@linkcode ConfigurationProperties}: any class whose fields the
 * schema's output fills with values of their types. A field the schema does not give, or gives
 * another type, makes the decorator a type error naming it.
 */
export type PropertiesClass<Output, C extends abstract new () => object> = Output extends
  UndefinedWhereOptional<FieldsOf<InstanceType<C>>> ? C
  : C & {
    readonly "fields the schema does not give with their types": Exclude<
      keyof FieldsOf<InstanceType<C>>,
      {
        [K in keyof Output & keyof FieldsOf<InstanceType<C>>]: Output[K] extends
          FieldsOf<InstanceType<C>>[K] ? K : never;
      }[keyof Output & keyof FieldsOf<InstanceType<C>>]
    >;
  };

/**
 * The fields with `undefined` allowed in the optional ones: a schema's optional key (zod's
 * `.optional()`) gives `T | undefined`, which `tls?: boolean` takes unless the app compiles with
 * `exactOptionalPropertyTypes`; with it too, as the fields' own check below does.
 */
export type UndefinedWhereOptional<F> = {
  [K in keyof F]: Record<never, never> extends Pick<F, K> ? F[K] | undefined : F[K];
};

/** The decorator {@linkcode ConfigurationProperties} returns. */
export type PropertiesDecorator<Output> = <C extends abstract new () => object>(
  value: PropertiesClass<Output, C>,
  context: ClassDecoratorContext<C>,
) => void;

interface PropertiesEntry {
  readonly prefix: string;
  readonly schema: StandardSchemaV1;
}

const PROPERTIES = Symbol("thaw.properties");
const PREFIX = /^[^\s.:{}[\]]+(?:\.[^\s.:{}[\]]+)*$/;

/**
 * Makes a class a bean of typed settings: the section of the configuration at `prefix`, validated
 * and converted by a [Standard Schema](https://standardschema.dev) (zod, valibot, arktype), fills
 * its fields. `z.coerce.number()` turns `${PORT}` text into a number; a default of the schema
 * stands for a key left out; a missing section is validated as `{}`. A value the schema refuses
 * stops `bootstrap` with every issue, each naming the key, and the file and the line it came
 * from (a profile's file, an environment variable). `@Autowired(Class)` injects the bean.
 *
 * The fields are set once the constructor has run, and the instance is frozen: settings do not
 * change behind the beans that read them. A field the schema does not give with its type is a
 * type error (`tsc --noEmit`, `deno check`). A schema that strips unknown keys (zod's
 * `z.object`) lets a misspelt key pass; `z.strictObject` refuses it.
 *
 * @param prefix the dotted key of the section (`mail`, `app.mail`)
 * @param schema validates and converts the section
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#configurationproperties
 */
export function ConfigurationProperties<S extends StandardSchemaV1>(
  prefix: string,
  schema: S,
): PropertiesDecorator<SchemaOutput<S>> {
  const call = `@ConfigurationProperties(${JSON.stringify(prefix) ?? String(prefix)})`;
  if (typeof prefix !== "string" || !PREFIX.test(prefix)) {
    throw new TypeError(`${call}: the prefix must be a dotted key (mail, app.mail)`);
  }
  if (!isStandardSchema(schema)) {
    throw new TypeError(
      `${call}: the schema must be a Standard Schema (zod, valibot, arktype), got ${
        schema === null ? "null" : typeof schema
      }`,
    );
  }
  const register = stereotype("properties", undefined, "ConfigurationProperties");
  return ((value: Class, context: ClassDecoratorContext) => {
    checkDecoratorCall(call, value, context);
    register(value, context);
    Object.defineProperty(context.metadata, PROPERTIES, {
      value: { prefix, schema } satisfies PropertiesEntry,
    });
    // What the container runs once it has constructed the bean: the binding of its section.
    (context.metadata as Record<symbol, unknown>)[PROPERTIES_BINDING] =
      bindProperties satisfies PropertiesBinding;
  }) as unknown as PropertiesDecorator<SchemaOutput<S>>;
}

/**
 * The prefix of a `@ConfigurationProperties` bean, by its class (what the actuator's
 * `configprops` lists it under); `undefined` for any other value.
 */
export function propertiesPrefix(instance: unknown): string | undefined {
  if (typeof instance !== "object" || instance === null) return undefined;
  const cls: unknown = Object.getPrototypeOf(instance)?.constructor;
  return typeof cls === "function"
    ? entryOf<PropertiesEntry>(cls as Class, PROPERTIES)?.prefix
    : undefined;
}

/**
 * Fills a `@ConfigurationProperties` instance with its section, validated: every issue in one
 * `ConfigError`, each at `locate(key)`. Does nothing for another class.
 */
export async function bindProperties(
  cls: Class,
  instance: object,
  values: ConfigValues,
  locate: (key: string) => string,
): Promise<void> {
  const entry = entryOf<PropertiesEntry>(cls, PROPERTIES);
  if (entry === undefined) return;
  const { prefix, schema } = entry;
  const where = `@ConfigurationProperties(${JSON.stringify(prefix)}) on class ${cls.name}`;
  const section = configValue(values, prefix);
  // Validated as a copy: a schema may transform what it is given, and the configuration is frozen.
  const given = section === undefined || section === null ? {} : copyTree(section);
  let result: Awaited<ReturnType<StandardSchemaV1["~standard"]["validate"]>>;
  try {
    result = await schema["~standard"].validate(given);
  } catch (error) {
    throw new DefinitionError(`${where}: the schema threw: ${(error as Error)?.message}`, {
      cause: error,
    });
  }
  if (result.issues !== undefined) {
    const issues = result.issues.map((issue) =>
      `${locate(issueKey(prefix, issue.path))}: ${issue.message}`
    );
    throw new ConfigError(
      `${where}: the configuration does not fit the schema:\n  ${issues.join("\n  ")}`,
    );
  }
  const output = result.value;
  if (typeof output !== "object" || output === null || Array.isArray(output)) {
    throw new DefinitionError(
      `${where}: the schema gave ${Array.isArray(output) ? "a list" : typeof output}; it must ` +
        `give an object, whose keys are the fields`,
    );
  }
  for (const [key, value] of Object.entries(output)) {
    if (value === undefined) continue;
    // A schema that passes unknown keys through must not let the configuration replace a method,
    // an accessor or a function field.
    const own = Object.getOwnPropertyDescriptor(instance, key);
    if (
      (key in instance && own === undefined) ||
      (own !== undefined &&
        (!("value" in own) || typeof own.value === "function" || own.configurable === false))
    ) {
      throw new ConfigError(
        `${where}: ${locate(issueKey(prefix, [key]))} would replace ${cls.name}'s own ` +
          `${key}, which is no field: rename the key, or have the schema refuse unknown keys`,
      );
    }
    // A copy, frozen: a list the schema gives (its default) is the same object for every bean.
    const copy = copyTree(value);
    freezeTree(copy);
    Object.defineProperty(instance, key, { value: copy, enumerable: true, writable: false });
  }
  Object.freeze(instance);
}

/** The dotted key an issue's path points at: `mail.relays[1].host`. */
export function issueKey(
  prefix: string,
  path: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined,
): string {
  let key = prefix;
  for (const segment of path ?? []) {
    const k = typeof segment === "object" ? segment.key : segment;
    key += typeof k === "number" ? `[${k}]` : `.${String(k)}`;
  }
  return key;
}
