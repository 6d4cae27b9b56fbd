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
 * Parses UTF-8 JSON bytes (a BOM is allowed). Errors carry the line and column where the engine
 * reports a position (V8: Deno and Node).
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
    // JavaScriptCore (Bun) gives no position; an invented one would mislead.
    if (!pos) throw new JsonSyntaxError(message.replace(/^JSON Parse error: /, ""));
    const offset = Number(pos[1]);
    const before = text.slice(0, offset);
    const line = before.split("\n").length;
    return fail(message, line, offset - before.lastIndexOf("\n"));
  }
}

function fail(message: string, line: number, column: number): never {
  // V8 appends the position itself; keep only the reason.
  const reason = message.replace(/\s*(in JSON )?at position \d+.*$/s, "").replace(
    /^JSON\.parse: /,
    "",
  );
  throw new JsonSyntaxError(reason, line, column);
}
