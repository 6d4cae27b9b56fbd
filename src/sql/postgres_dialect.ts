import { levelOf, type SqlDialect } from "./sql_dialect.ts";

/** PostgreSQL: `$1` placeholders, `"name"` quoting, the levels in BEGIN. */
export const POSTGRES: SqlDialect = {
  name: "PostgreSQL",
  systemOf: () => "postgresql",
  defaultPort: 5432,
  file: false,
  transactionalDdl: true,
  now: "CURRENT_TIMESTAMP",
  ago: (ms) => `CURRENT_TIMESTAMP - (${ms}::float8 * INTERVAL '1 millisecond')`,
  // The protocol counts parameters in 16 bits.
  maxParameters: 65535,
  bindsObjects: true,
  bindsArrayBuffer: false,
  bigintIs64Bits: false,
  stopsStatements: true,
  oneWriter: false,
  placeholder: (n) => `$${n}`,
  quote: (name) => `"${name.replaceAll('"', '""')}"`,
  // READ UNCOMMITTED is run as READ COMMITTED, as the standard allows: not refused.
  lacks: () => undefined,
  begin(readOnly, isolation) {
    const level = levelOf(isolation);
    const begin = level === undefined ? "BEGIN" : `BEGIN ISOLATION LEVEL ${level}`;
    return [readOnly ? `${begin} READ ONLY` : begin];
  },
  reset: () => [],
  // Serialization failure and deadlock.
  isConflict: (code) => code === "40001" || code === "40P01",
  // Any failed statement aborts the transaction until a rollback, one stopped at its query
  // timeout (57014) too.
  endedAt: ({ reason, code }) =>
    Promise.resolve(
      reason === "statement" || reason === "conflict" || code === "57014" ? false : undefined,
    ),
};
