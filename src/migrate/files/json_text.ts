import { createScanner, parse, type ParseError, type SyntaxKind, visit } from "jsonc-parser";
import { decodeFileText } from "./file_text.ts";

/** A JSON document that could not be parsed, with the 1-based line and column of the fault. */
export class JsonSyntaxError extends SyntaxError {
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(message: string, line?: number, column?: number) {
    super(line === undefined ? message : `line ${line}, column ${column}: ${message}`);
    this.name = "JsonSyntaxError";
    this.line = line;
    this.column = column;
  }
}

/**
 * Parses UTF-8 JSON bytes (a BOM is allowed), and returns the value with the text it was read from.
 * Errors carry the line and column of the fault: the engine's own where it reports one (V8: Deno
 * and Node), else where a second, positional parser stops (JavaScriptCore, in Bun, reports none).
 */
export function parseJsonBytes(bytes: Uint8Array): { value: unknown; text: string } {
  const text = decodeFileText(bytes);
  if (text === undefined) throw new JsonSyntaxError("the file is not valid UTF-8");
  try {
    return { value: JSON.parse(text), text };
  } catch (error) {
    const message = (error as Error).message;
    const lc = /line (\d+) column (\d+)/.exec(message);
    if (lc) return fail(message, Number(lc[1]), Number(lc[2]));
    const pos = /position (\d+)/.exec(message);
    const offset = pos ? Number(pos[1]) : faultOffset(text);
    // Without a position from either parser, an invented one would mislead.
    if (offset === undefined) return fail(message);
    const before = text.slice(0, offset);
    const line = before.split("\n").length;
    return fail(message, line, offset - before.lastIndexOf("\n"));
  }
}

/** Where jsonc-parser, held to strict JSON, finds the first fault. */
function faultOffset(text: string): number | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false });
  return errors[0]?.offset;
}

function fail(message: string, line?: number, column?: number): never {
  // Engines append the position themselves (V8) or prefix their name (JavaScriptCore, Firefox):
  // keep only the reason.
  const reason = message.replace(/\s*(in JSON )?at position \d+.*$/s, "")
    .replace(/^(JSON\.parse|JSON Parse error): /, "");
  throw new JsonSyntaxError(reason, line, column);
}

// jsonc-parser's token kinds are a const enum, which isolated modules cannot read: its values.
const NUMERIC_LITERAL = 11 satisfies SyntaxKind.NumericLiteral;
const EOF = 17 satisfies SyntaxKind.EOF;

/** OpenSearch's parser refuses documents nested deeper than this (Jackson's `maxNestingDepth`). */
export const MAX_SEARCH_DOCUMENT_DEPTH = 1000;

/**
 * What makes a parsed document differ from its text, or unreadable by OpenSearch, as a message;
 * `undefined` when nothing does. `JSON.parse` reads numbers as 64-bit floats, so a number that
 * does not survive that (a 20-digit id, `1e400`) would be sent, and hashed, as another value; a
 * lone surrogate has no UTF-8 form; deep nesting is refused by the cluster; of a key written
 * twice in one object `JSON.parse` keeps the last, where a reader sees the first.
 */
export function jsonValueProblem(text: string, value: unknown): string | undefined {
  // The depth first: the key check reads the text recursively, and must not meet 200,000 levels.
  return numberProblem(text) ?? treeProblem(value) ?? keyProblem(text);
}

/** The first key written twice in one object (compared decoded, as `JSON.parse` does). */
function keyProblem(text: string): string | undefined {
  const open: Set<string>[] = [];
  let problem: string | undefined;
  visit(text, {
    onObjectBegin: () => void open.push(new Set()),
    onObjectEnd: () => void open.pop(),
    onObjectProperty: (key, _offset, _length, line) => {
      const keys = open[open.length - 1];
      if (problem === undefined && keys.has(key)) {
        problem = `line ${line + 1}: the key ${JSON.stringify(key)} appears twice in one ` +
          "object (JSON.parse would keep the last one)";
      }
      keys.add(key);
    },
  }, { disallowComments: true });
  return problem;
}

function numberProblem(text: string): string | undefined {
  // A double keeps any 15 significant digits: only 16 or more (a dot may sit among them), or a
  // three-digit exponent, can lose anything, so most files skip the scan.
  if (!/\d(?:\.?\d){15}|[eE][+-]?\d{3}/.test(text)) return undefined;
  const scanner = createScanner(text, true);
  for (let token = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token !== NUMERIC_LITERAL) continue;
    const literal = scanner.getTokenValue();
    const read = Number(literal);
    const line = `line ${scanner.getTokenStartLine() + 1}: `;
    if (!Number.isFinite(read)) {
      return `${line}the number ${literal} is out of range for a JSON number (a 64-bit float)`;
    }
    if (decimal(literal) !== decimal(String(read))) {
      return `${line}the number ${literal} cannot be sent exactly: JSON numbers are read as ` +
        `64-bit floats, and it becomes ${read}; write it as a string`;
    }
  }
  return undefined;
}

/** A number's exact decimal value as `digits e exponent`, without leading or trailing zeros. */
function decimal(literal: string): string {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (m === null) return literal;
  const fraction = m[2] ?? "";
  let digits = (m[1] + fraction).replace(/^0+/, "");
  let exponent = Number(m[3] ?? 0) - fraction.length;
  if (digits === "") return "0"; // -0 is sent as 0
  while (digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    exponent++;
  }
  return `${literal.startsWith("-") ? "-" : ""}${digits}e${exponent}`;
}

// With the u flag a surrogate pair is one code point: only a lone surrogate is of category Cs.
// (String#isWellFormed says the same, but the npm build's library target predates it.)
const LONE_SURROGATE = /\p{Cs}/u;

// Iterative: a hostile file's depth must not overflow the stack here.
function treeProblem(value: unknown): string | undefined {
  const stack: { value: unknown; depth: number; at: string }[] = [{ value, depth: 0, at: "" }];
  while (stack.length > 0) {
    const { value, depth, at } = stack.pop()!;
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) {
        return `${at || "the document"} holds a lone surrogate (no UTF-8 form)`;
      }
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_SEARCH_DOCUMENT_DEPTH) {
      return `nests deeper than ${MAX_SEARCH_DOCUMENT_DEPTH} levels at ${at}, which OpenSearch refuses`;
    }
    for (const [key, child] of Object.entries(value)) {
      const where = Array.isArray(value) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
      if (LONE_SURROGATE.test(key)) {
        return `the key at ${where} holds a lone surrogate (no UTF-8 form)`;
      }
      stack.push({ value: child, depth: depth + 1, at: where });
    }
  }
  return undefined;
}
