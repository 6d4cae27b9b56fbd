import {
  mysqlSplitterOptions,
  postgreSplitterOptions,
  splitQuery,
  sqliteSplitterOptions,
} from "dbgate-query-splitter";
import type { DatabaseKind } from "../../sql/datasource.ts";

/** Where a failing statement is in its file. */
export interface StatementLocation {
  /** 1-based line. */
  readonly line: number;
  /** The statement's first line, trimmed, for the message. */
  readonly excerpt: string;
}

/** A statement of a file, as the locator sees it. */
export interface LocatedStatement extends StatementLocation {
  readonly text: string;
}

// What the splitter returns with `returnRichInfo` (its index does not export the type).
interface SplitItem {
  readonly start: { readonly position: number };
  readonly end: { readonly position: number };
  readonly trimStart?: { readonly position: number };
}

const OPTIONS = {
  postgres: postgreSplitterOptions,
  mysql: mysqlSplitterOptions,
  sqlite: sqliteSplitterOptions,
};
// Comments and blank lines before a statement belong to no statement, for the line reported.
const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

/**
 * The statements of a file with their positions. Files are run by the driver, never split by
 * Thaw; this only maps what the driver reports (an offset, or how many statements completed) to
 * a line, and is used when a file failed.
 */
export function statementStarts(text: string, kind: DatabaseKind): LocatedStatement[] {
  const items = splitQuery(text, {
    ...OPTIONS[kind],
    returnRichInfo: true,
  }) as unknown as SplitItem[];
  return items.flatMap((item) => {
    const start = item.trimStart?.position ?? item.start.position;
    const body = text.slice(start, item.end.position);
    const skip = LEADING.exec(body)![0];
    if (skip.length === body.length) return [];
    const offset = start + skip.length;
    return [{
      line: lineAt(text, offset),
      excerpt: firstLine(text.slice(offset)),
      text: text.slice(offset, item.end.position),
    }];
  });
}

/**
 * Locates the failing statement: by the database's own character offset (1-based, in code
 * points, as PostgreSQL counts), else by the number of statements that completed before it.
 */
export function locateStatement(
  text: string,
  kind: DatabaseKind,
  where: { position?: number | undefined; completed?: number | undefined },
): StatementLocation | undefined {
  if (where.position !== undefined && where.position >= 1) {
    const offset = codePointOffset(text, where.position - 1);
    if (offset <= text.length) {
      return { line: lineAt(text, offset), excerpt: firstLine(lineText(text, offset)) };
    }
  }
  if (where.completed === undefined) return undefined;
  const statement = statementStarts(text, kind)[where.completed];
  return statement && { line: statement.line, excerpt: statement.excerpt };
}

function codePointOffset(text: string, points: number): number {
  let offset = 0;
  for (let i = 0; i < points && offset < text.length; i++) {
    offset += text.codePointAt(offset)! > 0xffff ? 2 : 1;
  }
  return offset;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function lineText(text: string, offset: number): string {
  return text.slice(text.lastIndexOf("\n", offset - 1) + 1);
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0].trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
