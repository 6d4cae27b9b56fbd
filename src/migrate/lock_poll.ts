/** Another runner holds the migration lock and did not let go in time: the CLI exits with 3. */
export class LockNotAcquiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockNotAcquiredError";
  }
}

/** How often a runner waiting for a lock (search, PostgreSQL, MySQL) looks at it again. */
export const LOCK_POLL_MS = 250;
