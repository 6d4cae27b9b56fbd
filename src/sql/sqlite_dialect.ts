import type { SqlDialect } from "./sql_dialect.ts";

/** SQLite: `?` placeholders, `"name"` quoting, serializable transactions that lock at BEGIN. */
export const SQLITE: SqlDialect = {
  name: "SQLite",
  systemOf: () => "sqlite",
  defaultPort: undefined,
  file: true,
  transactionalDdl: true,
  // As text that sorts as it should: 'YYYY-MM-DD HH:MM:SS.SSS', UTC.
  now: "strftime('%Y-%m-%d %H:%M:%f', 'now')",
  ago: (ms) => `strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (${ms} / 1000.0) || ' seconds')`,
  // SQLITE_MAX_VARIABLE_NUMBER in the builds of Deno, Bun and Node (its default since 3.32).
  maxParameters: 32766,
  bindsObjects: false,
  bindsArrayBuffer: false,
  bigintIs64Bits: true,
  stopsStatements: false,
  oneWriter: true,
  placeholder: () => "?",
  quote: (name) => `"${name.replaceAll('"', '""')}"`,
  // A level asked that is what it has is taken: its transactions are serializable.
  lacks: (isolation) =>
    isolation === "DEFAULT" || isolation === "SERIALIZABLE"
      ? undefined
      : "its transactions are SERIALIZABLE; ask for SERIALIZABLE or DEFAULT",
  // A write transaction takes the write lock at once (IMMEDIATE): two deferred ones that both go
  // on to write would deadlock, one failing at once with BUSY. The level asked is what it has.
  begin: (readOnly) => readOnly ? ["PRAGMA query_only = ON", "BEGIN"] : ["BEGIN IMMEDIATE"],
  reset: (readOnly) => readOnly ? ["PRAGMA query_only = OFF"] : [],
  isConflict: () => false,
  // A failed statement leaves its transaction open.
  endedAt: () => Promise.resolve(undefined),
};
