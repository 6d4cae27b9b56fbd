import { MigrationFailure } from "../../migration_error.ts";
import { errorDetail } from "../http/search_client.ts";
import { renderValue } from "../render_value.ts";
import { isJsonObject } from "../../files/json_object.ts";
import { checkpointOf, listingsOf, prune, rebase, refresh, shardSeqNos } from "./catch_up.ts";
import { documentCount, indexUuid, writeBlocked } from "./cluster_reads.ts";
import type { ReindexProgress, ReindexStep } from "./reindex_plan.ts";
import { stepFailure } from "./reindex_failure.ts";
import {
  progressAtStart,
  progressDocument,
  type RunProgress,
  type Since,
} from "./reindex_progress.ts";
import { NO_FIGURES, reindexReport, type ReportFigures } from "./reindex_report.ts";
import { UNBLOCK } from "./reindex_requests.ts";
import type { ReindexSetup } from "./reindex_setup.ts";
import { type FailedStep, type Send, StepError } from "./reindex_step.ts";
import { fenceOf, notedCopies, seconds } from "./reindex_values.ts";
import { CopyNotProven, stopCopies } from "./stop_copies.ts";
import { moveAlias, SwapUnknown } from "./alias_swap.ts";
import { copyDocuments, type CopyingRun } from "./copy_task.ts";
import type { ReindexOutcome, RunPlan } from "./run_plan.ts";
import { definedFields } from "../../../defined_fields.ts";

// A catch-up that copied at most this many documents is short enough to be the last, under the
// block; else another runs while writes go on, up to this many.
const SHORT_CATCH_UP = 2_000;
const CATCH_UPS = 5;

/**
 * One run of a reindex file, built from its plan: one method per step (`#steps` maps each
 * {@linkcode ReindexStep} to its method), run in order. What the steps hand on is the
 * {@linkcode RunProgress}, replaced only by `#advance`; the report's figures are replaced only by
 * `#tally`. A step that fails is told with the last request it sent, once what came before the
 * swap is rolled back.
 */
export class ReindexRun {
  readonly #setup: ReindexSetup;
  readonly #plan: RunPlan;
  // Sends the steps' requests: aborted by the setup's signal, then only by a lost lock once the
  // alias moved.
  #send: Send;
  #progress: RunProgress;
  #figures: ReportFigures = NO_FIGURES;
  // What the copy's functions see of this run.
  readonly #copying: CopyingRun;

