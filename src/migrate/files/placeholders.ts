import { type JSONPath, visit } from "jsonc-parser";
import { MigrationFileError } from "../migration_error.ts";
import type { Placeholders } from "../../config/connection_settings.ts";

// The leftmost `$${` or `${`: in `$$${x}` that is the escape at index 1, so the first `$` stays.
const START = /\$(\$?)\{/g;
// Sticky, from just after `${`.
const NAME_END = /([A-Za-z_][A-Za-z0-9_.-]*)\}/y;
const HINT = "write $${ for a literal ${";

/** Where a fault is in the file: a 1-based line, or, when none is known, a JSON path. */
type Where = { readonly line: number } | { readonly path: string };

/** A fault in one string, before its place in the file is known. */
interface Fault {
  /** Where in the string. */
  readonly offset: number;
  readonly describe: (where: Where) => string;
}

/**
 * Replaces every `${name}` of a migration file's text (SQL) with its value, and every `$${` with
 * a literal `${`. Single pass: a value is inserted as it is, never expanded again. An unknown
 * name, or a `${` that does not start a well-formed `${name}`, is a `MigrationFileError` naming
 * the file, the line and the placeholder.
 *
 * @param text the file's text
 * @param placeholders the connection's placeholders
 * @param path the file, for errors
 */
export function replaceInText(text: string, placeholders: Placeholders, path: string): string {
  if (!text.includes("${")) return text;
  const result = replaced(text, placeholders);
  if (typeof result !== "string") {
    throw new MigrationFileError(path, result.describe({ line: lineAt(text, result.offset) }));
  }
  return result;
}

/**
 * Replaces placeholders, by the rules of `replaceInText`, in every string of a parsed JSON file,
 * object keys too. The input is not changed: the result is a new tree of plain objects and arrays
 * (a value without any `${` is returned as it is). Working on the parsed tree, a value needs no
 * JSON escaping. Errors name the line of the string in `sourceText`, when it can be found there.
 *
 * @param value the parsed file
 * @param placeholders the connection's placeholders
 * @param path the file, for errors
 * @param sourceText the file's text, which `value` was parsed from: only read for an error's line
 */
