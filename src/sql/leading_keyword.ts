// What a statement's first word tells of it, for the pools that must know before sending it
// (SQLite's write lock, PostgreSQL's cursor).

/** The first word of a statement, comments and blanks skipped. */
export function leadingKeyword(text: string): string {
  const m = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/.exec(text);
  return m?.[1] ?? "";
}

/**
 * Whether `text` is a query PostgreSQL's `DECLARE ... CURSOR` takes: a SELECT, VALUES or TABLE
 * (bracketed or not), or a WITH that holds no write. Unsure is not one: such a statement is run
 * whole, which reads its rows right where a cursor would refuse it.
 */
export function isCursorQuery(text: string): boolean {
  const keyword = leadingKeyword(text).toUpperCase();
  if (keyword === "SELECT" || keyword === "VALUES" || keyword === "TABLE") return true;
  // A data-modifying WITH: DECLARE refuses it. A row lock (`FOR UPDATE`) is no write.
  if (keyword === "WITH") return !WRITES.test(text);
  return keyword === "" && /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*\(/.test(text);
}

const WRITES = /\b(?:INSERT|DELETE|MERGE)\b|(?<!\bFOR\s+(?:NO\s+KEY\s+)?)\bUPDATE\b/i;
