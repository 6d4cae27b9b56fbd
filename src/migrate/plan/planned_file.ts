/** A file ready to run: its path under the connection's folder, its checksum, what it becomes. */
export interface PlannedFile {
  readonly path: string;
  /** Its checksum (`content_hash.ts`): what a new record holds. */
  readonly hash: string;
  /**
   * The SHA-256 of its raw bytes, where that differs from `hash`: a record an earlier version
   * wrote holds it, and still counts as unchanged.
   */
  readonly rawHash?: string;
  /**
   * Other checksums records of earlier versions may hold for this file, unchanged by today's rule
   * (a SQL file's with a BOM or a final line end added or removed): they count as unchanged too.
   */
  readonly earlierHashes?: readonly string[];
  /**
   * Not idempotent (SQL, `POST`/`DELETE`/`PATCH` requests): runs once, and a change after it ran
   * is reported, never run. A declarative file (templates, policies, indices, `PUT`) is applied
   * again when it changes.
   */
  readonly runOnce: boolean;
  /**
   * Why this runtime cannot run it (a `.ts` file on a Node that cannot import TypeScript): the
   * run refuses it, before anything is written, only where it would run; listing it, or skipping
   * it applied, needs nothing of the runtime.
   */
  readonly unrunnable?: string;
  /** What it defines, where two files could define the same: `template logs`. */
  readonly resource?: string;
  /** What is sent, for the report: `PUT /logs` (search). SQL files leave it out. */
  readonly request?: string;
  /** An undo file that copies into an existing index (a reindex's): that index, for the report. */
  readonly overwrites?: string;
}