export function replaceInJson(
  value: unknown,
  placeholders: Placeholders,
  path: string,
  sourceText: string,
): unknown {
  if (!hasPlaceholderStart(value)) return value;
  // `written`: the string as parsed, so that its line is only taken from the text if it is there.
  const fail = (fault: Fault, at: JSONPath, written: string, key: boolean): never => {
    throw new MigrationFileError(path, fault.describe(jsonWhere(sourceText, at, written, key)));
  };
  const walk = (node: unknown, at: JSONPath): unknown => {
    if (typeof node === "string") {
      if (!node.includes("${")) return node;
      const result = replaced(node, placeholders);
      return typeof result === "string" ? result : fail(result, at, node, false);
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...at, i]));
    if (node === null || typeof node !== "object") return node;
    const out: Record<string, unknown> = {};
    // The key each output key came from, to report two that become one.
    const from = new Map<string, string>();
    for (const [k, v] of Object.entries(node)) {
      const key = k.includes("${") ? replaced(k, placeholders) : k;
      if (typeof key !== "string") return fail(key, [...at, k], k, true);
      const earlier = from.get(key);
      if (earlier !== undefined) {
        // Named by the key written with a placeholder: the one that changed.
        const changed = k === key ? earlier : k;
        const fault: Fault = {
          offset: 0,
          describe: (where) =>
            `${line(where)}the key ${JSON.stringify(changed)}${of(where)} becomes ${
              JSON.stringify(key)
            }, which the object already has`,
        };
        return fail(fault, [...at, changed], changed, true);
      }
      from.set(key, k);
      // Assigning a "__proto__" key would set the prototype; JSON.parse makes it an own property,
      // and so does this.
      Object.defineProperty(out, key, {
        value: walk(v, [...at, k]),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return out;
  };
  return walk(value, []);
}

/** `value` with its placeholders replaced, or the first fault in it. */
function replaced(text: string, placeholders: Placeholders): string | Fault {
  let out = "";
  let done = 0;
  START.lastIndex = 0;
  for (let m = START.exec(text); m !== null; m = START.exec(text)) {
    const at = m.index;
    if (m[1] === "$") {
      // `$${`: the text before it and a literal `${`, which is not scanned again.
      out += text.slice(done, at) + "${";
      done = START.lastIndex;
      continue;
    }
    NAME_END.lastIndex = at + 2;
    const name = NAME_END.exec(text)?.[1];
    if (name === undefined) {
      return {
        offset: at,
        describe: (where) =>
          `${line(where)}malformed placeholder ${JSON.stringify(excerpt(text, at))}${
            of(where)
          } (a placeholder is \${name}, the name of letters, digits, _ . -); ${HINT}`,
      };
    }
    const value = placeholders.get(name);
    if (value === undefined) return unknown(at, name, placeholders);
    out += text.slice(done, at) + value;
    done = NAME_END.lastIndex;
    START.lastIndex = done;
  }
  return out + text.slice(done);
}

function unknown(at: number, name: string, placeholders: Placeholders): Fault {
  const names = [...placeholders.keys()];
  // Names only: a value may be a secret.
  const known = names.length === 0
    ? `: migrations.placeholders of the connection has none (add it there, or ${HINT})`
    : ` (configured: ${names.join(", ")})`;
  return {
    offset: at,
    describe: (where) => `${line(where)}unknown placeholder \${${name}}${of(where)}${known}`,
  };
}

/** `line 3: `, or nothing when the line is not known. */
function line(where: Where): string {
  return "line" in where ? `line ${where.line}: ` : "";
}

/** ` at settings[0]`, when the line is not known. */
function of(where: Where): string {
  return "path" in where ? ` at ${where.path}` : "";
}

/** What follows a malformed `${`, up to its `}`, the line's end, or 30 characters. */
function excerpt(text: string, at: number): string {
  const rest = text.slice(at, at + 30);
  const close = rest.indexOf("}");
  const cut = close === -1 ? rest : rest.slice(0, close + 1);
  return cut.split(/[\r\n]/, 1)[0];
}

/** The 1-based line of `offset`; `\r\n`, `\n` and a lone `\r` each end a line, as in JSON. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) line++;
  }
  return line;
}

// A walk that builds nothing, so that a file without placeholders costs no copy.
function hasPlaceholderStart(value: unknown): boolean {
  if (typeof value === "string") return value.includes("${");
  if (Array.isArray(value)) return value.some(hasPlaceholderStart);
  if (value === null || typeof value !== "object") return false;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes("${") || hasPlaceholderStart(v)) return true;
  }
  return false;
}

/**
 * The line of the string `written` (a key when `key`) at `path` in `sourceText`: a JSON string
 * never spans lines, so that is the line of any fault in it, \u escapes or not. When the text does
 * not hold that string there, no line is given (a guess would mislead) but the path is.
 */
function jsonWhere(sourceText: string, path: JSONPath, written: string, key: boolean): Where {
  const wanted = JSON.stringify(path);
  let found: number | undefined;
  visit(sourceText.replace(/^\uFEFF/, ""), {
    onObjectProperty(property, _offset, _length, startLine, _character, pathSupplier) {
      if (key && property === written && JSON.stringify([...pathSupplier(), property]) === wanted) {
        // A later duplicate key wins, in JSON.parse as here.
        found = startLine + 1;
      }
    },
    onLiteralValue(value, _offset, _length, startLine, _character, pathSupplier) {
      if (!key && value === written && JSON.stringify(pathSupplier()) === wanted) {
        found = startLine + 1;
      }
    },
  }, { disallowComments: true });
  return found === undefined ? { path: pathText(path) } : { line: found };
}

/** `settings.index[0]`, for a message. */
function pathText(path: JSONPath): string {
  return path.map((p, i) =>
    typeof p === "number"
      ? `[${p}]`
      : /^[A-Za-z_$][\w$]*$/.test(p)
      ? `${i === 0 ? "" : "."}${p}`
      : `[${JSON.stringify(p)}]`
  ).join("") || "(root)";
}
