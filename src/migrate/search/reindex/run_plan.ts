import type { JsonObject } from "../../files/json_object.ts";
import type { ApplyOutcome } from "../apply_request.ts";
import type { ReindexReport } from "../../run_report.ts";
import type { ReindexDecision, ReindexProgress, ReindexStep } from "./reindex_plan.ts";
import type { ReindexSummary } from "./reindex_report.ts";
import type { ReindexSetup } from "./reindex_setup.ts";

/** What applying a reindex file did. */
export interface ReindexOutcome extends ApplyOutcome {
  readonly reindex: ReindexReport;
  /**
   * The index the alias was moved off, kept (not deleted), when the run knows its uuid: the
   * reindex's record names it, and only an undo into that very index is run.
   */
  readonly movedOff?: MovedOff;
}

/** An index a reindex moved its alias off: its name, and its `index.uuid`. */
export interface MovedOff {
  readonly name: string;
  readonly uuid: string;
}

/** What a run starts from, fixed once decided: the decision, and what the cluster told of it. */
export interface RunPlan {
  /** The index copied from. */
  readonly source: string;
  /** The source's path. */
  readonly from: string;
  /** The alias's definition (filter, routing) on each of its indices: the swap keeps the source's. */
  readonly definitions: ReadonlyMap<string, JsonObject>;
  readonly steps: readonly ReindexStep[];
  /** The progress of an earlier version of the file, which the `*-earlier` steps undo. */
  readonly earlier: ReindexProgress | undefined;
  /** The progress of a run of this version that stopped halfway, which this one resumes. */
  readonly resumed: ReindexProgress | undefined;
  /** When the reindex began, which the progress notes: the resumed run's start, else now. */
  readonly startedAt: string;
  /** Once the steps ran, the run stops with this reason. */
  readonly thenRefuse: string | undefined;
  readonly summary: ReindexSummary;
}

/**
 * The plan of a run decided: takes up what a resumed run noted, and says it resumes one.
 * `progress` and `definitions` are what the decision was made from.
 */
export function planRun(
  setup: ReindexSetup,
  decision: Extract<ReindexDecision, { kind: "run" }>,
  progress: ReindexProgress | undefined,
  definitions: ReadonlyMap<string, JsonObject>,
  summary: ReindexSummary,
): RunPlan {
  const { source } = decision;
  const resumed = decision.resumed ? progress : undefined;
  if (resumed !== undefined) {
    setup.ctx.say(`reindex ${source} -> ${setup.spec.index}: resuming a run that stopped halfway`);
  }
  return {
    source,
    from: `/${encodeURIComponent(source)}`,
    definitions,
    steps: decision.steps,
    earlier: decision.earlier,
    resumed,
    startedAt: resumed?.started_at ?? new Date().toISOString(),
    thenRefuse: decision.thenRefuse,
    summary,
  };
}
