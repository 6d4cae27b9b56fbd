import type { DistributionName } from "../distribution.ts";
import { recordId } from "../history/migration_record.ts";
import type { SearchClient } from "../http/search_client.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import { jsonContentHash } from "../../files/content_hash.ts";
import { ReindexRequests } from "./reindex_requests.ts";

/** Where a reindex runs, and what it may tell. */
export interface ReindexContext {
  readonly client: SearchClient;
  readonly connection: string;
  /** The file's path, which names its progress document. */
  readonly file: string;
  /** The records index, where the progress document lives. */
  readonly recordsIndex: string;
  /** The connection's request timeout: the cluster is asked to answer the swap well within it. */
  readonly timeoutMs: number;
  /** Aborts when the lock was lost: everything is left as it is, for the runner that has it. */
  readonly lost: AbortSignal;
  /** Ctrl-C: the copy is cancelled, the block lifted, and the next run resumes. */
  readonly interrupt?: AbortSignal;
  /** A line of progress for a person. */
  readonly say: (message: string) => void;
  /** How long one request waits for the task to end before the runner asks again (1 s). */
  readonly waitMs?: number;
  /** What the cluster is (OpenSearch by default): the swap's parameters are named after it. */
  readonly distribution?: DistributionName;
}

/** What a reindex is given, and what follows from that alone: fixed from its first request on. */
export interface ReindexSetup {
  /** What the file asks for: the new index, the alias, the source if named, the script. */
  readonly spec: ReindexSpec;
  /** The new index's settings and mappings, which create sends. */
  readonly body: Readonly<Record<string, unknown>>;
  readonly ctx: ReindexContext;
  /** The checksum of what the file asks for, which the progress notes. */
  readonly hash: string;
  /** The progress document's path in the records index, named by the connection and the file. */
  readonly progressPath: string;
  /** Aborts the steps' requests: the lock lost, or Ctrl-C. */
  readonly signal: AbortSignal;
  /**
   * How long the cluster waits for one node, or for the cluster manager: within half the
   * request's time, so that what a node did not do in time is not still queued when we go on.
   */
  readonly nodeWaitMs: number;
  /** Elasticsearch 7 names the mapping type in a copy's description (stop_copies.ts). */
  readonly typed: boolean;
  /** The new index's path. */
  readonly to: string;
  readonly requests: ReindexRequests;
}

/**
 * The checksum of what a reindex file asks for, which its progress notes: of what is sent,
 * placeholders replaced, so that other values for them are another reindex. Not of
 * `unblockSource`, which changes nothing copied: a file changed only in that resumes its run, and a
 * progress noted before the option existed keeps its checksum.
 */
export function reindexHash(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
): Promise<string> {
  const { unblockSource: _, ...copied } = spec;
  return jsonContentHash({ reindex: copied, body });
}

/** The setup of a reindex of `spec`, creating `body`, where `ctx` says. */
export async function reindexSetup(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
  ctx: ReindexContext,
): Promise<ReindexSetup> {
  const hash = await reindexHash(spec, body);
  const progressPath = `/${ctx.recordsIndex}/_doc/${
    encodeURIComponent(`reindex-${await recordId(ctx.connection, ctx.file)}`)
  }`;
  return {
    spec,
    body,
    ctx,
    hash,
    progressPath,
    signal: ctx.interrupt ? AbortSignal.any([ctx.lost, ctx.interrupt]) : ctx.lost,
    nodeWaitMs: Math.max(1_000, Math.floor(ctx.timeoutMs / 2)),
    typed: ctx.distribution === "elasticsearch",
    to: `/${encodeURIComponent(spec.index)}`,
    requests: new ReindexRequests(ctx.client),
  };
}
