import { parse, type ParseError } from "jsonc-parser";
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
 * Parses UTF-8 JSON bytes (a BOM is allowed). Errors carry the line and column of the fault: the
 * engine's own where it reports one (V8: Deno and Node), else where a second, positional parser
 * stops (JavaScriptCore, in Bun, reports none).
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  const text = decodeFileText(bytes);
  if (text === undefined) throw new JsonSyntaxError("the file is not valid UTF-8");
  try {
    return JSON.parse(text);
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