  // The step each name runs.
  readonly #steps: Record<ReindexStep, () => Promise<void>> = {
    "unblock-earlier": () => this.#unblockEarlier(),
    "forget-earlier": () => this.#forgetEarlier(),
    discard: () => this.#discard(),
    note: () => this.#note(),
    create: () => this.#create(),
    open: () => this.#open(),
    copy: () => this.#copy(),
    block: () => this.#block(),
    "catch-up": () => this.#lastCatchUp(),
    verify: () => this.#verify(),
    swap: () => this.#swap(),
    unblock: () => this.#unblock(),
    "delete-source": () => this.#deleteSource(),
    forget: () => this.#forget(),
  };

  constructor(setup: ReindexSetup, plan: RunPlan) {
    this.#setup = setup;
    this.#plan = plan;
    this.#send = setup.requests.steps(setup.signal);
    this.#progress = progressAtStart(plan.resumed);
    this.#copying = {
      setup,
      plan,
      send: (...request) => this.#send(...request),
      progress: () => this.#progress,
      advance: (change) => this.#advance(change),
      note: () => this.#note(),
      stopOthers: () => this.#stopOthers(),
    };
  }

  /** Runs the steps planned; see `runReindex`. */
  async run(): Promise<ReindexOutcome> {
    const { ctx } = this.#setup;
    await this.#runSteps(this.#plan.steps);
    if (this.#plan.thenRefuse !== undefined) {
      throw new MigrationFailure({
        connection: ctx.connection,
        file: ctx.file,
        reason: `reindex not applied: ${this.#plan.thenRefuse}`,
      });
    }
    // The source's uuid, as the copy (or, resumed after its swap, the progress) read it.
    const uuid = this.#progress.blockedSeqNos?.uuid ?? this.#progress.since?.uuid;
    const kept = uuid !== undefined && !this.#figures.deletedSource;
    return {
      result: "reindexed",
      status: 200,
      reindex: reindexReport(this.#plan.summary, this.#figures),
      ...(kept ? { movedOff: { name: this.#plan.source, uuid } } : {}),
    };
  }

  // Where the run stands now: the one place it changes.
  #advance(change: Partial<RunProgress>): void {
    this.#progress = { ...this.#progress, ...change };
  }

  // What the report will say: the one place its figures change.
  #tally(change: Partial<ReportFigures>): void {
    this.#figures = { ...this.#figures, ...change };
  }

  async #runSteps(steps: readonly ReindexStep[]): Promise<void> {
    const { requests, ctx } = this.#setup;
    const swapAt = steps.indexOf("swap");
    for (const [i, current] of steps.entries()) {
      // Once the alias moved, what is left is quick and only tidies up: Ctrl-C lets it finish.
      if (i > swapAt && swapAt >= 0) this.#send = requests.steps(ctx.lost);
      try {
        await this.#steps[current]();
      } catch (error) {
        // The request that failed: what the rollback sends after it is sent aside.
        const failed: FailedStep = { step: current, error, request: requests.last };
        throw await this.#failure(failed, swapAt >= 0 && i > swapAt);
      }
    }
  }

  // What a failed step throws, once what came before the swap is rolled back.
  async #failure(failed: FailedStep, swapped: boolean): Promise<unknown> {
    const { spec, ctx } = this.#setup;
    const { source } = this.#plan;
    const { error } = failed;
    if (ctx.lost.aborted) return error; // another runner has the lock now: it finishes the job
    if (error instanceof SwapUnknown) {
      return stepFailure(
        ctx,
        { ...failed, error: error.cause },
        `whether the alias ${spec.alias} moved is unknown (no answer, and it is not on ` +
          `${spec.index} yet): ${this.#stillBlocked()}, since a swap still queued ` +
          `could land after they were lifted; the next run finds where the alias is, and ` +
          `finishes or resumes`,
      );
    }
    const state = swapped
      ? `the alias ${spec.alias} is on ${spec.index} already; the next run finishes the rest`
      : `the alias ${spec.alias} stays on ${source}; ${await this.#rollBack(
        error instanceof CopyNotProven,
      )}; ${spec.index} and ` +
        `the progress are kept: the next run resumes (it catches up with what ${source} ` +
        `took meanwhile, and starts over if the file changed)`;
    return stepFailure(ctx, failed, state);
  }

  // The steps, in the order they run (see ReindexStep).

  async #unblockEarlier(): Promise<void> {
    const { nodeWaitMs, typed } = this.#setup;
    const earlier = this.#earlier();
    // The earlier run's block is on this run's source: lifted by a rollback if this step fails.
    if (earlier.source === this.#plan.source) this.#advance({ mayBeBlocked: true });
    await stopCopies(this.#send, earlier.index, {
      recorded: new Set(notedCopies(earlier)),
      waitMs: nodeWaitMs,
      typed,
      strict: true,
    });
    await this.#send("PUT", `/${encodeURIComponent(earlier.source)}/_settings`, UNBLOCK, {
      ok: [404],
    });
  }

  async #forgetEarlier(): Promise<void> {
    await this.#send("DELETE", this.#setup.progressPath, undefined, { ok: [404] });
  }

  async #discard(): Promise<void> {
    const earlier = this.#earlier();
    await this.#send("DELETE", `/${encodeURIComponent(earlier.index)}`, undefined, { ok: [404] });
    this.#setup.ctx.say(
      `reindex: deleted ${earlier.index}, made by an earlier version of the file`,
    );
  }

  async #note(): Promise<void> {
    await this.#send("PUT", this.#setup.progressPath, this.#progressDoc());
    this.#advance({ noted: true });
  }

  async #create(): Promise<void> {
    const { spec, body, to, ctx } = this.#setup;
    const created = await this.#send("PUT", to, body, { ok: [400] });
    // Made by this reindex already: a resumed run (the planner checked its uuid), or an answer
    // lost and the request repeated (this run saw no such index a moment before).
    if (
      created.status === 400 && !errorDetail(created.body).startsWith("resource_already_exists")
    ) {
      throw new StepError(errorDetail(created.body), 400);
    }
    // Made here, empty: what the progress says was copied is not in it (deleted by hand).
    if (created.status !== 400) this.#advance({ since: undefined });
    const uuid = await indexUuid(this.#send, spec.index);
    this.#advance({ uuid });
    await this.#note();
    // The resumed run's index (its uuid, or none noted when it stopped before noting it), not
    // one this run made with a request whose answer was lost.
    const noted = this.#plan.resumed?.uuid;
    const tookOver = created.status === 400 && this.#plan.resumed !== undefined &&
      (noted === undefined || noted === uuid);
    ctx.say(
      tookOver
        ? `reindex: took over ${spec.index}, created by a run that stopped`
        : `reindex: created ${spec.index}`,
    );
  }

  // Into an existing index (an undo): the one the planner saw, its uuid noted before its block is
  // lifted; the copy overwrites what it holds, and the prune deletes what the source lacks.
  async #open(): Promise<void> {
    const { spec, to, ctx } = this.#setup;
    const uuid = await indexUuid(this.#send, spec.index);
    const noted = this.#plan.resumed?.uuid;
    if (uuid === undefined || (noted !== undefined && noted !== uuid)) {
      throw new StepError(
        `${spec.index} is not the index this run was copying into (another index.uuid, or gone)`,
      );
    }
    this.#advance({ uuid });
    await this.#note();
    if ((await writeBlocked(this.#send, spec.index)).blocked) {
      await this.#send("PUT", `${to}/_settings`, UNBLOCK);
      ctx.say(`reindex: writes to ${spec.index} unblocked, for the copy`);
    }
  }

  async #copy(): Promise<void> {
    const { spec, ctx } = this.#setup;
    const { source } = this.#plan;
    const { uuid: sourceUuid } = await shardSeqNos(this.#send, source);
    // The source was deleted and made again: what was copied is of another index.
    if (this.#progress.since !== undefined && this.#progress.since.uuid !== sourceUuid) {
      this.#advance({ since: undefined });
    }
    // Left blocked by a run that stopped after its block (or whose swap got no answer, which
    // must not land on a source taking writes): it stays blocked, and the copy is made under it.
    if ((await writeBlocked(this.#send, source)).blocked) {
      const at = Date.parse(this.#plan.resumed?.blocked_at ?? "");
      this.#advance({ mayBeBlocked: true, blockedAt: Number.isNaN(at) ? Date.now() : at });
      ctx.say(
        `reindex: writes to ${source} are blocked already; the copy is made under the block`,
      );
      return;
    }
    if (this.#progress.since === undefined) {
      const { documents, ms } = await this.#catchUp();
      this.#tally({ firstCopy: { documents, ms } });
    } else ctx.say(`reindex ${source} -> ${spec.index}: catching up from a run that stopped`);
    // Each catch-up copies what came while the one before ran: they shrink, as long as the copy
    // is faster than the writes.
    let caught = await this.#catchUp();
    for (let i = 1; i < CATCH_UPS && caught.documents > SHORT_CATCH_UP; i++) {
      caught = await this.#catchUp();
    }
    await this.#pruneAndCatchUp(caught.since);
  }

  async #block(): Promise<void> {
    const { ctx } = this.#setup;
    const { source, from } = this.#plan;
    // Writers are refused from the moment the block lands, which may be long before its answer
    // comes (a node slow to give up its writes in flight): counted from the asking, and noted
    // first, so that a run killed meanwhile leaves it to the next.
    this.#advance({ mayBeBlocked: true, blockedAt: this.#progress.blockedAt ?? Date.now() });
    await this.#note();
    const blocked = await this.#send("PUT", `${from}/_block/write`);
    // A block in place already (a resumed run) is acknowledged with no index listed.
    if (!isJsonObject(blocked.body) || blocked.body.acknowledged !== true) {
      throw new StepError(`the block was not acknowledged: ${renderValue(blocked.body, 300)}`);
    }
    if (!(await writeBlocked(this.#send, source)).blocked) {
      throw new StepError(`${source} is not write-blocked after the block was acknowledged`);
    }
    // The last catch-up reads what a refresh made visible: every acknowledged write must be.
    await refresh(this.#send, source);
    const blockedSeqNos = await shardSeqNos(this.#send, source);
    this.#advance({ blockedSeqNos, fence: fenceOf(blockedSeqNos) });
    await this.#note();
    ctx.say(`reindex: writes to ${source} blocked`);
  }

  async #lastCatchUp(): Promise<void> {
    const { spec, ctx } = this.#setup;
    const { source } = this.#plan;
    const blocked = this.#progress.blockedSeqNos;
    if (blocked === undefined) throw new Error("reindex: catch-up planned without a block");
    const last = await copyDocuments(this.#copying, this.#progress.since?.seqNo);
    this.#tally({ firstCopy: this.#figures.firstCopy ?? last });
    this.#advance({
      since: {
        uuid: blocked.uuid,
        seqNo: Math.max(-1, Math.min(...blocked.shards.map((s) => s.max))),
      },
    });
    await this.#note();
    // The new index holds every document of the source now, each as it is: what is left is the
    // documents the source deleted since they were copied.
    const { baseline } = this.#progress;
    // Nothing is above the last number, so nothing is taken out to be copied again.
    const { deleted } = baseline === undefined
      ? await prune(this.#send, source, spec.index, Number.MAX_SAFE_INTEGER)
      : await rebase(this.#send, source, spec.index, baseline, Infinity);
    if (deleted > 0) {
      ctx.say(`reindex: deleted ${deleted} document(s) the source no longer holds`);
    }
  }

  async #verify(): Promise<void> {
    const { spec, to, ctx } = this.#setup;
    const { source, from } = this.#plan;
    await refresh(this.#send, spec.index);
    const [before, after] = [
      await documentCount(this.#send, from),
      await documentCount(this.#send, to),
    ];
    if (before !== after) {
      throw new StepError(
        `${source} holds ${before} document(s), ${spec.index} ${after}: the copy is incomplete ` +
          `(a script that drops documents cannot be verified)`,
      );
    }
    this.#tally({ documents: after });
    ctx.say(`reindex: ${spec.index} holds all ${after} document(s) of ${source}`);
  }

  async #swap(): Promise<void> {
    const { spec, ctx, nodeWaitMs, requests } = this.#setup;
    const { source, definitions } = this.#plan;
    // Not sent yet: Ctrl-C now rolls back, with nothing queued that could land later.
    if (ctx.interrupt?.aborted) throw new StepError("interrupted before the swap was sent");
    await this.#checkBeforeSwap();
    const everyNode = await moveAlias(this.#send, requests, {
      spec,
      source,
      definitions,
      distribution: ctx.distribution,
      nodeWaitMs,
    });
    // Writes through the alias go to the new index now: they were refused since the block.
    const { blockedAt } = this.#progress;
    if (blockedAt !== undefined) this.#tally({ writeBlockedMs: Date.now() - blockedAt });
    const { writeBlockedMs } = this.#figures;
    ctx.say(
      `reindex: alias ${spec.alias} moved to ${spec.index}` +
        (writeBlockedMs === undefined
          ? ""
          : `, writes through it blocked ${seconds(writeBlockedMs)}`) +
        (everyNode
          ? ""
          : `; not every node applied the move within ${seconds(nodeWaitMs)}: writes through ` +
            `the alias on a node that has not yet are refused until it does`),
    );
    // A node that has not seen the swap yet still resolves the alias to the source: blocked,
    // what it sends there is refused, and retried through the alias it reaches the new index.
    if (!spec.unblockSource && !spec.deleteSource) {
      ctx.say(
        `reindex: writes to ${source} stay blocked, for nodes that have not seen the move yet`,
      );
    }
  }

  // Asked for (`unblock_source`): what a node that has not seen the swap yet writes through the
  // alias lands in the source, lost to the alias.
  async #unblock(): Promise<void> {
    await this.#send("PUT", `${this.#plan.from}/_settings`, UNBLOCK, { ok: [404] });
    this.#setup.ctx.say(`reindex: writes to ${this.#plan.source} unblocked, as the file asks`);
  }

  async #deleteSource(): Promise<void> {
    await this.#send("DELETE", this.#plan.from, undefined, { ok: [404] });
    this.#tally({ deletedSource: true });
    this.#setup.ctx.say(`reindex: deleted ${this.#plan.source}`);
  }

  async #forget(): Promise<void> {
    await this.#send("DELETE", this.#setup.progressPath, undefined, { ok: [404] });
  }

  // What the steps do in parts.

  // The earlier version's progress, which a plan with `*-earlier` steps or discard holds.
  #earlier(): ReindexProgress {
    const { earlier } = this.#plan;
    if (earlier === undefined) throw new Error("reindex: an earlier version's step, without one");
    return earlier;
  }

  #progressDoc(): Readonly<Record<string, unknown>> {
    const { spec, hash, ctx } = this.#setup;
    return progressDocument({
      source: this.#plan.source,
      index: spec.index,
      alias: spec.alias,
      hash,
      started_at: this.#plan.startedAt,
      connection: ctx.connection,
      file: ctx.file,
    }, this.#progress);
  }

  // Documents deleted from the source since they were copied: found here, reading both
  // indices whole, then after each catch-up from what changed, so that under the block only
  // what changed since the last one needs looking at.
  async #pruneAndCatchUp(since: Since): Promise<void> {
    const { spec, ctx } = this.#setup;
    const { source } = this.#plan;
    const pruned = await prune(this.#send, source, spec.index, since.seqNo);
    const { baseline } = pruned;
    this.#advance({ baseline });
    let { deleted, recopied } = pruned;
    for (let i = 0; i < CATCH_UPS; i++) {
      const caught = await this.#catchUp();
      const rebased = await rebase(this.#send, source, spec.index, baseline, caught.since.seqNo);
      deleted += rebased.deleted;
      recopied += rebased.recopied;
      if (caught.documents + rebased.looked <= SHORT_CATCH_UP) break;
    }
    // Sorted now, while writes go on: the rebase under the block reads it sorted.
    listingsOf(baseline);
    if (deleted > 0) {
      ctx.say(
        `reindex: deleted ${deleted} document(s) from ${spec.index} the source no longer holds`,
      );
    }
    // Taken out too, but the source holds them: told apart, so that no delete is claimed.
    if (recopied > 0) {
      ctx.say(`reindex: copied again ${recopied} document(s) written to ${source} during the copy`);
    }
  }

  // Last thing before the swap: no copy may still write into the new index, and the source took
  // no write since the block.
  async #checkBeforeSwap(): Promise<void> {
    const { source } = this.#plan;
    // A copy that is not proven ended (its node hung, or out of the cluster) could write into
    // the new index once it is live: a document deleted through the alias would come back.
    await this.#stopOthers();
    // The counts cannot see an update or a delete that came through a block lifted during the
    // copy (by hand, or by a late request re-sent to another host): the block and the source's
    // sequence numbers are read again, last thing before the swap.
    if (!(await writeBlocked(this.#send, source)).blocked) {
      throw new StepError(
        `the write block on ${source} was lifted during the catch-up, so writes the copy lacks ` +
          "may have reached it; the alias was not moved, and the next run catches up with them",
      );
    }
    const last = fenceOf(await shardSeqNos(this.#send, source));
    const { fence } = this.#progress;
    if (last !== fence) {
      throw new StepError(
        `${source} took writes under the block (its sequence numbers moved from ${fence} to ` +
          `${last}); the alias was not moved, and the next run catches up with them`,
      );
    }
  }

  // Stops every copy into the new index but the one this run follows, and proves each copy noted
  // so far ended; the progress keeps those it cannot prove, for the swap and the next run to see.
  // Returns the nodes that answered the list proving it.
  async #stopOthers(keep?: string): Promise<readonly string[]> {
    const { spec, nodeWaitMs, typed, progressPath } = this.#setup;
    const { copies } = this.#progress;
    const before = [...copies].join();
    try {
      const { members } = await stopCopies(this.#send, spec.index, {
        recorded: copies,
        waitMs: nodeWaitMs,
        typed,
        strict: true,
        ...definedFields({ keep }),
        remember: () => this.#note(),
      });
      return members;
    } catch (error) {
      if (!(error instanceof CopyNotProven)) throw error;
      throw new CopyNotProven(
        `${error.message}. Run again once that node answers, back in the cluster; if it is ` +
          `gone for good, delete ${spec.index} and the progress document ${progressPath}, and run again ` +
          `(the copy starts over)`,
        { cause: error.cause },
      );
    } finally {
      if (this.#progress.noted && [...copies].join() !== before) await this.#note();
    }
  }

  // Reads the source's checkpoint, refreshes it, and copies every document written after the
  // checkpoint before (all of them, the first time): once done, the new index holds every write
  // up to that checkpoint, which it returns.
  async #catchUp(): Promise<{ documents: number; ms: number; since: Since }> {
    const { source } = this.#plan;
    const seqNos = await shardSeqNos(this.#send, source);
    await refresh(this.#send, source);
    const done = await copyDocuments(this.#copying, this.#progress.since?.seqNo);
    const since = { uuid: seqNos.uuid, seqNo: checkpointOf(seqNos.shards) };
    this.#advance({ since });
    await this.#note();
    return { ...done, since };
  }

  // Before the swap: the copy is stopped and the source takes writes again, its requests sent
  // aside. Says what it did. `said`: the failure names an unproven copy already.
  async #rollBack(said: boolean): Promise<string> {
    const { spec, nodeWaitMs, typed, progressPath, requests } = this.#setup;
    const { source } = this.#plan;
    const { unproven } = await stopCopies(requests.aside(), spec.index, {
      recorded: this.#progress.copies,
      waitMs: nodeWaitMs,
      typed,
    });
    this.#advance({ task: undefined });
    // Before the block is lifted: the next run must not follow a copy that ended. What was copied
    // stays noted: the next run catches up from there.
    if (this.#progress.noted) await requests.quiet("PUT", progressPath, this.#progressDoc());
    const left = unproven === undefined || said
      ? ""
      : `; ${unproven}: the alias moves only once it is`;
    if (!this.#progress.mayBeBlocked) return "writes to it were not blocked" + left;
    const lifted = await requests.unblockQuietly(source);
    const { blockedAt } = this.#progress;
    if (!lifted) {
      return `${this.#stillBlocked()}: the block could not be lifted (the next run lifts it; ` +
        `or PUT /${source}/_settings {"index.blocks.write": null})` + left;
    }
    if (blockedAt !== undefined) {
      this.#advance({ blockedAt: undefined });
      if (this.#progress.noted) await requests.quiet("PUT", progressPath, this.#progressDoc());
    }
    return (blockedAt === undefined
      ? "writes to it are unblocked"
      : `writes to ${source} were blocked ${seconds(Date.now() - blockedAt)}, until the ` +
        `block was lifted`) + left;
  }

  // A block this run leaves set, and how long writers have been refused: from when it was asked
  // for (or when the run found it), to now.
  #stillBlocked(): string {
    const { source } = this.#plan;
    const { blockedAt } = this.#progress;
    return blockedAt === undefined
      ? `writes to ${source} stay blocked`
      : `writes to ${source} are still blocked, ${seconds(Date.now() - blockedAt)} since the ` +
        `block was set`;
  }
}
