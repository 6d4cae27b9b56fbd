/**
 * Random configuration objects for the properties of `resolveConfig` and `loadConfig`, and a model
 * of `${VAR}` substitution written apart from the library's: each string is generated as its
 * pieces, literal text and placeholders, so what it resolves to is known without parsing it.
 */
import fc from "fast-check";

/** A piece of a string value: literal text (never holding `$`), or `${name}` / `${name:fallback}`. */
export type Segment =
  | { readonly text: string }
  | { readonly name: string; readonly fallback?: string };

/** A configuration value as generated: strings as their pieces. */
export type Spec =
  | { readonly kind: "string"; readonly segments: readonly Segment[] }
  | { readonly kind: "scalar"; readonly value: number | boolean | null }
  | { readonly kind: "array"; readonly items: readonly Spec[] }
  | { readonly kind: "object"; readonly entries: readonly (readonly [string, Spec])[] };

/** The environment: the variables that are set, and their values. */
export type Env = Readonly<Record<string, string>>;

/** A configuration object, its pieces, and an environment to resolve it in. */
export interface ConfigTree {
  readonly spec: Spec;
  /** The object, as `bootstrap({ config })` takes it (placeholders unresolved). */
  readonly config: Record<string, unknown>;
  readonly env: Env;
}

// Variable names: plain, dotted, and those an object has by inheritance (which an environment
// object must not be taken to set), and PATH and HOME, which the runtime's environment sets.
const names = fc.constantFrom(
  "A",
  "DB_HOST",
  "db.url",
  "_x1",
  "PATH",
  "HOME",
  "constructor",
  "toString",
  "__proto__",
);
// Keys: plain, numeric (which objects order first), YAML words that must stay strings, and the
// ones an object inherits; `__proto__` is dropped by substitution. No `.` nor `[`: the error's
// path is dotted.
const keys = fc.constantFrom(
  "a",
  "b",
  "server",
  "component-scan",
  "0",
  "12",
  "yes",
  "null",
  "true",
  "~",
  "key with space",
  "ünï",
  "constructor",
  "toString",
  "__proto__",
);
// Literal text: no `$`, so that no placeholder is made by accident; YAML's special characters,
// quotes, line breaks and non-ASCII.
const literal = fc.string({
  unit: fc.constantFrom(..."ab Z9{}:#-'\"\n\t\\é密🔑&%*!|>"),
  maxLength: 8,
});
// A fallback runs to the first `}`; it may hold `$`, `{` and `:`.
const fallback = fc.string({ unit: fc.constantFrom(..."ab 9${:-'\n/é"), maxLength: 6 });
// A variable's value is inserted as it is: `$&`, `$1` and `${X}` in it are not read again.
const envValue = fc.string({ unit: fc.constantFrom(..."ab 9$&{}`'1:\né"), maxLength: 8 });

const segment: fc.Arbitrary<Segment> = fc.oneof(
  literal.map((text) => ({ text })),
  fc.record({ name: names, fallback: fallback }, { requiredKeys: ["name"] }),
);

const leaf: fc.Arbitrary<Spec> = fc.oneof(
  fc.array(segment, { maxLength: 4 }).map((segments) => ({ kind: "string" as const, segments })),
  fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)).map((value) => ({
    kind: "scalar" as const,
    value,
  })),
);

const { object } = fc.letrec<{ node: Spec; object: Spec }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }).map((items) => ({ kind: "array" as const, items })),
    tie("object"),
  ),
  object: fc.uniqueArray(fc.tuple(keys, tie("node")), { maxLength: 5, selector: ([k]) => k })
    .map((entries) => ({ kind: "object" as const, entries })),
}));

/** A random configuration object and environment. */
export const configTree: fc.Arbitrary<ConfigTree> = fc.record({
  spec: object,
  env: fc.uniqueArray(fc.tuple(names, envValue), { maxLength: 6, selector: ([n]) => n })
    .map((pairs) => Object.fromEntries(pairs) as Env),
}).map(({ spec, env }) => ({ spec, config: render(spec) as Record<string, unknown>, env }));

/** The value as written, placeholders and all. */
export function render(spec: Spec): unknown {
  switch (spec.kind) {
    case "string":
      return spec.segments.map((s) =>
        "text" in s
          ? s.text
          : s.fallback === undefined
          ? `\${${s.name}}`
          : `\${${s.name}:${s.fallback}}`
      ).join("");
    case "scalar":
      return spec.value;
    case "array":
      return spec.items.map(render);
    case "object":
      // Object.fromEntries defines an own `__proto__` key rather than setting the prototype.
      return Object.fromEntries(spec.entries.map(([k, v]) => [k, render(v)]));
  }
}

const isSet = (env: Env, name: string) => Object.hasOwn(env, name);

/**
 * The value with every placeholder replaced by its variable, else its fallback; `__proto__` keys
 * left out. Only meaningful when {@linkcode missingPlaceholders} finds none.
 */
export function expectedValues(spec: Spec, env: Env): unknown {
  switch (spec.kind) {
    case "string":
      return spec.segments.map((s) =>
        "text" in s ? s.text : isSet(env, s.name) ? env[s.name] : s.fallback ?? ""
      ).join("");
    case "scalar":
      return spec.value;
    case "array":
      return spec.items.map((item) => expectedValues(item, env));
    case "object":
      return Object.fromEntries(
        spec.entries.filter(([k]) => k !== "__proto__").map((
          [k, v],
        ) => [k, expectedValues(v, env)]),
      );
  }
}

/** A placeholder whose variable is unset and has no fallback, with the dotted path of its key. */
export interface Missing {
  readonly key: string;
  readonly name: string;
  /** The string that holds the placeholder, as written. */
  readonly text: string;
}

/** Every placeholder that cannot be resolved (those under a `__proto__` key are dropped). */
export function missingPlaceholders(spec: Spec, env: Env, key = ""): Missing[] {
  switch (spec.kind) {
    case "string":
      return spec.segments.flatMap((s) =>
        "text" in s || s.fallback !== undefined || isSet(env, s.name)
          ? []
          : [{ key, name: s.name, text: render(spec) as string }]
      );
    case "scalar":
      return [];
    case "array":
      return spec.items.flatMap((item, i) => missingPlaceholders(item, env, `${key}[${i}]`));
    case "object":
      return spec.entries.flatMap(([k, v]) =>
        k === "__proto__" ? [] : missingPlaceholders(v, env, key ? `${key}.${k}` : k)
      );
  }
}

/** Looks a variable up in `env` as `bootstrap({ env })` does: only its own keys are set. */
export function envOf(env: Env): (name: string) => string | undefined {
  return (name) => isSet(env, name) ? env[name] : undefined;
}
