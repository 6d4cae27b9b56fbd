// A tagged template as a statement and its parameters. Every `${value}` is bound, never spliced
// into the text: only an identifier and a fragment (both made by the helpers below, so that a
// string can never become SQL by accident) add text, and a fragment's own values stay bound.
import type { SqlDialect } from "../sql/sql_dialect.ts";

/** A piece of SQL written as a tagged template; its values stay bound parameters. */
export class SqlFragment {
  /** The literal parts of the template, one more than `values`. */
  readonly strings: readonly string[];
  /** The values between them, in order. */
  readonly values: readonly unknown[];

  /** Made by {@linkcode fragment} and {@linkcode join}; `strings` has one more item than `values`. */
  constructor(strings: readonly string[], values: readonly unknown[]) {
    if (strings.length !== values.length + 1) {
      throw new TypeError(
        `a SQL fragment needs one more string than values, got ${strings.length} and ${values.length}`,
      );
    }
    this.strings = strings;
    this.values = values;
  }
}

/** A table, column or other name, quoted for the dialect where the statement is rendered. */
export class SqlIdentifier {
  /** The name as written, before quoting; several parts for `schema.table`. */
  readonly parts: readonly string[];

  /** Made by {@linkcode identifier}. */
  constructor(parts: readonly string[]) {
    for (const part of parts) {
      if (typeof part !== "string" || part === "" || part.includes("\0")) {
        throw new TypeError(
          `a SQL identifier must be a non-empty string without NUL, got ${JSON.stringify(part)}`,
        );
      }
    }
    if (parts.length === 0) throw new TypeError("a SQL identifier needs a name");
    this.parts = parts;
  }
}

/** A statement ready for a driver. */
export interface RenderedSql {
  /** The text, with the dialect's placeholders where the values were. */
  readonly text: string;
  /** The values, in the order of their placeholders. */
  readonly params: readonly unknown[];
}

/**
 * A name for the SQL text, quoted (`"order"`, `` `order` ``), never a parameter. Several names
 * make a qualified one: `identifier("app", "users")` is `"app"."users"`. Refuses an empty name
 * and one with NUL, which no database takes.
 */
export function identifier(name: string, ...more: string[]): SqlIdentifier {
  return new SqlIdentifier([name, ...more]);
}

/** A piece of SQL to put into a statement: `` fragment`AND id = ${id}` `` (`id` stays bound). */
export function fragment(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  if (!isTemplate(strings)) {
    throw new TypeError(
      'fragment() is a tag: write fragment`AND id = ${value}`, not fragment("...") or ' +
        "fragment(`...`), whose values would be text of the statement",
    );
  }
  const unread = unreadEscape("fragment()", strings);
  if (unread !== undefined) throw unread;
  return new SqlFragment([...strings], values);
}

/**
 * The error for a template one of whose pieces has no text, or undefined. A tagged template's
 * piece with an escape JavaScript cannot read (`\x` without two hex digits, `\u`, an octal `\1`,
 * common in a regular expression or a Windows path) is undefined, not text: the statement would
 * run without it (`SELECT ?undefined`).
 */
export function unreadEscape(
  where: string,
  strings: TemplateStringsArray,
): TypeError | undefined {
  for (let i = 0; i < strings.length; i++) {
    if (typeof strings[i] === "string") continue;
    const at = strings.length === 1 ? "" : i === 0 ? " before value 1" : ` after value ${i}`;
    return new TypeError(
      `${where}: the template's text${at} has an escape JavaScript cannot read (\\x, \\u or ` +
        "\\1): write its backslash twice (\\\\1) for the database to read one",
    );
  }
  return undefined;
}

/**
 * Whether a tag was called as one: with a template's strings (an array with its `raw` strings),
 * not with a string. Called as `query("SELECT ...")` or `` query(`... ${id}`) ``, a tag would take
 * the string's first character for the statement and its values for text.
 */
export function isTemplate(strings: unknown): strings is TemplateStringsArray {
  return Array.isArray(strings) && Array.isArray((strings as { raw?: unknown }).raw);
}

const COMMA = new SqlFragment([", "], []);

/**
 * Fragments and identifiers one after the other, `separator` (a fragment, a comma by default)
 * between them: `` join(conditions, fragment` AND `) ``. No item is none of the SQL: an empty text.
 */
export function join(
  items: readonly (SqlFragment | SqlIdentifier)[],
  separator: SqlFragment = COMMA,
): SqlFragment {
  if (!(separator instanceof SqlFragment)) {
    throw new TypeError("a SQL join's separator must be a fragment: fragment` AND `");
  }
  const strings: string[] = [""];
  const values: unknown[] = [];
  const append = (part: SqlFragment | SqlIdentifier) => {
    // An item goes in as a value of the new fragment, so it is rendered (and checked) as one.
    values.push(part);
    strings.push("");
  };
  items.forEach((item, i) => {
    if (!(item instanceof SqlFragment || item instanceof SqlIdentifier)) {
      throw new TypeError(
        `a SQL join takes fragments and identifiers, item ${i} is ${typeof item}: wrap a value ` +
          "as fragment`${value}`",
      );
    }
    if (i > 0) append(separator);
    append(item);
  });
  return new SqlFragment(strings, values);
}

/**
 * The text and parameters of a tagged template for `dialect`: each value a placeholder
 * (`$1..$n` on PostgreSQL, `?` elsewhere) and a parameter, a fragment's values included; an
 * identifier quoted into the text.
 */
export function renderSql(
  dialect: SqlDialect,
  strings: readonly string[],
  values: readonly unknown[],
): RenderedSql {
  // The common statement: values only, none a fragment or an identifier.
  if (plainValues(values)) return { text: plainText(dialect, strings), params: values };
  const params: unknown[] = [];
  let text = "";
  // `$1` then a digit would read as `$10`, and SQLite reads `?1` as parameter 1: a space
  // keeps them apart.
  let numbered = false;
  const add = (literal: string) => {
    if (numbered && /^[0-9]/.test(literal)) text += " ";
    if (literal !== "") numbered = false;
    text += literal;
  };
  const walk = (part: SqlFragment) => {
    add(part.strings[0]);
    for (let i = 0; i < part.values.length; i++) {
      const value = part.values[i];
      if (value instanceof SqlFragment) walk(value);
      else if (value instanceof SqlIdentifier) {
        add(value.parts.map((name) => dialect.quote(name)).join("."));
      } else {
        params.push(value);
        add(dialect.placeholder(params.length));
        numbered = true;
      }
      add(part.strings[i + 1]);
    }
  };
  walk(new SqlFragment(strings, values));
  return { text, params };
}

function plainValues(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value instanceof SqlFragment || value instanceof SqlIdentifier) return false;
  }
  return true;
}

// A tagged template's strings are one frozen array per call site: its text is made once per
// dialect, and the same string each call is hashed once where it keys the connection's prepared
// statements. An array that may still change (not frozen) is rendered each time.
const TEXTS = new Map<SqlDialect, WeakMap<readonly string[], string>>();

function plainText(dialect: SqlDialect, strings: readonly string[]): string {
  let texts = TEXTS.get(dialect);
  if (texts === undefined) TEXTS.set(dialect, texts = new WeakMap());
  let text = texts.get(strings);
  if (text !== undefined) return text;
  text = strings[0];
  for (let i = 1; i < strings.length; i++) {
    const next = strings[i];
    text += dialect.placeholder(i) + (/^[0-9]/.test(next) ? " " : "") + next;
  }
  if (Object.isFrozen(strings)) texts.set(strings, text);
  return text;
}
