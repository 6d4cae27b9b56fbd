// The values a statement's parameters may hold, checked before a driver sees them. A driver given
// what it cannot bind does not always fail: node:sqlite reads an object given first as named
// parameters and binds the values after it one placeholder to the left (Bun's binds nothing),
// SQLite stores NaN as NULL and MariaDB as 0 in an integer column, pg stores a function's source
// and a symbol's name, mysql2 a symbol's name. What no database binds is refused on every one, so
// that an app behaves alike on each; what one database's driver binds its own way (pg's and
// mysql2's JSON for objects and arrays) stays bound there. The check runs per statement: a type
// switch per value, nothing allocated unless a value is refused.
import type { DatabaseKind } from "../migrate/sql/datasource.ts";
import { firstLine } from "./data_error.ts";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Throws a `TypeError` naming the datasource, the statement and the position (1 for `$1` or the
 * first `?`) of the first value of `params` that a `kind` database cannot bind: a function, a
 * symbol, `NaN` or an invalid `Date` on every database; on SQLite, any object but a `Date` and a
 * byte array (plain objects, arrays, maps), and a bigint beyond 64 bits; an `ArrayBuffer` on SQLite
 * and PostgreSQL (pg stores it as `{}`).
 */
export function checkBindable(
  kind: DatabaseKind,
  params: readonly unknown[],
  datasource: string,
  text: string,
): void {
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    switch (typeof value) {
      case "string":
      case "boolean":
      case "undefined":
        break;
      case "number":
        if (value !== value) refuse(value, i, datasource, text);
        break;
      case "bigint":
        if (kind === "sqlite" && (value < INT64_MIN || value > INT64_MAX)) {
          refuse(value, i, datasource, text);
        }
        break;
      case "object":
        if (value === null || ArrayBuffer.isView(value)) break;
        if (value instanceof Date) {
          if (value.getTime() !== value.getTime()) refuse(value, i, datasource, text);
        } else if (kind === "sqlite" || (value instanceof ArrayBuffer && kind === "postgres")) {
          refuse(value, i, datasource, text);
        }
        break;
      default:
        refuse(value, i, datasource, text);
    }
  }
}

// What is wrong with the value, and what to bind instead; never the value itself, which may be a
// secret.
function refuse(
  value: unknown,
  index: number,
  datasource: string,
  text: string,
): never {
  let what: string;
  if (typeof value === "function") {
    what = "is a function, which no database binds (a call left out: f() for f?)";
  } else if (typeof value === "symbol") {
    what = "is a symbol, which no database binds";
  } else if (typeof value === "number") {
    what = "is NaN, which SQLite stores as NULL and MySQL as 0 or refuses: bind null for no value";
  } else if (typeof value === "bigint") {
    what = "is a bigint beyond SQLite's 64-bit integers: bind it as text (String(n))";
  } else if (value instanceof Date) {
    what = "is an invalid Date (its time is NaN)";
  } else if (value instanceof ArrayBuffer) {
    what = "is an ArrayBuffer: bind its bytes as new Uint8Array(buffer)";
  } else {
    const proto = Object.getPrototypeOf(value);
    const type = (value as { constructor?: { name?: string } }).constructor?.name || "object";
    const name = Array.isArray(value)
      ? "an array"
      : proto === Object.prototype || proto === null
      ? "a plain object"
      : `${/^[AEIOU]/i.test(type) ? "an" : "a"} ${type}`;
    what = `is ${name}, which SQLite cannot bind (it binds strings, numbers, bigints, ` +
      "booleans, null, Dates and Uint8Arrays): JSON.stringify it to store it as JSON";
  }
  throw new TypeError(
    `datasource "${datasource}": ${firstLine(text)}: parameter ${index + 1} ${what}`,
  );
}
