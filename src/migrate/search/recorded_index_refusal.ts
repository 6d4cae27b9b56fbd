import type { Mask } from "../../config/secrets_mask.ts";
import { MigrationFailure } from "../migration_error.ts";
import { movedOffOf } from "./applied_record.ts";
import type { RecordStore } from "./history/record_store.ts";
import type { SearchClient } from "./http/search_client.ts";
import type { ReindexSpec } from "./plan/search_request.ts";
import { indexUuid } from "./reindex/cluster_reads.ts";
import { ReindexRequests } from "./reindex/reindex_requests.ts";
import { StepError } from "./reindex/reindex_step.ts";
import { previousIndexRefusal } from "./reindex/reindex_undo.ts";

/** Where the refusal reads: the connection's client and records, its name and mask. */
export interface RefusalReads {
  readonly client: SearchClient;
  readonly store: RecordStore;
  readonly connection: string;
  readonly mask: Mask;
}

/**
 * Why the reindex undo `undoPath` (`back`) of the reindex `path` (`forward`) would go into
 * another index than the one the record of `path` says it moved the alias off (see
 * `previousIndexRefusal`); undefined when it would not, or when that index is not there yet.
 */
export async function recordedIndexRefusal(
  { client, store, connection, mask }: RefusalReads,
  path: string,
  forward: ReindexSpec,
  undoPath: string,
  back: ReindexSpec,
): Promise<string | undefined> {
  const movedOff = movedOffOf((await store.read(path))?.previous_index);
  const read = `GET /${back.index}/_settings/index.uuid`;
  let uuid: string | undefined;
  try {
    uuid = await indexUuid(new ReindexRequests(client).aside(), back.index);
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    throw new MigrationFailure({
      connection,
      file: undoPath,
      request: mask(read),
      reason: `could not read which index ${undoPath} goes back into: ${error.message}`,
    }, { cause: error });
  }
  if (uuid === undefined) return undefined;
  return previousIndexRefusal({
    undoFile: undoPath,
    forward,
    recorded: { file: path, ...(movedOff === undefined ? {} : { movedOff }) },
    undo: back,
    uuid,
  });
}
