import { MigrationFileError } from "./migration_error.ts";

/**
 * A connection's migration file cannot be planned, or the connection's records forbid the command:
 * the run stops before anything is written, and the CLI exits with 1. It names the connection
 * beside the file, when there is one.
 */
export class PlanError extends Error {
  /** The connection (or datasource) whose folder holds the file. */
  readonly connection: string;
  /** The file, relative to the connection's folder (or the folder itself). */
  readonly file: string | undefined;

  /** Names `connection` beside the file error `cause`, or before a message about it. */
  constructor(connection: string, cause: MigrationFileError | string) {
    super(
      `connection "${connection}"${typeof cause === "string" ? " " : ": "}${
        typeof cause === "string" ? cause : cause.message
      }`,
      typeof cause === "string" ? undefined : { cause },
    );
    this.name = "PlanError";
    this.connection = connection;
    this.file = typeof cause === "string" ? undefined : cause.file;
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

/**
 * Plans `files` one at a time, in order (`undefined`, a missing folder, stays `undefined`): the
 * first file that cannot be planned stops the plan.
 */
export async function planAll<F, P>(
  files: readonly F[] | undefined,
  plan: (file: F) => Promise<P>,
): Promise<P[] | undefined> {
  if (files === undefined) return undefined;
  const planned: P[] = [];
  for (const file of files) planned.push(await plan(file));
  return planned;
}
