// How this runtime opens a SQLite file, for the data pool and the migration runner alike:
// `bun:sqlite` on Bun, the runtime's `node:sqlite` elsewhere (Deno, Node 22.13+). One handle is
// used by one caller at a time; its statements are prepared once per text.
import type { StatementResult } from "./data_pool.ts";
import { messageOf } from "./data_error.ts";
import { leadingKeyword } from "./leading_keyword.ts";

/**
 * SQLite's message of `error`. Deno appends the rest of the statement to a syntax error
 * ("... in <sql> at offset 3"): cut, as the statement is named apart (or, for a script, its line).
 */
export function sqliteMessage(error: unknown): string {
  return messageOf(error).replace(/ in [\s\S]* at offset \d+$/, "");
}

/** One SQLite handle, whichever module opened it. */
export interface SqliteHandle {
  run(text: string, params: readonly unknown[]): StatementResult;
  /** The statement's rows one at a time, on a statement of its own (not the cached one). */
  iterate(text: string, params: readonly unknown[]): SqliteRows;
  /** Runs every statement of `text` in order, without parameters (a migration's script). */
  exec(text: string): void;
  close(): void;
}

/** A statement being stepped through. */
export interface SqliteRows {
  /** The next row; `undefined` past the last. */
  next(): Record<string, unknown> | undefined;
  /** Resets the statement, read to its end or not. */
  close(): void;
}

const READS = /^(SELECT|VALUES|PRAGMA|EXPLAIN|WITH)$/i;
const INSERTS = /^(INSERT|REPLACE)$/i;

/** What a statement's text says of its result, worked out once per prepared statement. */
interface Shape {
  /** It gives rows (it has result columns). */
  readonly rows: boolean;
  /** A read: its rows are not rows affected. */
  readonly read: boolean;
  /** An INSERT or REPLACE: its last row's key is worth giving. */
  readonly insert: boolean;
}

function shapeOf(text: string, columns: number): Shape {
  const keyword = leadingKeyword(text);
  return { rows: columns > 0, read: READS.test(keyword), insert: INSERTS.test(keyword) };
}

function rowsResult(shape: Shape, rows: Record<string, unknown>[]): StatementResult {
  return { rows, rowsAffected: shape.read ? 0 : rows.length };
}

function runResult(
  shape: Shape,
  run: { changes: number | bigint; lastInsertRowid: number | bigint },
): StatementResult {
  const changes = Number(run.changes);
  return shape.insert && changes > 0
    ? { rows: [], rowsAffected: changes, lastInsertId: run.lastInsertRowid }
    : { rows: [], rowsAffected: changes };
}

// Neither module binds a Date, and node:sqlite no boolean: stored as SQLite stores them.
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value;
}

interface Statement {
  columns(): unknown[];
  all(...params: unknown[]): Record<string, unknown>[];
  iterate(...params: unknown[]): Iterator<Record<string, unknown>>;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
}

interface BunStatement {
  readonly columnNames: string[];
  all(...params: unknown[]): Record<string, unknown>[];
  iterate(...params: unknown[]): Iterator<Record<string, unknown>>;
  finalize(): void;
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
}

const CACHED = 200;

/** How this runtime opens a SQLite file: `bun:sqlite` on Bun, `node:sqlite` elsewhere. */
export function sqliteOpener(): Promise<(path: string) => SqliteHandle> {
  return "Bun" in globalThis ? bunOpener() : nodeOpener();
}

async function bunOpener(): Promise<(path: string) => SqliteHandle> {
  // A variable specifier: Deno and Node cannot resolve bun:sqlite, and never load it.
  const specifier = "bun:sqlite";
  const { Database } = await import(specifier) as {
    Database: new (path: string) => {
      query(text: string): BunStatement;
      prepare(text: string): BunStatement;
      exec(text: string): void;
      close(): void;
    };
  };
  return (path) => {
    const db = new Database(path);
    const shapes = new Map<BunStatement, Shape>();
    return {
      run: (text, params) => {
        // query() caches the statement per text, so the shape is cached per statement.
        const statement = db.query(text);
        let shape = shapes.get(statement);
        if (shape === undefined) {
          shape = shapeOf(text, statement.columnNames.length);
          if (shapes.size >= CACHED) dropOldest(shapes);
          shapes.set(statement, shape);
        }
        const values = params.map(bindable);
        return shape.rows
          ? rowsResult(shape, statement.all(...values))
          : runResult(shape, statement.run(...values));
      },
      iterate: (text, params) => bunRows(db.prepare(text), params.map(bindable)),
      exec: (text) => db.exec(text),
      close: () => db.close(),
    };
  };
}

async function nodeOpener(): Promise<(path: string) => SqliteHandle> {
  let sqlite: typeof import("node:sqlite");
  try {
    sqlite = await import("node:sqlite");
  } catch (error) {
    throw new Error(
      "SQLite needs a runtime with node:sqlite: Deno, Bun, or Node 22.13 or later",
      { cause: error },
    );
  }
  const deno = "Deno" in globalThis;
  return (path) => nodeHandle(new sqlite.DatabaseSync(path), deno);
}

