import { MigrationFailure } from "../../migration_error.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import { observe } from "./cluster_reads.ts";
import { decideReindex, type ReindexProgress } from "./reindex_plan.ts";
import { stepFailure } from "./reindex_failure.ts";
import { NO_FIGURES, reindexReport, type ReindexSummary } from "./reindex_report.ts";
import { ReindexRun } from "./reindex_run.ts";
import { planRun, type ReindexOutcome } from "./run_plan.ts";
import { type ReindexContext, type ReindexSetup, reindexSetup } from "./reindex_setup.ts";
import type { Send } from "./reindex_step.ts";
import { notedCopies, seconds, taskFailure } from "./reindex_values.ts";
import { stopCopies } from "./stop_copies.ts";
import { definedFields } from "../../../defined_fields.ts";

export { taskFailure };
export type { ReindexContext, ReindexOutcome };

/**
 * Runs a reindex file: observes the cluster, decides the steps ({@linkcode decideReindex}), and
 * runs them in order ({@linkcode ReindexRun}). The copy runs while writes go on; writes are
 * blocked only for the last catch-up, the checks and the swap. A step that fails before the swap
 * cancels the copy and lifts the write block (the alias is still on the source); the run stops
 * naming the step. The progress document and the new index stay, so the next run resumes: it
 * catches up from the sequence number the progress notes, whatever the source took meanwhile.
 */
export function runReindex(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
  ctx: ReindexContext,
): Promise<ReindexOutcome> {
  return runReindexInto(spec, body, ctx, { into: "new", name: "reindex" });
}

/** Where {@linkcode runReindexInto} copies, and what its messages call it. */
export interface ReindexTarget {
  /** `existing`: into an index that is there, never deleted (see `ReindexObservation.into`). */
  readonly into: "new" | "existing";
  /** What a refusal calls the run (`reindex`, `reindex (undo)`). */
  readonly name: string;
  /** Into an existing index: see `ReindexObservation.checkInto`. */
  readonly checkInto?: (uuid: string) => string | undefined;
}

/** {@linkcode runReindex}, into a new index or an existing one as `target` says. */
export async function runReindexInto(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
  ctx: ReindexContext,
  target: ReindexTarget,
): Promise<ReindexOutcome> {
  const setup = await reindexSetup(spec, body, ctx);
  const observed = await observeCluster(setup, setup.requests.steps(setup.signal));
  const observation = {
    ...observed,
    into: target.into,
    ...definedFields({ checkInto: target.checkInto }),
  };
  const decision = decideReindex(observation);
  if (decision.kind === "refuse") {
    const released = await release(setup, decision.release);
    throw new MigrationFailure({
      connection: ctx.connection,
      file: ctx.file,
      reason: `${target.name} not started: ${decision.reason} (${released})`,
    });
  }
  const summary: ReindexSummary = {
    source: decision.kind === "run" ? decision.source : spec.alias,
    index: spec.index,
    alias: spec.alias,
    resumed: decision.kind === "run" && decision.resumed,
  };
  if (decision.kind === "done") {
    ctx.say(`reindex: alias ${spec.alias} is on ${spec.index} already; nothing to do`);
    return { result: "exists", status: 200, reindex: reindexReport(summary, NO_FIGURES) };
  }
  const plan = planRun(setup, decision, observation.progress, observation.definitions, summary);
  return await new ReindexRun(setup, plan).run();
}

// Reads what the planner needs; a failure changed nothing.
async function observeCluster(
  setup: ReindexSetup,
  send: Send,
): ReturnType<typeof observe> {
  try {
    return await observe(send, setup.spec, setup.hash, setup.progressPath);
  } catch (error) {
    if (setup.ctx.lost.aborted) throw error;
    const failed = { step: "observe", error, request: setup.requests.last };
    throw stepFailure(setup.ctx, failed, "nothing was changed");
  }
}

// Before a refusal: lets go of what an unfinished run left. Says what it did.
async function release(
  setup: ReindexSetup,
  release: ReindexProgress | undefined,
): Promise<string> {
  if (release === undefined) return "nothing was changed";
  const { requests } = setup;
  // A copy stopped halfway, which this run will not follow: the source takes writes again.
  const { unproven } = await stopCopies(requests.aside(), release.index, {
    recorded: new Set(notedCopies(release)),
    waitMs: setup.nodeWaitMs,
    typed: setup.typed,
  });
  const lifted = await requests.unblockQuietly(release.source);
  // How long writers were refused, where the unfinished run noted when it asked for its block.
  const at = Date.parse(release.blocked_at ?? "");
  const since = Number.isNaN(at) ? "" : `, ${seconds(Date.now() - at)} after it was set`;
  return (lifted
    ? `the write block an unfinished run left on ${release.source} was lifted${since}`
    : `the write block an unfinished run left on ${release.source} could not be ` +
      `lifted: PUT /${release.source}/_settings {"index.blocks.write": null}`) +
    (unproven === undefined
      ? ""
      : `; ${unproven}: put ${release.index} to no use until a run proves that ` +
        "copy ended (or the node that may hold it is gone for good)");
}
