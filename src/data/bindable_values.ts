// The values a statement's parameters may hold, checked before a driver sees them. A driver given
// what it cannot bind does not always fail: node:sqlite reads an object given first as named
// parameters and binds the values after it one placeholder to the left (Bun's binds nothing),
// SQLite stores NaN as NULL and MariaDB as 0 in an integer column, pg stores a function's source
// and a symbol's name, mysql2 a symbol's name. What no database binds is refused on every one, so
// that an app behaves alike on each; what one database's driver binds its own way (pg's and
// mysql2's JSON for objects and arrays) stays bound there. The check runs per statement: a type
// switch per value, nothing allocated unless a value is refused.
import type { SqlDialect } from "../sql/sql_dialect.ts";
import { firstLine } from "../sql/data_error.ts";
import { SqlFragment, SqlIdentifier } from "./sql_template.ts";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Throws a `TypeError` naming the datasource, the statement and the position (1 for `$1` or the
 * first `?`) of the first value of `params` that a `dialect` database cannot bind: a function, a
 * symbol, `NaN`, an invalid `Date`, a boxed primitive (`new String("x")`), a `Map`, a `Set`, a
 * promise and a SQL fragment or identifier on every database, and an array holding one (where an
 * array is bound); on SQLite, any object but a `Date` and a typed array (plain objects, arrays),
 * and a bigint beyond 64 bits; an `ArrayBuffer` on SQLite and PostgreSQL (pg stores it as `{}`).
 */
export function checkBindable(
  dialect: SqlDialect,
  params: readonly unknown[],
  datasource: string,
  text: string,
): void {
  for (let i = 0; i < params.length; i++) {
    if (!bindable(params[i], dialect)) refuse(params[i], dialect, i, datasource, text);
  }
}

// A type switch; an array's items (pg binds each as a value, mysql2 the array as JSON) are
// checked as values are, so that a promise or a function in a list of keys is not bound as {}.
function bindable(value: unknown, dialect: SqlDialect): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return true;
    case "number":
      return value === value;
    case "bigint":
      return !dialect.bigintIs64Bits || (value >= INT64_MIN && value <= INT64_MAX);
    case "object":
      if (value === null || ArrayBuffer.isView(value)) return true;
      if (value instanceof Date) return value.getTime() === value.getTime();
      if (!dialect.bindsObjects) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!bindable(value[i], dialect)) return false;
        }
        return true;
      }
      return boundAsJson(value, dialect);
    default:
      return false;
  }
}

// Whether pg and mysql2 bind an object (not an array, a Date or a view) as what it holds: its
// JSON. Not what JSON makes `{}` of (a Map, a Set, a promise whose await was left out), nor a
// boxed primitive (pg binds new String("x") as `"x"`, quotes and all), nor a fragment, which is
// SQL for a tag.
function boundAsJson(value: object, dialect: SqlDialect): boolean {
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return true;
  return !(value instanceof Map || value instanceof Set || value instanceof WeakMap ||
    value instanceof WeakSet || typeof (value as { then?: unknown }).then === "function" ||
    value instanceof String || value instanceof Number || value instanceof Boolean ||
    value instanceof SqlFragment || value instanceof SqlIdentifier ||
    (value instanceof ArrayBuffer && !dialect.bindsArrayBuffer));
}

// What is wrong with the value, and what to bind instead; never the value itself, which may be a
// secret, nor anything read from it but its class (from its prototype: its own fields are data).
function refuse(
  value: unknown,
  dialect: SqlDialect,
  index: number,
  datasource: string,
  text: string,
): never {
  throw new TypeError(
    `datasource "${datasource}": ${firstLine(text)}: parameter ${index + 1}${
      refusalOf(value, dialect)
    }`,
  );
}

/**
 * Why a `dialect` database cannot bind `value`, as a message goes on after naming it
 * (`" is a function, ..."`, `", at [3], is a Promise ..."` for an array's item), or `undefined`
 * when it can. It names the value's class, never the value.
 */
export function refusalOf(value: unknown, dialect: SqlDialect): string | undefined {
  if (bindable(value, dialect)) return undefined;
  // The item of an array that is refused, where the array itself is not (not on SQLite).
  let at = "";
  while (Array.isArray(value) && dialect.bindsObjects) {
    const i = value.findIndex((item) => !bindable(item, dialect));
    at += `[${i}]`;
    value = value[i];
  }
  return `${at === "" ? "" : `, at ${at},`} ${whatIsWrong(value)}`;
}

function whatIsWrong(value: unknown): string {
  if (typeof value === "function") {
    return "is a function, which no database binds (a call left out: f() for f?)";
  }
  if (typeof value === "symbol") return "is a symbol, which no database binds";
  if (typeof value === "number") {
    return "is NaN, which SQLite stores as NULL and MySQL as 0 or refuses: bind null for no value";
  }
  if (typeof value === "bigint") {
    return "is a bigint beyond SQLite's 64-bit integers: bind it as text (String(n))";
  }
  if (value instanceof Date) return "is an invalid Date (its time is NaN)";
  if (value instanceof ArrayBuffer) {
    return "is an ArrayBuffer: bind its bytes as new Uint8Array(buffer)";
  }
  if (value instanceof SqlFragment || value instanceof SqlIdentifier) {
    return "is SQL, not a value: write it into a tag (sql.query`... ${fragment}`), where it is " +
      "SQL text";
  }
  if (typeof (value as { then?: unknown }).then === "function") {
    return "is a Promise (an await left out?), which no database binds";
  }
  if (value instanceof String || value instanceof Number || value instanceof Boolean) {
    const type = value instanceof String
      ? "String"
      : value instanceof Number
      ? "Number"
      : "Boolean";
    return `is a ${type} object: bind its primitive, value.valueOf()`;
  }
  if (value instanceof Map || value instanceof WeakMap) {
    const type = value instanceof Map ? "Map" : "WeakMap";
    return `is a ${type}, which no database binds (as JSON it is {}): bind ` +
      "JSON.stringify(Object.fromEntries(map))";
  }
  if (value instanceof Set || value instanceof WeakSet) {
    return `is a ${value instanceof Set ? "Set" : "WeakSet"}, which no database binds (as JSON ` +
      "it is {}): bind an array, [...set]";
  }
  const proto: unknown = Object.getPrototypeOf(value);
  const type: unknown = proto === null || proto === Object.prototype
    ? undefined
    : (proto as { constructor?: { name?: unknown } }).constructor?.name;
  const name = Array.isArray(value)
    ? "an array"
    : typeof type !== "string" || type === ""
    ? "a plain object"
    : `${/^[AEIOU]/i.test(type) ? "an" : "a"} ${type}`;
  // Only SQLite refuses the other objects.
  return `is ${name}, which SQLite cannot bind (it binds strings, numbers, bigints, booleans, ` +
    "null, Dates and Uint8Arrays): JSON.stringify it to store it as JSON";
}
