// The text a cache entry is stored under: one for all arguments that are deep-equal, another for
// any that are not. JSON where the value is JSON data, so a key reads as the arguments; what JSON
// cannot tell apart gets a form JSON never writes (`12n`, `undefined`, `Date(...)`, `new X{...}`,
// `(1,2)` for several arguments).
import { printable } from "../shown_value.ts";

/**
 * The cache key of a value (`@Cacheable`'s arguments, or what its `key` option returned): two
 * values get the same key exactly when they are deep-equal: the same primitives (`0` and `-0`
 * alike, `NaN` equal to itself), arrays of equal items, plain objects with equal own enumerable
 * properties in any order (a plain object and one of no prototype alike), `Date`s of one time, `Map`s and `Set`s of equal entries in
 * any order. A function, a symbol, a cycle, an instance of any other class (a `URL`, a class of
 * one's own: its state may be in private fields a key cannot see) and more than
 * {@linkcode MAX_KEY_VALUES} values have no key: a `TypeError` names where it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheKey } from "./cache_key.ts";
 *
 * assert.equal(cacheKey([7, "a"]), '[7,"a"]');
 * assert.equal(cacheKey({ b: 1, a: 2 }), cacheKey({ a: 2, b: 1 }));
 * assert.notEqual(cacheKey([1]), cacheKey(["1"]));
 * assert.throws(() => cacheKey([() => 1]), { message: /^the key's \[0\] is a function/ });
 * ```
 */
export function cacheKey(value: unknown): string {
  return encode(value, new Encoding(), "$");
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
  const encoding = new Encoding();
  if (args.length === 1) return encode(args[0], encoding, "[0]");
  return `(${args.map((arg, i) => encode(arg, encoding, `[${i}]`)).join(",")})`;
}

/** The most values one key is made of: past it, arguments that share parts could cost hours. */
export const MAX_KEY_VALUES = 100_000;

// What an encoding has seen: the objects it is inside (a cycle has no key) and how many values
// it wrote (an object reached along many paths is written once for each).
class Encoding {
  readonly open: object[] = [];
  values = 0;
}

function encode(value: unknown, encoding: Encoding, path: string): string {
  if (++encoding.values > MAX_KEY_VALUES) {
    throw new TypeError(
      `${where(path)} makes the key more than ${MAX_KEY_VALUES} values long, which is too large`,
    );
  }
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
  if (encoding.open.includes(object)) {
    throw new TypeError(`${where(path)} holds itself, which has no cache key`);
  }
  encoding.open.push(object);
  try {
    return encodeObject(object, encoding, path);
  } finally {
    encoding.open.pop();
  }
}

function encodeObject(object: object, encoding: Encoding, path: string): string {
  const prototype = Object.getPrototypeOf(object);
  if (prototype === Array.prototype && Array.isArray(object)) {
    if (Object.keys(object).length !== countItems(object) || symbolKeyed(object)) {
      throw new TypeError(`${where(path)} is an array with properties beside its items`);
    }
    // A hole is `~`, which no value's key is: `[~,1]` is not `[undefined,1]`.
    const items: string[] = [];
    for (let i = 0; i < object.length; i++) {
      items.push(i in object ? encode(object[i], encoding, `${path}[${i}]`) : "~");
    }
    return `[${items.join(",")}]`;
  }
  if (prototype === Date.prototype) return `Date(${(object as Date).getTime()})`;
  // A boxed primitive holds its value where a key reads it. (Not a list at the top of the module:
  // one there would stay in every bundle.)
  if (
    prototype === Number.prototype || prototype === String.prototype ||
    prototype === Boolean.prototype || prototype === BigInt.prototype
  ) {
    const primitive = (object as { valueOf(): unknown }).valueOf();
    return `new ${prototype.constructor.name}(${encode(primitive, encoding, path)})`;
  }
  if (prototype === Map.prototype) {
    const entries = [...(object as Map<unknown, unknown>)].map(([k, v], i) =>
      `[${encode(k, encoding, `${path} key ${i + 1}`)},${encode(v, encoding, `${path}.get(…)`)}]`
    );
    return `Map([${entries.sort().join(",")}])`;
  }
  if (prototype === Set.prototype) {
    const items = [...(object as Set<unknown>)].map((item, i) =>
      encode(item, encoding, `${path} item ${i + 1}`)
    );
    return `Set([${items.sort().join(",")}])`;
  }
  // Any other class's instance may keep its state in private fields or internal slots (a URL, a
  // RegExp, a class with `#fields`), so that two different ones would get one key.
  if (prototype !== Object.prototype && prototype !== null) {
    if (typeof (object as { then?: unknown }).then === "function") {
      throw new TypeError(`${where(path)} is a promise: a key is made before the call, at once`);
    }
    const name = typeof prototype?.constructor === "function" ? prototype.constructor.name : "";
    throw new TypeError(
      `${where(path)} is ${name === "" ? "an instance of a class" : `a ${name}`}, which may hold ` +
        "what a key cannot see (private fields); only plain objects, arrays, Dates, Maps, Sets " +
        "and primitives make a key",
    );
  }
  if (symbolKeyed(object)) {
    throw new TypeError(`${where(path)} has symbol-keyed properties, which a key cannot hold`);
  }
  const fields = Object.keys(object).sort().map((k) =>
    `${JSON.stringify(k)}:${
      encode((object as Record<string, unknown>)[k], encoding, `${path}${field(k)}`)
    }`
  );
  return `{${fields.join(",")}}`;
}

/** How many items an array holds, holes aside. */
function countItems(array: readonly unknown[]): number {
  let count = 0;
  for (let i = 0; i < array.length; i++) if (i in array) count++;
  return count;
}

function symbolKeyed(object: object): boolean {
  return Object.getOwnPropertySymbols(object).some((symbol) =>
    Object.getOwnPropertyDescriptor(object, symbol)?.enumerable
  );
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
  // `$`: the value `key` returned; `[0]`: the first argument.
  const argument = /^\[(\d+)\]/.exec(path);
  const rest = path.slice(argument === null ? 1 : argument[0].length).replace(/^\./, "");
  if (argument === null) return rest === "" ? "the key" : `the key's ${rest}`;
  return `argument ${Number(argument[1]) + 1}${rest === "" ? "" : ` (its ${rest})`}`;
}
