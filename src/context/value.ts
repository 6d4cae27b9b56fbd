import { configValue } from "../config/application_config.ts";
import type { ConfigValues } from "../config/config_values.ts";
import type { InjectionDecorator } from "./autowired.ts";
import type { Class } from "./class.ts";
import { entryChain, ownEntry } from "./class_record.ts";
import { DefinitionError } from "./errors.ts";
import { injectedOr } from "./field_injection.ts";
import { checkDecoratorCall } from "./decorator_call.ts";
import { CONFIGURED_FIELDS, type ConfiguredFields } from "./construction_hooks.ts";
import { shownValue } from "../shown_value.ts";

/**
 * Options of {@linkcode Value}: `type` converts the configuration value for the field.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#configvalueoptions
 */
export interface ConfigValueOptions {
  /**
   * `Number`: a number, or a string holding a decimal number (`"8080"`, `"-1.5"`); `Boolean`:
   * a boolean, or the string `true` or `false`. Anything else stops `bootstrap`. Without it the
   * value is taken as the configuration holds it, and a default is text.
   */
  readonly type?: NumberConstructor | BooleanConstructor;
}

/**
 * The type a {@linkcode Value} field receives: `number` or `boolean` with `type`, else whatever
 * the configuration holds (`any`: the compiler cannot see the configuration).
 */
export type ConfiguredValue<O> = O extends { readonly type: infer T }
  ? T extends NumberConstructor ? number : T extends BooleanConstructor ? boolean : never
  // deno-lint-ignore no-explicit-any
  : any;

/** `${key}` or `${key:default}`, taken apart. */
export interface ValueExpression {
  /** The dotted configuration key. */
  readonly key: string;
  /** The text after the first `:`, when there is one. */
  readonly fallback?: string;
}

/** A `@Value` field: `key` is how its initializer finds the value at construction. */
interface ValueField {
  readonly key: symbol;
  readonly fieldName: string;
  readonly expression: ValueExpression;
  readonly type: NumberConstructor | BooleanConstructor | undefined;
}

const VALUES = Symbol("thaw.values");

// The key stops at the first `:` or `}`; the default runs to the final `}`, so that it may hold
// `:` itself (`${url:http://localhost:8080}`).
const EXPRESSION = /^\$\{([^:}]*)(?::([\s\S]*))?\}$/;
const KEY = /^[^\s.:{}]+(?:\.[^\s.:{}]+)*$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Takes `${key}` or `${key:default}` apart; `undefined` for anything else. */
export function parseValueExpression(expression: string): ValueExpression | undefined {
  const match = EXPRESSION.exec(expression);
  if (match === null || !KEY.test(match[1])) return undefined;
  return match[2] === undefined ? { key: match[1] } : { key: match[1], fallback: match[2] };
}

/**
 * A configuration value as the field's type wants it, or what was found instead: the kind of
 * value, never the value itself, since it may be a secret.
 */
export function convertValue(
  value: unknown,
  type: NumberConstructor | BooleanConstructor | undefined,
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly found: string } {
  if (type === undefined) return { ok: true, value };
  if (type === Number) {
    // `1e309` is decimal text, and YAML has `.inf` and `.nan`: none is a number a setting means.
    if (typeof value === "number") {
      return Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, found: "a number that is not finite" };
    }
    if (typeof value === "string" && DECIMAL.test(value.trim())) {
      const number = Number(value.trim());
      return Number.isFinite(number)
        ? { ok: true, value: number }
        : { ok: false, found: "a string that is not a finite number" };
    }
    return { ok: false, found: kindOf(value, "a string that is not a number") };
  }
  if (typeof value === "boolean") return { ok: true, value };
  const text = typeof value === "string" ? value.trim() : undefined;
  if (text === "true" || text === "false") return { ok: true, value: text === "true" };
  return { ok: false, found: kindOf(value, "a string that is not true or false") };
}

