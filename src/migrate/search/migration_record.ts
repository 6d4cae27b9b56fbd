/** What the runner stores on the cluster for each applied file. */
export interface MigrationRecord {
  /** The file's path relative to its connection's folder. */
  readonly migration_path: string;
  readonly connection: string;
  /** SHA-256 of the file's raw bytes, hex. */
  readonly content_hash: string;
  /** ISO 8601, UTC. */
  readonly executed_at: string;
  readonly execution_ms: number;
  /** The main request the file became (the `PUT` of an index, not its `HEAD`). */
  readonly request: { readonly method: string; readonly path: string };
  readonly runner_version: string;
}

/** The record's document id: the url-encoded `connection/path`. */
export function recordId(connection: string, path: string): string {
  return encodeURIComponent(`${connection}/${path}`);
}
