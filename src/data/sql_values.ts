// Rows as one `VALUES` list, `(…), (…)`, every value a bound parameter: the bulk insert of
// postgres.js' `sql(rows, ...columns)`, as a fragment a tag renders. One list is one statement:
// rows past what the database binds in one statement are refused, never split behind the
// caller's back (a split insert is several statements, which a failure leaves half done).
import type { SqlDialect } from "../sql/sql_dialect.ts";
import { MYSQL } from "../sql/mysql_dialect.ts";
import { POSTGRES } from "../sql/postgres_dialect.ts";
import { refusalOf } from "./bindable_values.ts";
import { SqlFragment } from "./sql_template.ts";

/**
 * The error for a statement of more parameters (`what` says how many) than a `dialect` database
 * binds, or any database where none is known: said before the driver sends it, since pg would
 * send the count cut to 16 bits and the server would answer about a statement the caller did not
 * write.
 */
export function tooManyParameters(
  dialect: SqlDialect | undefined,
  where: string,
  what: string,
): RangeError {
  return new RangeError(
    `${where}: ${what}, more than ${dialect?.name ?? "any database"} binds in one statement (${
      (dialect ?? POSTGRES).maxParameters
    }): split the rows into several statements (in one transaction, to land whole)`,
  );
}

/**
 * The fragment `(…), (…)` of `rows`, each row's `columns` in that order (at least one named). `where` starts each message; `dialect` the database
 * whose binding rules and parameter limit apply, or none known (every value some database binds,
 * the largest limit). A `TypeError` names the row (`rows[2]`) and the column.
 */
export function valuesOf(
  rows: readonly object[],
  columns: readonly (string | readonly string[])[],
  where: string,
  dialect?: SqlDialect,
): SqlFragment {
  if (!Array.isArray(rows)) {
    throw new TypeError(`${where} takes an array of rows (objects), then the columns to take`);
  }
  if (rows.length === 0) {
    throw new TypeError(
      `${where} needs at least one row: VALUES with none is not SQL (skip the statement)`,
    );
  }
  for (let r = 0; r < rows.length; r++) {
    const row: unknown = rows[r];
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      throw new TypeError(
        `${where}: rows[${r}] is ${kindOf(row)}, not an object of columns ({ id: 1, name: "a" })`,
      );
    }
  }
  const names = columns.flat();
  // Not the first row's keys, as postgres.js takes them where it writes the column list too: here
  // the statement names its columns, and `{ name, id }` rows into `(id, name)` would swap them.
  if (names.length === 0) {
    throw new TypeError(
      `${where}: name the columns to take, in the order of the statement's column list: ` +
        `INSERT INTO t (id, name) VALUES \${values(rows, "id", "name")}`,
    );
  }
  for (const name of names) {
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`${where}: column names are non-empty strings, got ${kindOf(name)}`);
    }
  }
  const count = rows.length * names.length;
  if (count > (dialect ?? POSTGRES).maxParameters) {
    const shape = `${rows.length} rows of ${names.length} column${names.length === 1 ? "" : "s"}`;
    throw tooManyParameters(dialect, where, `${shape} are ${count} parameters`);
  }
  const values = new Array<unknown>(count);
  const strings = new Array<string>(count + 1);
  strings[0] = "(";
  let at = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Record<string, unknown>;
    for (let c = 0; c < names.length; c++) {
      const name = names[c];
      const value = row[name];
      // A key of its own set to undefined is NULL; a getter of its class is a column too. Not
      // `__proto__` inherited: Node's and Bun's Object.prototype answer it with itself.
      if (
        (value === undefined || name === "__proto__") && !Object.hasOwn(row, name)
      ) {
        throw new TypeError(
          `${where}: rows[${r}] has no column "${name}" (undefined is NULL: give it as such)`,
        );
      }
      const wrong = dialect === undefined ? refusedEverywhere(value) : refusalOf(value, dialect);
      if (wrong !== undefined) {
        throw new TypeError(`${where}: rows[${r}], column "${name}",${wrong}`);
      }
      values[at] = value;
      at++;
      strings[at] = c === names.length - 1 ? (r === rows.length - 1 ? ")" : "), (") : ", ";
    }
  }
  return new SqlFragment(strings, values);
}

// What no database binds: PostgreSQL and MariaDB take every value SQLite takes.
function refusedEverywhere(value: unknown): string | undefined {
  const postgres = refusalOf(value, POSTGRES);
  return postgres !== undefined && refusalOf(value, MYSQL) !== undefined ? postgres : undefined;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}
