// Whether a value is JSON data: what `JSON.parse(JSON.stringify(value))` gives back deep-equal, so
// that a store holding JSON text returns what was put. Anything JSON would change or drop is
// named, for a warning that says what to return instead.

/**
 * What of `value` is not JSON data, as a phrase naming the value and where it is (`a Date at
 * .user.born`), or `undefined` when all of it is: plain objects (of `Object.prototype`), arrays,
 * strings, finite numbers, booleans and `null`. An object property whose value is `undefined` is
 * allowed: JSON drops it, as reading a missing property gives `undefined` again. `-0` is allowed
 * and reads back as `0`, JSON's one zero.
 *
 * Not JSON data: a `Date`, `Map`, `Set` or any other class's instance (it would read back as a
 * plain object, or as `{}`), an object of `null` prototype, a bigint (`JSON.stringify` throws), a
 * number that is not finite (it would read back as `null`), a function or a symbol, an array item
 * that is `undefined` or a hole (read back as `null`), a symbol-keyed property, and a value that
 * holds itself.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notJsonData } from "./json_data.ts";
 *
 * assert.equal(notJsonData({ id: 7, tags: ["a"], note: null, gone: undefined }), undefined);
 * assert.equal(notJsonData(new Date(0)), "a Date");
 * assert.equal(notJsonData({ user: { born: new Date(0) } }), "a Date at .user.born");
 * assert.equal(notJsonData([1, NaN]), "NaN at [1]");
 * assert.equal(notJsonData([1, undefined]), "undefined at [1]");
 * assert.equal(notJsonData(12n), "a bigint");
 * ```
 */
export function notJsonData(value: unknown): string | undefined {
  return check(value, "", []);
}

function check(value: unknown, path: string, open: object[]): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : at(String(value), path);
    case "undefined":
      return at("undefined", path);
    case "bigint":
    case "function":
    case "symbol":
      return at(`a ${typeof value}`, path);
  }
  if (value === null) return undefined;
  const object = value as object;
  if (open.includes(object)) return at("a value that holds itself", path);
  open.push(object);
  try {
    if (Array.isArray(object)) {
      if (Object.getPrototypeOf(object) !== Array.prototype) return at(instance(object), path);
      // JSON writes the items alone, unless a `toJSON` of its own writes something else.
      if (
        Object.keys(object).some((key) => !/^(0|[1-9]\d*)$/.test(key)) ||
        Object.getOwnPropertySymbols(object).length > 0
      ) {
        return at("an array with properties beside its items", path);
      }
      for (let i = 0; i < object.length; i++) {
        const where = `${path}[${i}]`;
        if (!(i in object)) return at("an array hole", where);
        const problem = check(object[i], where, open);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    if (Object.getPrototypeOf(object) !== Object.prototype) return at(instance(object), path);
    if (Object.getOwnPropertySymbols(object).length > 0) {
      return at("a symbol-keyed property", path);
    }
    for (const [key, item] of Object.entries(object)) {
      // JSON drops a property that is `undefined`: reading it back gives `undefined` again.
      if (item === undefined) continue;
      const problem = check(item, `${path}${property(key)}`, open);
      if (problem !== undefined) return problem;
    }
    return undefined;
  } finally {
    open.pop();
  }
}

/** `a Date`, `an Error`, `a User`; an object of `null` prototype has no class. */
function instance(object: object): string {
  const prototype = Object.getPrototypeOf(object);
  if (prototype === null) return "an object of null prototype";
  const name = typeof prototype.constructor === "function" ? prototype.constructor.name : "";
  if (name === "") return "an instance of an anonymous class";
  // "a User", "a URL": a U reads as "you".
  return `${/^[AEIO]/.test(name) ? "an" : "a"} ${name}`;
}

function property(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function at(what: string, path: string): string {
  return path === "" ? what : `${what} at ${path}`;
}
