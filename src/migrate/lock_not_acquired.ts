/** Another runner holds the migration lock and did not let go in time: the CLI exits with 3. */
export class LockNotAcquiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockNotAcquiredError";
  }
}
