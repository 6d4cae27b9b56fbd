import { MigrationFileError } from "./migration_error.ts";

/**
 * A connection's migration file cannot be planned: the run stops before anything is sent, and the
 * CLI exits with 1. It names the connection beside the file.
 */
export class PlanError extends Error {
  /** The connection (or datasource) whose folder holds the file. */
  readonly connection: string;
  /** The file, relative to the connection's folder (or the folder itself). */
  readonly file: string;

  /** Names `connection` beside the file error `cause`. */
  constructor(connection: string, cause: MigrationFileError) {
    super(`connection "${connection}": ${cause.message}`, { cause });
    this.name = "PlanError";
    this.connection = connection;
    this.file = cause.file;
  }
}

/** Runs `plan` for `connection`, naming the connection in any file error it throws. */
export async function planFor<T>(connection: string, plan: () => Promise<T>): Promise<T> {
  try {
    return await plan();
  } catch (error) {
    if (error instanceof MigrationFileError) throw new PlanError(connection, error);
    throw error;
  }
}
