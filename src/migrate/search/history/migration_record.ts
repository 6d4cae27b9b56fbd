import type { FileRecord } from "../../driver.ts";
import { rawContentHash } from "../../files/content_hash.ts";
import { definedFields } from "../../../defined_fields.ts";

/** What the runner stores on the cluster for each applied file. */
export interface MigrationRecord {
  /** The file's path relative to its connection's folder. */
  readonly migration_path: string;
  readonly connection: string;
  /** The file's checksum (`content_hash.ts`), hex; a raw-bytes SHA-256 from earlier versions. */
  readonly content_hash: string;
  /** ISO 8601, UTC. */
  readonly executed_at: string;
  readonly execution_ms: number;
  /** The main request the file became (the `PUT` of an index, not its `HEAD`). */
  readonly request: { readonly method: string; readonly path: string };
  readonly runner_version: string;
  /**
   * Who wrote it: `user@host` (`recordedBy` of `driver.ts`). Absent from the records of earlier
   * versions, which did not store it.
   */
  readonly executed_by?: string;
  /**
   * A reindex file's: the index its run moved the alias off, kept, with its `index.uuid`. Its
   * undo goes back into that index only. Absent from the records of earlier versions, and from
   * records `baseline` wrote; `repair` and a rename keep the one the record held.
   */
  readonly previous_index?: { readonly name: string; readonly uuid: string };
}

/**
 * What a record says: its checksum, and of its run what it holds. A record as read may lack any
 * field (an earlier version's, or one made by hand): what it lacks, or holds as something else
 * than text, is left out.
 */
export function fileRecord(record: MigrationRecord): FileRecord {
  const text = (value: unknown) => typeof value === "string" && value !== "" ? value : undefined;
  const written = text(record.executed_at);
  const at = written === undefined ? undefined : new Date(written);
  const by = text(record.executed_by);
  const version = text(record.runner_version);
  return {
    hash: record.content_hash,
    ...(at === undefined || Number.isNaN(at.getTime()) ? {} : { executedAt: at.toISOString() }),
    ...definedFields({ executedBy: by, runnerVersion: version }),
  };
}

/**
 * The id of a new record: the SHA-256 (lowercase hex, 64 bytes) of `connection/path` in UTF-8.
 * The url-encoded `connection/path` that earlier versions used outgrows OpenSearch's 512-byte id
 * limit on a long or non-ASCII path; a hash never does. Connection names hold no `/`, so distinct
 * pairs give distinct ids, and 64 hex digits never equal a lock's id (`lock-<connection>`).
 * Records under the old ids stay valid: the store reads records by search, not by id.
 */
export function recordId(connection: string, path: string): Promise<string> {
  return rawContentHash(new TextEncoder().encode(`${connection}/${path}`));
}
