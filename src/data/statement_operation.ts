// The operation a statement names, for its span and metrics: OpenTelemetry's database
// conventions ask a name parsed from the text to be its first keyword, after any comments.
const FIRST_KEYWORD = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;

/**
 * The first keyword of `text`, in capitals (`SELECT`, `INSERT`, `WITH`, `BEGIN`), past blanks and
 * `--` and `/* *\/` comments; `undefined` when it starts with anything else.
 */
export function operationName(text: string): string | undefined {
  return FIRST_KEYWORD.exec(text)?.[1].toUpperCase();
}