function kindOf(value: unknown, string: string): string {
  if (typeof value === "string") return string;
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

function needed(type: NumberConstructor | BooleanConstructor): string {
  return type === Number ? "a number (or a decimal number as text)" : "true or false";
}

/**
 * Sets a field to a configuration value before any request is served: `"${key}"` takes the value
 * at that dotted key, `"${key:default}"` falls back to the text after the first `:` when the key
 * is missing. The value is what `application.yml` holds, after `${VAR}` substitution: a number
 * stays a number, a list is an array, and a key holding an object gives the bean its own copy.
 * A missing key without a default stops `bootstrap`, naming the class, the field and the key.
 *
 * The field is set as the instance is constructed, so the constructor can already use it. A class
 * constructed with `new` outside the container keeps the field's own initial value.
 *
 * @param expression `"${key}"` or `"${key:default}"`; anything else throws a `TypeError` at once
 * @param options `type: Number` or `type: Boolean` converts text (from `${VAR}`) to that type
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#value
 */
export function Value<const O extends ConfigValueOptions = Record<never, never>>(
  expression: string,
  options?: O,
): InjectionDecorator<ConfiguredValue<O>>;
export function Value(expression: string, options: ConfigValueOptions = {}): InjectionDecorator {
  const parsed = typeof expression === "string" ? parseValueExpression(expression) : undefined;
  if (parsed === undefined) {
    throw new TypeError(
      `@Value(${JSON.stringify(expression) ?? String(expression)}): the expression must be ` +
        "${key} or ${key:default}, with a dotted key (${server.port}, ${app.name:thaw})",
    );
  }
  const type = options.type;
  if (type !== undefined && type !== Number && type !== Boolean) {
    throw new TypeError(
      `@Value(${JSON.stringify(expression)}): type must be Number or Boolean, got ${
        shownValue(type)
      }`,
    );
  }
  if (type !== undefined && parsed.fallback !== undefined) {
    const converted = convertValue(parsed.fallback, type);
    if (!converted.ok) {
      throw new TypeError(
        `@Value(${JSON.stringify(expression)}, { type: ${type.name} }): the default is ` +
          `${converted.found}; it must be ${needed(type)}`,
      );
    }
  }
  return <This, V>(_value: undefined, context: ClassFieldDecoratorContext<This, V>) => {
    checkDecoratorCall(`@Value(${JSON.stringify(expression)})`, _value, context);
    if (context.kind !== "field" || context.static) {
      throw new TypeError(
        `@Value(${JSON.stringify(expression)}) on ${String(context.name)}: it decorates ` +
          "instance fields only",
      );
    }
    const key = Symbol(String(context.name));
    // What the container runs as it constructs the bean: the fields' values.
    (context.metadata as Record<symbol, unknown>)[CONFIGURED_FIELDS] =
      configuredFields satisfies ConfiguredFields;
    ownEntry<ValueField[]>(context.metadata, VALUES, () => []).push({
      key,
      fieldName: String(context.name),
      expression: parsed,
      type,
    });
    return function (this: This, initial: V): V {
      return injectedOr(key, initial);
    };
  };
}

/**
 * The values of a class's `@Value` fields (its superclasses' too), by the key each field's
 * initializer looks up. `values` is the loaded configuration; errors name the class, the field and
 * the configuration key.
 */
export function configuredFields(
  cls: Class,
  values: ConfigValues,
  locate: (key: string) => string = (key) => key,
): Map<symbol, unknown> {
  const out = new Map<symbol, unknown>();
  for (const fields of entryChain<ValueField[]>(cls, VALUES)) {
    for (const field of fields) {
      out.set(field.key, configuredField(field, values, cls.name, locate));
    }
  }
  return out;
}

function configuredField(
  field: ValueField,
  values: ConfigValues,
  className: string,
  locate: (key: string) => string,
): unknown {
  const { key, fallback } = field.expression;
  const where = `@Value on field '${field.fieldName}' of class ${className}`;
  const found = configValue(values, key);
  const value = found === undefined || found === null ? fallback : found;
  if (value === undefined) {
    throw new DefinitionError(
      `${where}: the configuration has no value at key ${key}; set it, or give a default ` +
        `(\${${key}:default})`,
    );
  }
  const converted = convertValue(value, field.type);
  if (!converted.ok) {
    throw new DefinitionError(
      `${where}: ${locate(key)} holds ${converted.found}, where ${
        needed(field.type as NumberConstructor | BooleanConstructor)
      } is needed`,
    );
  }
  return ownCopy(converted.value, where, key);
}

// Each bean gets its own copy of a list or an object, so that one bean changing it cannot change
// what another sees.
function ownCopy(value: unknown, where: string, key: string): unknown {
  if (value === null || typeof value !== "object") return value;
  try {
    return structuredClone(value);
  } catch (error) {
    throw new DefinitionError(
      `${where}: the key ${key} holds an object that cannot be copied (${
        error instanceof Error ? error.message : String(error)
      })`,
      { cause: error },
    );
  }
}
