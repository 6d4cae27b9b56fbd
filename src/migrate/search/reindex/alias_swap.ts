import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import type { DistributionName } from "../distribution.ts";
import { aliasMembers } from "./cluster_reads.ts";
import type { ReindexRequests } from "./reindex_requests.ts";
import type { Send } from "./reindex_step.ts";
import { refused } from "./reindex_values.ts";

// OpenSearch 2 renamed master_timeout; Elasticsearch knows only the old name, OpenSearch 3 only
// the new one.
const managerTimeout = (distribution: DistributionName = "opensearch") =>
  distribution === "elasticsearch" ? "master_timeout" : "cluster_manager_timeout";

/** What the swap moves: the alias of `spec` from `source` (its `definitions` kept) to its index. */
export interface AliasMove {
  readonly spec: ReindexSpec;
  readonly source: string;
  readonly definitions: ReadonlyMap<string, JsonObject>;
  readonly distribution: DistributionName | undefined;
  readonly nodeWaitMs: number;
}

/**
 * Sends the swap, and says whether every node applied it. A swap that got no answer and has not
 * moved the alias (yet) throws {@linkcode SwapUnknown}; a refused one, its refusal.
 */
export async function moveAlias(
  send: Send,
  requests: ReindexRequests,
  { spec, source, definitions, distribution, nodeWaitMs }: AliasMove,
): Promise<boolean> {
  // The cluster answers within nodeWaitMs: a swap still queued when the client gives up could
  // land after a rollback lifted the block.
  // Every node applied the move (acknowledged): else one that has not yet still sends writes
  // through the alias to the blocked source, refused until it does.
  let everyNode = true;
  try {
    const moved = await send(
      "POST",
      `/_aliases?${managerTimeout(distribution)}=${nodeWaitMs}ms&timeout=${nodeWaitMs}ms`,
      {
        actions: [
          // Only from a source that holds the alias (it may be outside it), and without
          // `must_exist`, which Elasticsearch 7.10 refuses to parse: a swap repeated after it
          // landed fails on the remove, and the alias read below shows it moved.
          ...(definitions.has(source) ? [{ remove: { index: source, alias: spec.alias } }] : []),
          {
            add: {
              // The alias keeps its filter and routing on the new index.
              ...definitions.get(source),
              index: spec.index,
              alias: spec.alias,
              is_write_index: true,
            },
          },
        ],
      },
    );
    everyNode = !isJsonObject(moved.body) || moved.body.acknowledged !== false;
  } catch (error) {
    // An answer lost on the way back, or Ctrl-C: the alias itself says whether it moved. Read
    // aside: a failure names the swap.
    const now = await aliasMembers(requests.aside(), spec.alias).catch(() => undefined);
    // Only a refusal (4xx) says the swap did not happen; without an answer, or with a 5xx (a
    // proxy's 502, a cluster manager that timed out), it may still be queued and land later.
    if (!now?.members.some((m) => m.index === spec.index && m.write)) {
      throw refused(error) ? error : new SwapUnknown(error);
    }
  }
  return everyNode;
}

/** The swap got no answer, and the alias has not moved (yet). */
export class SwapUnknown extends Error {
  constructor(cause: unknown) {
    super("the swap got no answer", { cause });
    this.name = "SwapUnknown";
  }
}
