import { isJsonObject } from "../../files/json_object.ts";
import { errorDetail } from "../http/search_client.ts";
import { clusterNodes } from "./cluster_reads.ts";
import type { RunPlan } from "./run_plan.ts";
import type { RunProgress } from "./reindex_progress.ts";
import type { ReindexSetup } from "./reindex_setup.ts";
import { type Send, StepError } from "./reindex_step.ts";
import { placeholder, refused, taskFailure, taskStatus } from "./reindex_values.ts";
import { definedFields } from "../../../defined_fields.ts";

// At most one progress line about the copy in this many milliseconds.
const SAY_EVERY_MS = 5_000;

/** What a copy sees of the run it is a step of: a view of a `ReindexRun`. */
export interface CopyingRun {
  readonly setup: ReindexSetup;
  readonly plan: RunPlan;
  /** Sends with the run's current sender. */
  readonly send: Send;
  /** Where the run stands now. */
  progress(): RunProgress;
  advance(change: Partial<RunProgress>): void;
  /** Writes the progress document. */
  note(): Promise<void>;
  /** Stops every other copy into the new index; the nodes that answered. */
  stopOthers(): Promise<readonly string[]>;
}

/**
 * Starts a copy of the documents written after sequence number `after` (all, when undefined),
 * or follows the task started for it, until it ends.
 */
export async function copyDocuments(
  run: CopyingRun,
  after?: number,
): Promise<{ documents: number; ms: number }> {
  const { spec, ctx } = run.setup;
  const { source } = run.plan;
  // The first wait that times out says where the copy stands; later ones every few seconds.
  let saidAt = 0;
  const wait = ctx.waitMs ?? 1_000;
  for (;;) {
    const task = run.progress().task ?? await startCopy(run, after);
    // The cluster answers as soon as the task ends, or after `wait` with a timeout error.
    const path = `/_tasks/${encodeURIComponent(task)}`;
    const waited = await run.send(
      "GET",
      `${path}?wait_for_completion=true&timeout=${wait}ms`,
      undefined,
      { ok: [404, 500] },
    );
    if (waited.status === 404) {
      // The node that ran it restarted, and it stored no result: copy again, overwriting what is
      // there. Or the node left the cluster, and the copy may go on once it is back: it stays
      // noted, and the restart must prove it ended.
      ctx.say(`reindex: task ${task} is gone; starting the copy again`);
      run.advance({ task: undefined });
      continue;
    }
    if (waited.status === 500) {
      if (!errorDetail(waited.body).startsWith("timeout_exception")) {
        throw new StepError(errorDetail(waited.body), 500);
      }
      if (Date.now() - saidAt >= SAY_EVERY_MS) {
        saidAt = Date.now();
        await sayProgress(run, path);
      }
      continue;
    }
    const answer = isJsonObject(waited.body) ? waited.body : {};
    const failed = taskFailure(answer);
    if (failed !== undefined) throw new StepError(failed);
    const { done, ms } = taskStatus(answer);
    run.progress().copies.delete(task);
    run.advance({ task: undefined });
    await run.note();
    if (after !== undefined) {
      ctx.say(
        `reindex ${source} -> ${spec.index}: caught up with ${done} document(s) written since ` +
          `sequence number ${after}`,
      );
    }
    return { documents: done, ms };
  }
}

// Starts the `_reindex` task of a copy (see copyDocuments), noted before and once started.
// Returns its id.
async function startCopy(run: CopyingRun, after: number | undefined): Promise<string> {
  const { spec, ctx } = run.setup;
  const { source } = run.plan;
  const { copies } = run.progress();
  // A copy that is gone may have been restarted by nobody; one still going is stopped.
  // A start that gets no answer may have started a copy on the node that took it, which
  // may hang and leave the cluster before anyone lists it: noted, before it is sent, as a
  // copy on any node, until a start is answered. Any node: those that answered the list,
  // and those the cluster manager counts (a node joining is applied node by node, so the
  // node that coordinated the list may not know it yet).
  const members = new Set([...await run.stopOthers(), ...await clusterNodes(run.send)]);
  let unknown = placeholder(members);
  copies.add(unknown);
  await run.note();
  // Not repeatable: sent twice, two copies would run, one of them followed by nobody.
  const started = await run.send("POST", "/_reindex?wait_for_completion=false", {
    source: {
      index: source,
      ...(after === undefined ? {} : { query: { range: { _seq_no: { gt: after } } } }),
    },
    // Overwrites: a document written again since it was copied is copied again.
    dest: { index: spec.index },
    ...definedFields({ script: spec.script }),
  }, { repeatable: false }).catch(async (error) => {
    // The cluster refused it (4xx): no copy started. A 5xx (a balancer that gave up on the
    // node that took it) says nothing of that node.
    if (refused(error)) {
      copies.delete(unknown);
      throw error;
    }
    // A node that joined while the start was on its way may have taken it.
    const now = await clusterNodes(run.send).catch(() => []);
    const wider = placeholder(new Set([...members, ...now]));
    if (wider !== unknown) {
      copies.delete(unknown);
      copies.add(unknown = wider);
      await run.note().catch(() => {});
    }
    throw error;
  });
  const id = isJsonObject(started.body) ? started.body.task : undefined;
  if (typeof id !== "string") throw new StepError("_reindex answered without a task id");
  run.advance({ task: id });
  copies.add(id);
  copies.delete(unknown);
  // Kept before waiting: a runner killed now finds the task instead of starting another.
  await run.note();
  // A catch-up says what it copied once done, in one line.
  if (after === undefined) ctx.say(`reindex ${source} -> ${spec.index}: copying (task ${id})`);
  return id;
}

// A line on where the copy stands, from its task's status.
async function sayProgress(run: CopyingRun, path: string): Promise<void> {
  const status = await run.send("GET", path, undefined, { ok: [404] });
  const { counts, done, ms } = taskStatus(status.body);
  const total = typeof counts.total === "number" ? counts.total : 0;
  run.setup.ctx.say(
    `reindex ${run.plan.source} -> ${run.setup.spec.index}: ${done} of ${total} document(s)` +
      (total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : "") +
      (ms > 0 ? `, ${Math.round(done / (ms / 1000))}/s` : ""),
  );
}
