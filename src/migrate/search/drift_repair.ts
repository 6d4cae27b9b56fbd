import type { Mask } from "../../config/secrets_mask.ts";
import type { AppliedFiles } from "../driver.ts";
import { MigrationError, MigrationFailure } from "../migration_error.ts";
import type { ConnectionDrift } from "../run_report.ts";
import { driftChecks } from "./drift/drift_plan.ts";
import { repairDrift as repairLiveDrift } from "./drift/live_resources.ts";
import type { SearchClient } from "./http/search_client.ts";
import type { SearchPlannedFile } from "./search_file.ts";

/** What repairing drift needs of its connection. */
export interface DriftRepairSite {
  readonly connection: string;
  readonly mask: Mask;
  /** The lock's: aborted once it is lost. */
  readonly lost: AbortSignal;
  /** Rewrites the record of a file applied again. */
  readonly record: (file: SearchPlannedFile) => Promise<void>;
}

/**
 * Under the lock: applies the drifted files again, and rewrites the records of those applied again
 * at the same checksum. `signal` (Ctrl-C) stops it before the next file.
 */
export async function repairSearchDrift(
  client: SearchClient,
  files: readonly SearchPlannedFile[],
  applied: AppliedFiles,
  found: ConnectionDrift,
  { connection, mask, lost, record }: DriftRepairSite,
  signal?: AbortSignal,
): Promise<ConnectionDrift> {
  try {
    return await repairLiveDrift(client, driftChecks(files, applied), found, {
      connection,
      signal: lost,
      mask,
      record,
      stopping: (file) => {
        if (!signal?.aborted) return;
        throw new MigrationError(
          "interrupted",
          `connection "${connection}": interrupted before applying ${file.path} again for drift`,
        );
      },
    });
  } catch (error) {
    if (!lost.aborted) throw error;
    const why = lost.reason instanceof MigrationFailure
      ? lost.reason.detail.reason
      : String(lost.reason);
    throw new MigrationFailure({
      connection,
      reason: `${why}; stopped at once while applying drifted files again: the request in ` +
        `flight may or may not have been applied`,
    }, { cause: lost.reason });
  }
}