function nodeHandle(db: import("node:sqlite").DatabaseSync, deno: boolean): SqliteHandle {
  // Prepared once per text, as bun:sqlite's query() does: parsing costs more than running.
  const statements = new Map<string, { statement: Statement; shape: Shape }>();
  const prepare = (text: string): { statement: Statement; shape: Shape } => {
    let prepared = statements.get(text);
    if (prepared === undefined) {
      const statement = db.prepare(text) as unknown as Statement;
      prepared = { statement, shape: shapeOf(text, statement.columns().length) };
      if (statements.size >= CACHED) dropOldest(statements);
      statements.set(text, prepared);
    }
    return prepared;
  };
  return {
    run: (text, params) => {
      let values = params.map(bindable);
      if (deno && values.some((v) => typeof v === "string" && v.includes("\0"))) {
        [text, values] = withNulText(text, values);
      }
      const { statement, shape } = prepare(text);
      // node:sqlite's rows have no prototype: plain objects, as the other databases give,
      // so that they compare (deepStrictEqual) and print as callers expect.
      return shape.rows
        ? rowsResult(shape, statement.all(...values).map((row) => ({ ...row })))
        : runResult(shape, statement.run(...values));
    },
    iterate: (text, params) => {
      let values = params.map(bindable);
      if (deno && values.some((v) => typeof v === "string" && v.includes("\0"))) {
        [text, values] = withNulText(text, values);
      }
      const statement = db.prepare(text) as unknown as Statement;
      return deno ? wholeRows(statement, values) : nodeRows(statement, values);
    },
    exec: (text) => db.exec(text),
    close: () => db.close(),
  };
}

// A Map keeps the order its keys were set in: the first is the one cached longest.
function dropOldest<K>(cache: Map<K, unknown>): void {
  const oldest = cache.keys().next();
  if (oldest.done !== true) cache.delete(oldest.value);
}

/** bun:sqlite's iterator over `statement` (prepared for it alone), finalized as it closes. */
function bunRows(statement: BunStatement, values: unknown[]): SqliteRows {
  const rows = statement.iterate(...values);
  return {
    next: () => {
      const step = rows.next();
      return step.done ? undefined : step.value;
    },
    close: () => {
      rows.return?.();
      statement.finalize();
    },
  };
}

/** node:sqlite's iterator over `statement` (prepared for it alone), its rows plain objects. */
function nodeRows(statement: Statement, values: unknown[]): SqliteRows {
  const rows = statement.iterate(...values);
  return {
    next: () => {
      const step = rows.next();
      return step.done ? undefined : { ...step.value };
    },
    // Names the statement so that it stays referenced while its iterator runs: Node
    // finalizes a statement collected mid-iteration.
    close: () => void rows.return?.(statement),
  };
}

/**
 * Deno's: its iterator (2.9) ends without a word at a row that fails (a function's error, an
 * overflow), the rows cut short as if all were read. Read whole instead, as all() reports the
 * failure, and given a batch at a time all the same: copied at once, as run's rows are (the
 * driver's own, heavier and without a prototype, let go before the first is read), and each let
 * go as it is read.
 */
function wholeRows(statement: Statement, values: unknown[]): SqliteRows {
  const all: (Record<string, unknown> | undefined)[] = statement.all(...values)
    .map((row) => ({ ...row }));
  let at = 0;
  return {
    next: () => {
      if (at >= all.length) return undefined;
      const row = all[at];
      all[at++] = undefined;
      return row;
    },
    close: () => void all.splice(0),
  };
}

/**
 * Deno's node:sqlite binds a string up to its first NUL (and reads one so, which no binding can
 * mend). Such a string is bound as its UTF-8
 * bytes instead, its placeholder made `CAST(? AS TEXT)`, which SQLite reads to the end. The
 * placeholders are found as SQLite lexes: not inside quotes, brackets or comments.
 */
function withNulText(text: string, values: unknown[]): [string, unknown[]] {
  const encoder = new TextEncoder();
  let out = "";
  let index = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const close = c === "'" ? "'" : c === '"' ? '"' : c === "`" ? "`" : c === "[" ? "]" : undefined;
    let end = i + 1;
    if (close !== undefined) {
      end = text.indexOf(close, i + 1);
      end = end < 0 ? text.length : end + 1;
    } else if (text.startsWith("--", i)) {
      end = text.indexOf("\n", i);
      end = end < 0 ? text.length : end;
    } else if (text.startsWith("/*", i)) {
      end = text.indexOf("*/", i + 2);
      end = end < 0 ? text.length : end + 2;
    } else if (c === "?") {
      const value = values[index];
      if (typeof value === "string" && value.includes("\0")) {
        values[index] = encoder.encode(value);
        out += "CAST(? AS TEXT)";
      } else out += "?";
      index++;
      i++;
      continue;
    }
    out += text.slice(i, end);
    i = end;
  }
  return [out, values];
}
