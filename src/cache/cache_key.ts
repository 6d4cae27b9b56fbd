// The text a cache entry is stored under: one for all arguments that are deep-equal, another for
// any that are not. JSON where the value is JSON data, so a key reads as the arguments; what JSON
// cannot tell apart gets a form JSON never writes (`12n`, `undefined`, `Date(...)`, `new X{...}`,
// `(1,2)` for several arguments).
import { printable } from "../config/application_config.ts";

/**
 * The cache key of a value (`@Cacheable`'s arguments, or what its `key` option returned): two
 * values get the same key exactly when they are deep-equal: the same primitives (`0` and `-0`
 * alike, `NaN` equal to itself), arrays of equal items, objects of the same class with equal own
 * enumerable properties in any order (a plain object and one of no prototype alike), `Date`s of one time, `Map`s and `Set`s of equal entries in
 * any order. A function, a symbol or a cycle has no key: a `TypeError` names where it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheKey } from "./cache_key.ts";
 *
 * assert.equal(cacheKey([7, "a"]), '[7,"a"]');
 * assert.equal(cacheKey({ b: 1, a: 2 }), cacheKey({ a: 2, b: 1 }));
 * assert.notEqual(cacheKey([1]), cacheKey(["1"]));
 * assert.throws(() => cacheKey([() => 1]), /argument 1 is a function/);
 * ```
 */
export function cacheKey(value: unknown): string {
  return encode(value, [], "");
}

/**
 * The cache key of a call's arguments, as Spring makes it: one argument's own key (so that
 * `key: (id) => id` of another method finds it), or the keys of none or several in parentheses,
 * which no single value's key is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { argumentsKey, cacheKey } from "./cache_key.ts";
 *
 * assert.equal(argumentsKey([7]), cacheKey(7));
 * assert.equal(argumentsKey([7, "a"]), '(7,"a")');
 * assert.equal(argumentsKey([]), "()");
 * assert.notEqual(argumentsKey([[7, "a"]]), argumentsKey([7, "a"]));
 * ```
 */
export function argumentsKey(args: readonly unknown[]): string {
  if (args.length === 1) return encode(args[0], [], "[0]");
  return `(${args.map((arg, i) => encode(arg, [], `[${i}]`)).join(",")})`;
}

function encode(value: unknown, open: object[], path: string): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : String(value);
    case "boolean":
      return String(value);
    case "undefined":
      return "undefined";
    case "bigint":
      return `${value}n`;
    case "function":
    case "symbol":
      throw new TypeError(`${where(path)} is a ${typeof value}, which has no cache key`);
  }
  if (value === null) return "null";
  const object = value as object;
  if (open.includes(object)) {
    throw new TypeError(`${where(path)} holds itself, which has no cache key`);
  }
  open.push(object);
  try {
    if (Array.isArray(object)) {
      // A hole is `~`, which no value's key is: `[~,1]` is not `[undefined,1]`.
      const items: string[] = [];
      for (let i = 0; i < object.length; i++) {
        items.push(i in object ? encode(object[i], open, `${path}[${i}]`) : "~");
      }
      return `[${items.join(",")}]`;
    }
    if (object instanceof Date) return `Date(${object.getTime()})`;
    // A boxed primitive holds its value in no property.
    if (object instanceof Number || object instanceof String || object instanceof Boolean) {
      return `new ${object.constructor.name}(${encode(object.valueOf(), open, path)})`;
    }
    if (object instanceof Map) {
      const entries = [...object].map(([k, v], i) =>
        `[${encode(k, open, `${path} key ${i + 1}`)},${encode(v, open, `${path}.get(…)`)}]`
      );
      return `Map([${entries.sort().join(",")}])`;
    }
    if (object instanceof Set) {
      const items = [...object].map((item, i) => encode(item, open, `${path} item ${i + 1}`));
      return `Set([${items.sort().join(",")}])`;
    }
    const fields = Object.keys(object).sort().map((k) =>
      `${JSON.stringify(k)}:${
        encode((object as Record<string, unknown>)[k], open, `${path}${field(k)}`)
      }`
    );
    const prototype = Object.getPrototypeOf(object);
    const body = `{${fields.join(",")}}`;
    if (prototype === Object.prototype || prototype === null) return body;
    // Another class's instance: its name tells it from a plain object of the same fields.
    const name = typeof prototype.constructor === "function" ? prototype.constructor.name : "";
    return `new ${JSON.stringify(name)}${body}`;
  } finally {
    open.pop();
  }
}

// A property as a message names it: `.name`, or `["a b"]` for a name that is not an identifier.
function field(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

// What holds the value with no key, for the message; a property's name is the caller's text,
// which must not break the line of a log the message reaches.
function where(path: string): string {
  return printable(placed(path));
}

function placed(path: string): string {
  // The arguments' own array: `[0]` is the first argument.
  const argument = /^\[(\d+)\]/.exec(path);
  if (argument === null) return path === "" ? "the key" : `the key's ${path.replace(/^\./, "")}`;
  const rest = path.slice(argument[0].length);
  return `argument ${Number(argument[1]) + 1}${
    rest === "" ? "" : ` (its ${rest.replace(/^\./, "")})`
  }`;
}
