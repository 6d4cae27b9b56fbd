// The outbox table's name and how a missing one is told; its statements on each database are
// src/sql's (outbox_statements.ts), as every statement that differs by database is.
export { isMissingTable } from "../../sql/missing_table.ts";

export {
  type OutboxStatements,
  outboxStatements,
  outboxTableStatements,
} from "../../sql/outbox_statements.ts";

/** The table's name unless the outbox is given another. */
export const DEFAULT_OUTBOX_TABLE = "thaw_outbox";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `table` when it is a plain identifier the statements may hold as it is; throws otherwise. */
export function checkTableName(table: unknown, where: string): string {
  if (typeof table !== "string" || !IDENTIFIER.test(table)) {
    throw new TypeError(
      `${where}: table ${JSON.stringify(table)} is not a plain identifier ` +
        "(letters, digits and _, 63 at most, not starting with a digit)",
    );
  }
  return table;
}
