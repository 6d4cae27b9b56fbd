import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { errorDetail } from "../http/search_client.ts";
import { renderValue } from "../render_value.ts";
import type { ShardSeqNo } from "./catch_up.ts";
import type { ReindexProgress } from "./reindex_plan.ts";
import { StepError } from "./reindex_step.ts";

// What a reindex reads from the cluster's answers and from its progress document, and how it
// writes them down: pure, so that the run (reindex_run.ts, copy_task.ts) holds the requests and
// this what they mean.

/**
 * `<uuid>/0:41,1:40`: each primary shard's highest sequence number, which every write moves; the
 * uuid too, since an index deleted and made again may reach the same numbers.
 */
export function fenceOf(seqNos: { uuid: string; shards: readonly ShardSeqNo[] }): string {
  return `${seqNos.uuid}/${seqNos.shards.map((s) => `${s.shard}:${s.max}`).join(",")}`;
}

/** `<uuid>/<seq_no>`, as the progress notes it. */
export function parseSince(noted: string | undefined): { uuid: string; seqNo: number } | undefined {
  const match = noted === undefined ? null : /^(.*)\/(-1|\d+)$/.exec(noted);
  return match === null ? undefined : { uuid: match[1], seqNo: Number(match[2]) };
}

/** Whether the cluster refused a request (4xx): then it did nothing, unlike with a 5xx. */
export function refused(error: unknown): boolean {
  return error instanceof StepError && error.status !== undefined && error.status >= 400 &&
    error.status < 500;
}

/** How a start with no answer yet is noted: `?` and every node that may have taken it. */
export function placeholder(nodes: ReadonlySet<string>): string {
  return `?${[...nodes].sort().join("+")}`;
}

/** The copies a progress notes, with the task an earlier runner noted without them. */
export function notedCopies(progress: ReindexProgress | undefined): string[] {
  if (progress === undefined) return [];
  const copies = [...(progress.copies ?? [])];
  if (progress.task !== undefined && !copies.includes(progress.task)) copies.push(progress.task);
  return copies;
}

/** What a `_tasks` answer says of a reindex task: its counts, documents gone through, and run time. */
export function taskStatus(body: unknown): { counts: JsonObject; done: number; ms: number } {
  const task = isJsonObject(body) && isJsonObject(body.task) ? body.task : {};
  const counts = isJsonObject(task.status) ? task.status : {};
  const ms = typeof task.running_time_in_nanos === "number"
    ? Math.round(task.running_time_in_nanos / 1e6)
    : 0;
  const done = ["created", "updated", "version_conflicts", "noops", "deleted"]
    .reduce((n, k) => n + (typeof counts[k] === "number" ? counts[k] as number : 0), 0);
  return { counts, done, ms };
}

/** Why a finished `_reindex` task (a `_tasks` answer) did not copy everything, if it did not. */
export function taskFailure(body: JsonObject): string | undefined {
  if (body.error !== undefined) return errorDetail({ error: body.error });
  const response = isJsonObject(body.response) ? body.response : {};
  if (typeof response.canceled === "string") return `the copy was cancelled (${response.canceled})`;
  if (response.timed_out === true) return "the copy timed out";
  const failures = Array.isArray(response.failures) ? response.failures : [];
  if (failures.length === 0) return undefined;
  const first = isJsonObject(failures[0]) ? failures[0] : {};
  // A search failure (a shard of the source that could not be read: its node gone) comes with a
  // `reason` and a shard; a document the new index refused, with a `cause` and an id.
  if (first.cause === undefined && first.shard !== undefined) {
    const reason = isJsonObject(first.reason) ? errorDetail({ error: first.reason }) : "no reason";
    const node = typeof first.node === "string" ? ` on node ${first.node}` : "";
    // A failure of the whole search (no shard reached) names shard -1 and no index.
    const index = typeof first.index === "string" ? renderValue(first.index, 100) : undefined;
    const shard = typeof first.shard === "number" && first.shard >= 0 ? first.shard : undefined;
    const what = shard === undefined
      ? index ?? "the source index"
      : `shard ${shard} of ${index ?? "the source index"}`;
    return `the copy could not read ${what}${node} (${failures.length} failure(s)): ${reason}`;
  }
  const cause = isJsonObject(first.cause) ? errorDetail({ error: first.cause }) : "no reason given";
  const id = typeof first.id === "string" ? ` (document ${first.id})` : "";
  return `${failures.length} document(s) could not be copied${id}: ${cause}`;
}

/** A duration as a progress line says it: `12.3 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
