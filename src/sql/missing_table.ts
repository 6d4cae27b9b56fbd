// How each database says a statement named a table that does not exist: what tells a feature whose
// table a migration makes (the outbox, the jobs) that the migration has not run.
import { DataError } from "./data_error.ts";

/** Whether `error` says the table a statement named does not exist. */
export function isMissingTable(error: unknown): boolean {
  if (!(error instanceof DataError)) return false;
  return error.code === "42P01" || error.code === "ER_NO_SUCH_TABLE" ||
    /no such table/i.test(error.message);
}
