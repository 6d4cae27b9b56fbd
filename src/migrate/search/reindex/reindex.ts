import { jsonContentHash } from "../../files/content_hash.ts";
import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { MigrationError, MigrationFailure } from "../../migration_error.ts";
import type { ReindexReport } from "../../run_report.ts";
import type { ApplyOutcome } from "../apply_request.ts";
import { recordId } from "../history/migration_record.ts";
import {
  type AliasMember,
  decideReindex,
  namesToCheck,
  type ReindexObservation,
  type ReindexProgress,
  type ReindexStep,
  sourceCandidate,
  type SourceFacts,
} from "./reindex_plan.ts";
import {
  errorDetail,
  type SearchClient,
  type SearchResponse,
  SearchTransportError,
} from "../http/search_client.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import { type Send, StepError } from "./reindex_step.ts";
import {
  type Baseline,
  checkpointOf,
  listingsOf,
  prune,
  rebase,
  refresh,
  type ShardSeqNo,
  shardSeqNos,
} from "./catch_up.ts";
import { renderValue } from "../render_value.ts";

/** What applying a reindex file did. */
export interface ReindexOutcome extends ApplyOutcome {
  readonly reindex: ReindexReport;
}

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
}

// At most one progress line about the copy in this many milliseconds.
const SAY_EVERY_MS = 5_000;

/**
 * Runs a reindex file: observes the cluster, decides the steps ({@linkcode decideReindex}), and
 * runs them in order. The copy runs while writes go on; writes are blocked only for the last
 * catch-up, the checks and the swap. A step that fails before the swap cancels the copy and lifts
 * the write block (the alias is still on the source); the run stops naming the step. The progress
 * document and the new index stay, so the next run resumes: it catches up from the sequence
 * number the progress notes, whatever the source took meanwhile.
 */
export async function runReindex(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
  ctx: ReindexContext,
): Promise<ReindexOutcome> {
  const { client, lost } = ctx;
  const signal = ctx.interrupt ? AbortSignal.any([lost, ctx.interrupt]) : lost;
  // Of what is sent, placeholders replaced: other values for them are another reindex.
  const hash = await jsonContentHash({ reindex: spec, body });
  const progressPath = `/${ctx.recordsIndex}/_doc/${
    encodeURIComponent(`reindex-${await recordId(ctx.connection, ctx.file)}`)
  }`;
  let request = "";
  // Sends one request of a step; `ok` lists the statuses that count as done besides 2xx.
  const sender = (signal?: AbortSignal): Send => async (method, path, body, options = {}) => {
    request = `${method} ${path.split("?", 1)[0]}`;
    const response = await client.send(method, path, body, {
      repeatable: options.repeatable ?? true,
      ...(signal === undefined ? {} : { signal }),
    });
    if (
      (response.status < 200 || response.status >= 300) &&
      !(options.ok ?? []).includes(response.status)
    ) {
      throw new StepError(errorDetail(response.body), response.status);
    }
    return response;
  };
  let send = sender(signal);
  // How long the cluster waits for one node, or for the cluster manager: within half the
  // request's time, so that what a node did not do in time is not still queued when we go on.
  const nodeWaitMs = Math.max(1_000, Math.floor(ctx.timeoutMs / 2));
  // Cleaning up runs after Ctrl-C too, and never throws: it says what it could not do.
  const quiet = (method: string, path: string, body?: unknown) =>
    client.send(method, path, body, { repeatable: true }).catch(() => undefined);
  const unsignalled = () => sender();
  const failure = (step: string, error: unknown, state: string) => {
    const detail = error instanceof StepError || error instanceof SearchTransportError
      ? error.message
      : ctx.interrupt?.aborted
      ? "interrupted"
      : undefined;
    if (detail === undefined) return error;
    const reason = `reindex step ${step}: ${detail}; ${state}`;
    if (ctx.interrupt?.aborted) {
      return new MigrationError("interrupted", `connection "${ctx.connection}": ${reason}`);
    }
    return new MigrationFailure({
      connection: ctx.connection,
      file: ctx.file,
      ...(request === "" ? {} : { request }),
      ...(error instanceof StepError && error.status !== undefined ? { status: error.status } : {}),
      reason,
    }, { cause: error });
  };

  let observation: ReindexObservation & { definitions: Map<string, JsonObject> };
  try {
    observation = await observe(send, spec, hash, progressPath);
  } catch (error) {
    if (lost.aborted) throw error;
    throw failure("observe", error, "nothing was changed");
  }
  const { progress } = observation;
  const decision = decideReindex(observation);
  if (decision.kind === "refuse") {
    let released = "nothing was changed";
    if (decision.release !== undefined) {
      // A copy stopped halfway, which this run will not follow: the source takes writes again.
      const { unproven } = await stopCopies(unsignalled(), decision.release.index, {
        recorded: new Set(notedCopies(decision.release)),
        waitMs: nodeWaitMs,
      });
      const lifted = await unblockQuietly(quiet, decision.release.source);
      released = (lifted
        ? `the write block an unfinished run left on ${decision.release.source} was lifted`
        : `the write block an unfinished run left on ${decision.release.source} could not be ` +
          `lifted: PUT /${decision.release.source}/_settings {"index.blocks.write": null}`) +
        (unproven === undefined
          ? ""
          : `; ${unproven}: put ${decision.release.index} to no use until a run proves that ` +
            "copy ended (or the node that may hold it is gone for good)");
    }
    throw new MigrationFailure({
      connection: ctx.connection,
      file: ctx.file,
      reason: `reindex not started: ${decision.reason} (${released})`,
    });
  }
  const summary = {
    source: decision.kind === "run" ? decision.source : spec.alias,
    index: spec.index,
    alias: spec.alias,
    resumed: decision.kind === "run" && decision.resumed,
    deletedSource: false,
  };
  if (decision.kind === "done") {
    ctx.say(`reindex: alias ${spec.alias} is on ${spec.index} already; nothing to do`);
    return { result: "exists", status: 200, reindex: summary };
  }
  const { source, steps, earlier } = decision;
  const from = `/${encodeURIComponent(source)}`;
  const to = `/${encodeURIComponent(spec.index)}`;
  const resumed = decision.resumed ? progress : undefined;
  let uuid = resumed?.uuid;
  // The source's sequence numbers right after the block: the swap checks nothing moved them.
  let fence: string | undefined;
  // The source's sequence numbers once blocked: the catch-up copies up to them.
  let blockedSeqNos: Awaited<ReturnType<typeof shardSeqNos>> | undefined;
  // Every write to the source up to this sequence number is in the new index (see catch_up.ts).
  let since = parseSince(resumed?.since);
  // The documents of the source the new index holds, once pruned (see catch_up.ts).
  let baseline: Baseline | undefined;
  // A noted task was started for a catch-up whose start this run does not know: not followed.
  let task: string | undefined;
  const copies = new Set(notedCopies(resumed));
  let noted = resumed !== undefined;
  // Set before the block is asked for: an answer lost on the way back may hide that it landed.
  let mayBeBlocked = resumed !== undefined;
  // When writes were blocked: by an earlier run, when it left its block for this one.
  let blockedAt: number | undefined;
  let copy: { documents: number; ms: number } | undefined;
  let documents: number | undefined;
  let writeBlockedMs: number | undefined;
  if (resumed !== undefined) {
    ctx.say(`reindex ${source} -> ${spec.index}: resuming a run that stopped halfway`);
  }
  const startedAt = resumed?.started_at ?? new Date().toISOString();
  const progressDoc = () => ({
    source,
    index: spec.index,
    alias: spec.alias,
    hash,
    started_at: startedAt,
    connection: ctx.connection,
    file: ctx.file,
    ...(uuid === undefined ? {} : { uuid }),
    ...(since === undefined ? {} : { since: `${since.uuid}/${since.seqNo}` }),
    ...(blockedAt === undefined ? {} : { blocked_at: new Date(blockedAt).toISOString() }),
    ...(task === undefined ? {} : { task }),
    ...(copies.size === 0 ? {} : { copies: [...copies] }),
  });
  const note = async () => {
    await send("PUT", progressPath, progressDoc());
    noted = true;
  };
  const create = async () => {
    const created = await send("PUT", to, body, { ok: [400] });
    // Made by this reindex already: a resumed run (the planner checked its uuid), or an answer
    // lost and the request repeated (this run saw no such index a moment before).
    if (
      created.status === 400 && !errorDetail(created.body).startsWith("resource_already_exists")
    ) {
      throw new StepError(errorDetail(created.body), 400);
    }
    // Made here, empty: what the progress says was copied is not in it (deleted by hand).
    if (created.status !== 400) since = undefined;
    uuid = await indexUuid(send, spec.index);
    await note();
  };

  // Stops every copy into the new index but the one this run follows, and proves each copy noted
  // so far ended; the progress keeps those it cannot prove, for the swap and the next run to see.
  // Returns the nodes that answered the list proving it.
  const stopOthers = async (keep?: string): Promise<readonly string[]> => {
    const before = [...copies].join();
    try {
      const { members } = await stopCopies(send, spec.index, {
        recorded: copies,
        waitMs: nodeWaitMs,
        strict: true,
        ...(keep === undefined ? {} : { keep }),
        remember: note,
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
      if (noted && [...copies].join() !== before) await note();
    }
  };

  const run: Record<ReindexStep, () => Promise<void>> = {
    "unblock-earlier": async () => {
      // The earlier run's block is on this run's source: lifted by a rollback if this step fails.
      if (earlier!.source === source) mayBeBlocked = true;
      await stopCopies(send, earlier!.index, {
        recorded: new Set(notedCopies(earlier)),
        waitMs: nodeWaitMs,
        strict: true,
      });
      await send("PUT", `/${encodeURIComponent(earlier!.source)}/_settings`, UNBLOCK, {
        ok: [404],
      });
    },
    "forget-earlier": async () => {
      await send("DELETE", progressPath, undefined, { ok: [404] });
    },
    discard: async () => {
      await send("DELETE", `/${encodeURIComponent(earlier!.index)}`, undefined, { ok: [404] });
      ctx.say(`reindex: deleted ${earlier!.index}, made by an earlier version of the file`);
    },
    note,
    create: async () => {
      await create();
      ctx.say(`reindex: created ${spec.index}`);
    },
    copy: async () => {
      const { uuid: sourceUuid } = await shardSeqNos(send, source);
      // The source was deleted and made again: what was copied is of another index.
      if (since !== undefined && since.uuid !== sourceUuid) since = undefined;
      // Left blocked by a run that stopped after its block (or whose swap got no answer, which
      // must not land on a source taking writes): it stays blocked, and the copy is made under it.
      if ((await writeBlocked(send, source)).blocked) {
        mayBeBlocked = true;
        const at = Date.parse(resumed?.blocked_at ?? "");
        blockedAt = Number.isNaN(at) ? Date.now() : at;
        ctx.say(
          `reindex: writes to ${source} are blocked already; the copy is made under the block`,
        );
        return;
      }
      if (since === undefined) copy = await catchUp();
      else ctx.say(`reindex ${source} -> ${spec.index}: catching up from a run that stopped`);
      // Each catch-up copies what came while the one before ran: they shrink, as long as the copy
      // is faster than the writes.
      for (let i = 0; i < CATCH_UPS; i++) {
        if ((await catchUp()).documents <= SHORT_CATCH_UP) break;
      }
      // Documents deleted from the source since they were copied: found here, reading both
      // indices whole, then after each catch-up from what changed, so that under the block only
      // what changed since the last one needs looking at.
      const pruned = await prune(send, source, spec.index, since!.seqNo);
      baseline = pruned.baseline;
      let deleted = pruned.deleted;
      for (let i = 0; i < CATCH_UPS; i++) {
        const copied = (await catchUp()).documents;
        const rebased = await rebase(send, source, spec.index, baseline, since!.seqNo);
        deleted += rebased.deleted;
        if (copied + rebased.looked <= SHORT_CATCH_UP) break;
      }
      listingsOf(baseline);
      if (deleted > 0) {
        ctx.say(
          `reindex: deleted ${deleted} document(s) from ${spec.index} the source no longer holds`,
        );
      }
    },
    block: async () => {
      mayBeBlocked = true;
      const blocked = await send("PUT", `${from}/_block/write`);
      // A block in place already (a resumed run) is acknowledged with no index listed.
      if (!isJsonObject(blocked.body) || blocked.body.acknowledged !== true) {
        throw new StepError(`the block was not acknowledged: ${renderValue(blocked.body, 300)}`);
      }
      if (!(await writeBlocked(send, source)).blocked) {
        throw new StepError(`${source} is not write-blocked after the block was acknowledged`);
      }
      blockedAt ??= Date.now();
      // The last catch-up reads what a refresh made visible: every acknowledged write must be.
      await refresh(send, source);
      blockedSeqNos = await shardSeqNos(send, source);
      fence = fenceOf(blockedSeqNos);
      await note();
      ctx.say(`reindex: writes to ${source} blocked`);
    },
    "catch-up": async () => {
      const { uuid: sourceUuid, shards } = blockedSeqNos!;
      const last = await copyDocuments(since?.seqNo);
      copy ??= last;
      since = { uuid: sourceUuid, seqNo: Math.max(-1, Math.min(...shards.map((s) => s.max))) };
      await note();
      // The new index holds every document of the source now, each as it is: what is left is the
      // documents the source deleted since they were copied.
      const { deleted } = baseline === undefined
        ? await prune(send, source, spec.index, Number.MAX_SAFE_INTEGER)
        : await rebase(send, source, spec.index, baseline, Infinity);
      if (deleted > 0) {
        ctx.say(`reindex: deleted ${deleted} document(s) the source no longer holds`);
      }
    },
    verify: async () => {
      await refresh(send, spec.index);
      const [before, after] = [await count(from), await count(to)];
      if (before !== after) {
        throw new StepError(
          `${source} holds ${before} document(s), ${spec.index} ${after}: the copy is incomplete ` +
            `(a script that drops documents cannot be verified)`,
        );
      }
      documents = after;
      ctx.say(`reindex: ${spec.index} holds all ${after} document(s) of ${source}`);
    },
    swap: async () => {
      const swapRequest = `POST /_aliases`;
      // Not sent yet: Ctrl-C now rolls back, with nothing queued that could land later.
      if (ctx.interrupt?.aborted) throw new StepError("interrupted before the swap was sent");
      // A copy that is not proven ended (its node hung, or out of the cluster) could write into
      // the new index once it is live: a document deleted through the alias would come back.
      await stopOthers();
      // The counts cannot see an update or a delete that came through a block lifted during the
      // copy (by hand, or by a late request re-sent to another host): the block and the source's
      // sequence numbers are read again, last thing before the swap.
      if (!(await writeBlocked(send, source)).blocked) {
        throw new StepError(
          `the write block on ${source} was lifted during the catch-up, so writes the copy lacks ` +
            "may have reached it; the alias was not moved, and the next run catches up with them",
        );
      }
      const last = fenceOf(await shardSeqNos(send, source));
      if (last !== fence) {
        throw new StepError(
          `${source} took writes under the block (its sequence numbers moved from ${fence} to ` +
            `${last}); the alias was not moved, and the next run catches up with them`,
        );
      }
      // The cluster answers within nodeWaitMs: a swap still queued when the client gives up could
      // land after a rollback lifted the block.
      try {
        await send(
          "POST",
          `/_aliases?cluster_manager_timeout=${nodeWaitMs}ms&timeout=${nodeWaitMs}ms`,
          {
            actions: [
              // must_exist: false makes it safe to repeat, and lets a source outside the alias be.
              { remove: { index: source, alias: spec.alias, must_exist: false } },
              {
                add: {
                  // The alias keeps its filter and routing on the new index.
                  ...observation.definitions.get(source),
                  index: spec.index,
                  alias: spec.alias,
                  is_write_index: true,
                },
              },
            ],
          },
        );
      } catch (error) {
        // An answer lost on the way back, or Ctrl-C: the alias itself says whether it moved.
        const now = await aliasMembers(sender(), spec.alias).catch(() => undefined);
        request = swapRequest;
        if (now?.members.some((m) => m.index === spec.index && m.write)) return;
        // Only a refusal (4xx) says the swap did not happen; without an answer, or with a 5xx (a
        // proxy's 502, a cluster manager that timed out), it may still be queued and land later.
        if (!refused(error)) throw new SwapUnknown(error);
        throw error;
      }
      ctx.say(`reindex: alias ${spec.alias} moved to ${spec.index}`);
    },
    unblock: async () => {
      await send("PUT", `${from}/_settings`, UNBLOCK, { ok: [404] });
      if (blockedAt !== undefined) writeBlockedMs = Date.now() - blockedAt;
      ctx.say(
        `reindex: writes to ${source} unblocked` +
          (writeBlockedMs === undefined ? "" : ` after ${seconds(writeBlockedMs)}`),
      );
    },
    "delete-source": async () => {
      await send("DELETE", from, undefined, { ok: [404] });
      summary.deletedSource = true;
      ctx.say(`reindex: deleted ${source}`);
    },
    forget: async () => {
      await send("DELETE", progressPath, undefined, { ok: [404] });
    },
  };

  // Reads the source's checkpoint, refreshes it, and copies every document written after the
  // checkpoint before (all of them, the first time): once done, the new index holds every write
  // up to that checkpoint.
  async function catchUp(): Promise<{ documents: number; ms: number }> {
    const seqNos = await shardSeqNos(send, source);
    await refresh(send, source);
    const done = await copyDocuments(since?.seqNo);
    since = { uuid: seqNos.uuid, seqNo: checkpointOf(seqNos.shards) };
    await note();
    return done;
  }

  // Starts a copy of the documents written after sequence number `after` (all, when undefined),
  // or follows the task started for it, until it ends.
  async function copyDocuments(after?: number): Promise<{ documents: number; ms: number }> {
    // The first wait that times out says where the copy stands; later ones every few seconds.
    let saidAt = 0;
    const wait = ctx.waitMs ?? 1_000;
    for (;;) {
      if (task === undefined) {
        // A copy that is gone may have been restarted by nobody; one still going is stopped.
        // A start that gets no answer may have started a copy on the node that took it, which
        // may hang and leave the cluster before anyone lists it: noted, before it is sent, as a
        // copy on any node, until a start is answered. Any node: those that answered the list,
        // and those the cluster manager counts (a node joining is applied node by node, so the
        // node that coordinated the list may not know it yet).
        const members = new Set([...await stopOthers(), ...await clusterNodes(send)]);
        let unknown = placeholder(members);
        copies.add(unknown);
        await note();
        // Not repeatable: sent twice, two copies would run, one of them followed by nobody.
        const started = await send("POST", "/_reindex?wait_for_completion=false", {
          source: {
            index: source,
            ...(after === undefined ? {} : { query: { range: { _seq_no: { gt: after } } } }),
          },
          // Overwrites: a document written again since it was copied is copied again.
          dest: { index: spec.index },
          ...(spec.script === undefined ? {} : { script: spec.script }),
        }, { repeatable: false }).catch(async (error) => {
          // The cluster refused it (4xx): no copy started. A 5xx (a balancer that gave up on the
          // node that took it) says nothing of that node.
          if (refused(error)) {
            copies.delete(unknown);
            throw error;
          }
          // A node that joined while the start was on its way may have taken it.
          const now = await clusterNodes(send).catch(() => []);
          const wider = placeholder(new Set([...members, ...now]));
          if (wider !== unknown) {
            copies.delete(unknown);
            copies.add(unknown = wider);
            await note().catch(() => {});
          }
          throw error;
        });
        const id = isJsonObject(started.body) ? started.body.task : undefined;
        if (typeof id !== "string") throw new StepError("_reindex answered without a task id");
        task = id;
        copies.add(id);
        copies.delete(unknown);
        // Kept before waiting: a runner killed now finds the task instead of starting another.
        await note();
        // A catch-up says what it copied once done, in one line.
        if (after === undefined) {
          ctx.say(`reindex ${source} -> ${spec.index}: copying (task ${task})`);
        }
      }
      // The cluster answers as soon as the task ends, or after `wait` with a timeout error.
      const path = `/_tasks/${encodeURIComponent(task)}`;
      const waited = await send(
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
        task = undefined;
        continue;
      }
      if (waited.status === 500) {
        if (!errorDetail(waited.body).startsWith("timeout_exception")) {
          throw new StepError(errorDetail(waited.body), 500);
        }
        if (Date.now() - saidAt >= SAY_EVERY_MS) {
          saidAt = Date.now();
          const status = await send("GET", path, undefined, { ok: [404] });
          const { counts, done, ms } = taskStatus(status.body);
          const total = typeof counts.total === "number" ? counts.total : 0;
          ctx.say(
            `reindex ${source} -> ${spec.index}: ${done} of ${total} document(s)` +
              (total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : "") +
              (ms > 0 ? `, ${Math.round(done / (ms / 1000))}/s` : ""),
          );
        }
        continue;
      }
      const answer = isJsonObject(waited.body) ? waited.body : {};
      const failed = taskFailure(answer);
      if (failed !== undefined) throw new StepError(failed);
      const { done, ms } = taskStatus(answer);
      copies.delete(task);
      task = undefined;
      await note();
      if (after !== undefined) {
        ctx.say(
          `reindex ${source} -> ${spec.index}: caught up with ${done} document(s) written since ` +
            `sequence number ${after}`,
        );
      }
      return { documents: done, ms };
    }
  }

  async function count(index: string): Promise<number> {
    const response = await send("GET", `${index}/_count`);
    const answer = isJsonObject(response.body) ? response.body : {};
    const shards = isJsonObject(answer._shards) ? answer._shards : {};
    if (typeof shards.failed === "number" && shards.failed > 0) {
      throw new StepError(`_count of ${index.slice(1)} failed on ${shards.failed} shard(s)`);
    }
    if (typeof answer.count !== "number") throw new StepError("_count answered without a count");
    return answer.count;
  }

  // Before the swap: the copy is stopped and the source takes writes again. Says what it did.
  // `said`: the failure names an unproven copy already.
  async function rollBack(said: boolean): Promise<string> {
    const { unproven } = await stopCopies(unsignalled(), spec.index, {
      recorded: copies,
      waitMs: nodeWaitMs,
    });
    task = undefined;
    // Before the block is lifted: the next run must not follow a copy that ended. What was copied
    // stays noted: the next run catches up from there.
    if (noted) await quiet("PUT", progressPath, progressDoc());
    const left = unproven === undefined || said
      ? ""
      : `; ${unproven}: the alias moves only once it is`;
    if (!mayBeBlocked) return "writes to it were not blocked" + left;
    const lifted = await unblockQuietly(quiet, source);
    if (lifted && blockedAt !== undefined) {
      blockedAt = undefined;
      if (noted) await quiet("PUT", progressPath, progressDoc());
    }
    return (lifted
      ? "writes to it are unblocked"
      : `the write block on ${source} could not be lifted (the next run lifts it; or ` +
        `PUT /${source}/_settings {"index.blocks.write": null})`) + left;
  }

  const swapAt = steps.indexOf("swap");
  for (const [i, current] of steps.entries()) {
    // Once the alias moved, what is left is quick and only tidies up: Ctrl-C lets it finish.
    if (i > swapAt && swapAt >= 0) send = sender(lost);
    try {
      await run[current]();
    } catch (error) {
      if (lost.aborted) throw error; // another runner has the lock now: it finishes the job
      const swapped = swapAt >= 0 && i > swapAt;
      // The request that failed, not one the rollback sent after it.
      const failed = request;
      if (error instanceof SwapUnknown) {
        throw failure(
          current,
          error.cause,
          `whether the alias ${spec.alias} moved is unknown (no answer, and it is not on ` +
            `${spec.index} yet): writes to ${source} stay blocked, since a swap still queued ` +
            `could land after they were lifted; the next run finds where the alias is, and ` +
            `finishes or resumes`,
        );
      }
      const state = swapped
        ? `the alias ${spec.alias} is on ${spec.index} already; the next run finishes the rest`
        : `the alias ${spec.alias} stays on ${source}; ${await rollBack(
          error instanceof CopyNotProven,
        )}; ${spec.index} and ` +
          `the progress are kept: the next run resumes (it catches up with what ${source} ` +
          `took meanwhile, and starts over if the file changed)`;
      request = failed;
      throw failure(current, error, state);
    }
  }
  if (decision.thenRefuse !== undefined) {
    throw new MigrationFailure({
      connection: ctx.connection,
      file: ctx.file,
      reason: `reindex not applied: ${decision.thenRefuse}`,
    });
  }
  return {
    result: "reindexed",
    status: 200,
    reindex: {
      ...summary,
      ...(documents === undefined ? {} : { documents }),
      ...(copy === undefined ? {} : {
        copyMs: copy.ms,
        documentsPerSecond: copy.ms > 0 ? Math.round(copy.documents / (copy.ms / 1000)) : 0,
      }),
      ...(writeBlockedMs === undefined ? {} : { writeBlockedMs }),
    },
  };
}

const UNBLOCK = { "index.blocks.write": null };

/** A copy into the new index may still be going: the alias must not move onto it. */
class CopyNotProven extends StepError {
  constructor(message: string, options?: ErrorOptions) {
    super(message);
    this.name = "CopyNotProven";
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The swap got no answer, and the alias has not moved (yet). */
class SwapUnknown extends Error {
  constructor(cause: unknown) {
    super("the swap got no answer", { cause });
    this.name = "SwapUnknown";
  }
}

/** Reads what {@linkcode decideReindex} needs, and the alias's definitions for the swap. */
async function observe(
  send: Send,
  spec: ReindexSpec,
  hash: string,
  progressPath: string,
): Promise<ReindexObservation & { definitions: Map<string, JsonObject> }> {
  const progress = await readProgress(send, progressPath);
  const { members, definitions } = await aliasMembers(send, spec.alias);
  const found = new Set<string>();
  const uuids = new Map<string, string>();
  for (const name of namesToCheck(spec, progress)) {
    const head = await send("HEAD", `/${encodeURIComponent(name)}`, undefined, { ok: [404] });
    if (head.status !== 200) continue;
    found.add(name);
    if (name === spec.index || name === progress?.index) {
      const uuid = await indexUuid(send, name);
      if (uuid !== undefined) uuids.set(name, uuid);
    }
  }
  const candidate = sourceCandidate(spec, members);
  let source: SourceFacts | undefined;
  if (
    candidate !== undefined && (found.has(candidate) || members.some((m) => m.index === candidate))
  ) {
    source = await sourceFacts(send, candidate, spec.alias);
  }
  return {
    spec,
    hash,
    ...(progress === undefined ? {} : { progress }),
    members,
    exists: (name) => found.has(name),
    uuid: (name) => uuids.get(name),
    ...(source === undefined ? {} : { source }),
    definitions,
  };
}

async function readProgress(send: Send, path: string): Promise<ReindexProgress | undefined> {
  const response = await send("GET", path, undefined, { ok: [404] });
  const body = isJsonObject(response.body) ? response.body : {};
  if (response.status === 404 || body.found !== true || !isJsonObject(body._source)) {
    return undefined;
  }
  const p = body._source as JsonObject;
  if (
    typeof p.source !== "string" || typeof p.index !== "string" || typeof p.hash !== "string"
  ) {
    throw new StepError(
      `the progress document ${path} is malformed (no source, index or hash): delete it by hand`,
    );
  }
  const text = (key: string) => typeof p[key] === "string" ? { [key]: p[key] as string } : {};
  return {
    source: p.source,
    index: p.index,
    alias: typeof p.alias === "string" ? p.alias : "",
    hash: p.hash,
    ...text("uuid"),
    ...text("since"),
    ...text("blocked_at"),
    ...text("task"),
    ...(Array.isArray(p.copies)
      ? { copies: p.copies.filter((c): c is string => typeof c === "string") }
      : {}),
    started_at: typeof p.started_at === "string" ? p.started_at : "",
  };
}

// The alias's indices, and its definition on each (filter, routing) without `is_write_index`.
async function aliasMembers(
  send: Send,
  alias: string,
): Promise<{ members: AliasMember[]; definitions: Map<string, JsonObject> }> {
  const response = await send("GET", `/_alias/${encodeURIComponent(alias)}`, undefined, {
    ok: [404],
  });
  const members: AliasMember[] = [];
  const definitions = new Map<string, JsonObject>();
  if (response.status === 404 || !isJsonObject(response.body)) return { members, definitions };
  for (const [index, value] of Object.entries(response.body)) {
    const aliases = isJsonObject(value) && isJsonObject(value.aliases) ? value.aliases : {};
    if (!Object.hasOwn(aliases, alias)) continue;
    const entry = isJsonObject(aliases[alias]) ? aliases[alias] as JsonObject : {};
    members.push({ index, write: entry.is_write_index === true });
    const kept: JsonObject = {};
    for (const key of ["filter", "index_routing", "search_routing", "is_hidden"]) {
      if (entry[key] !== undefined) kept[key] = entry[key];
    }
    definitions.set(index, kept);
  }
  return { members, definitions };
}

async function indexUuid(send: Send, name: string): Promise<string | undefined> {
  const response = await send(
    "GET",
    `/${encodeURIComponent(name)}/_settings/index.uuid?flat_settings=true`,
    undefined,
    { ok: [404] },
  );
  const body = isJsonObject(response.body) ? response.body : {};
  // Keyed by the concrete index: another key means the name is an alias.
  const entry = Object.hasOwn(body, name) && isJsonObject(body[name])
    ? body[name] as JsonObject
    : {};
  const settings = isJsonObject(entry.settings) ? entry.settings : {};
  return typeof settings["index.uuid"] === "string" ? settings["index.uuid"] : undefined;
}

// Whether `name` is a concrete index, and whether its writes are blocked.
async function writeBlocked(
  send: Send,
  name: string,
): Promise<{ concrete: boolean; blocked: boolean }> {
  const settings = await send(
    "GET",
    // index.uuid is always there: the answer's key is then the concrete index behind the name.
    `/${encodeURIComponent(name)}/_settings/index.uuid,index.blocks.write?flat_settings=true`,
  );
  const body = isJsonObject(settings.body) ? settings.body : {};
  const concrete = Object.keys(body).length === 1 && Object.hasOwn(body, name);
  const entry = concrete && isJsonObject(body[name]) ? body[name] as JsonObject : {};
  const values = isJsonObject(entry.settings) ? entry.settings : {};
  return { concrete, blocked: values["index.blocks.write"] === "true" };
}

async function sourceFacts(send: Send, name: string, alias: string): Promise<SourceFacts> {
  const path = `/${encodeURIComponent(name)}`;
  const { concrete, blocked } = await writeBlocked(send, name);
  const aliases = await send("GET", `${path}/_alias`);
  const own = isJsonObject(aliases.body) && isJsonObject(aliases.body[name])
    ? aliases.body[name] as JsonObject
    : {};
  const names = isJsonObject(own.aliases) ? Object.keys(own.aliases) : [];
  return {
    concrete,
    blocked,
    otherAliases: names.filter((a) => a !== alias),
  };
}

// `<uuid>/0:41,1:40`: each primary shard's highest sequence number, which every write moves; the
// uuid too, since an index deleted and made again may reach the same numbers.
function fenceOf(seqNos: { uuid: string; shards: readonly ShardSeqNo[] }): string {
  return `${seqNos.uuid}/${seqNos.shards.map((s) => `${s.shard}:${s.max}`).join(",")}`;
}

// `<uuid>/<seq_no>`, as the progress notes it.
function parseSince(noted: string | undefined): { uuid: string; seqNo: number } | undefined {
  const match = noted === undefined ? null : /^(.*)\/(-1|\d+)$/.exec(noted);
  return match === null ? undefined : { uuid: match[1], seqNo: Number(match[2]) };
}

// A catch-up that copied at most this many documents is short enough to be the last, under the
// block; else another runs while writes go on, up to this many.
const SHORT_CATCH_UP = 2_000;
const CATCH_UPS = 5;

/** Whether the cluster refused a request (4xx): then it did nothing, unlike with a 5xx. */
function refused(error: unknown): boolean {
  return error instanceof StepError && error.status !== undefined && error.status >= 400 &&
    error.status < 500;
}

/** The ids of the cluster's nodes, as the cluster manager's state lists them. */
async function clusterNodes(send: Send): Promise<string[]> {
  const state = await send("GET", "/_cluster/state/nodes?filter_path=nodes.*.name");
  const body = isJsonObject(state.body) ? state.body : {};
  const nodes = isJsonObject(body.nodes) ? Object.keys(body.nodes) : [];
  if (nodes.length === 0) throw new StepError("the cluster state lists no node");
  return nodes;
}

/** How a start with no answer yet is noted: `?` and every node that may have taken it. */
function placeholder(nodes: ReadonlySet<string>): string {
  return `?${[...nodes].sort().join("+")}`;
}

/** How {@linkcode stopCopies} stops copies, and what it knows of them. */
interface StopCopies {
  /** The copy the run follows: neither stopped nor asked about. */
  readonly keep?: string;
  /** Every copy noted so far: those found running are added, those proven ended removed. */
  readonly recorded: Set<string>;
  /** Keeps `recorded` once copies were added to it, before they are cancelled. */
  readonly remember?: () => Promise<void>;
  /** How long the cluster waits for one node's answer. */
  readonly waitMs: number;
  /** Throws {@linkcode CopyNotProven} instead of returning why. */
  readonly strict?: boolean;
}

/** What {@linkcode stopCopies} found. */
interface Stopped {
  /** The nodes that answered the list that proved every copy ended (none when it did not). */
  readonly members: readonly string[];
  /** Why a copy is left, or the error that stopped the proof; undefined when none is. */
  readonly unproven?: string;
}

/**
 * Cancels every running `_reindex` into `index` but `keep`, and proves that every copy in
 * `recorded` ended. Only listed copies whose description names `index` are cancelled: a noted
 * task id may belong to another task after a node restart. A node that does not answer the list,
 * or that the list did not reach while a copy noted there is not known to have ended, leaves a
 * copy unproven.
 */
async function stopCopies(
  send: Send,
  index: string,
  options: StopCopies,
): Promise<Stopped> {
  const wait = `timeout=${options.waitMs}ms`;
  const running = async () => {
    // Each node the list reaches runs a task of it (`lists[n]`) while it answers: listed with the
    // copies, it names every node that answered, so a node left out is seen, not taken for one
    // that runs no copy. The members the cluster state names would not do: a node leaving is
    // applied node by node, and the node coordinating the list may have dropped it already.
    const listed = await send(
      "GET",
      `/_tasks?actions=*reindex,cluster:monitor/tasks/lists*&detailed=true&group_by=nodes&${wait}`,
    );
    const body = isJsonObject(listed.body) ? listed.body : {};
    const nodes = isJsonObject(body.nodes) ? body.nodes : {};
    const ids: string[] = [];
    const answered: string[] = [];
    for (const [node, listing] of Object.entries(nodes)) {
      const tasks = isJsonObject(listing) && isJsonObject(listing.tasks) ? listing.tasks : {};
      for (const [id, info] of Object.entries(tasks)) {
        const task = isJsonObject(info) ? info : {};
        if (task.action === "cluster:monitor/tasks/lists[n]") answered.push(node);
        if (
          id !== options.keep && typeof task.description === "string" &&
          task.description.endsWith(` to [${index}]`)
        ) ids.push(id);
      }
    }
    // A node that did not answer may run a copy into the index, noted or not.
    const failures = Array.isArray(body.node_failures) ? body.node_failures : [];
    const silent = failures.map((f) =>
      `node ${
        isJsonObject(f) && typeof f.node_id === "string" ? f.node_id : "(unnamed)"
      } did not answer the task list (${errorDetail({ error: f })})`
    );
    // Not the cluster's list: no node answered, and none failed to.
    if (answered.length === 0 && failures.length === 0) {
      throw new StepError(
        `the task list names no node (a proxy's or a login page's answer?): ${
          renderValue(listed.body, 200)
        }`,
      );
    }
    // A task a node could not describe may be a copy.
    const unlisted = Array.isArray(body.task_failures) ? body.task_failures : [];
    for (const f of unlisted) {
      silent.push(`a task could not be listed (${errorDetail({ error: f })})`);
    }
    return { ids, silent, answered };
  };
  try {
    const first = await running();
    const found = first.ids.filter((id) => !options.recorded.has(id));
    if (found.length > 0) {
      for (const id of found) options.recorded.add(id);
      await options.remember?.();
    }
    for (const id of first.ids) {
      // The cancel takes no timeout of its own: a node that hangs now holds it for the request's.
      await send("POST", `/_tasks/${encodeURIComponent(id)}/_cancel?wait_for_completion=true`);
    }
    const second = await running();
    if (second.ids.length > 0) {
      throw new CopyNotProven(
        `a copy into ${index} could not be stopped (task ${second.ids.join(", ")})`,
      );
    }
    if (second.silent.length > 0) {
      throw new CopyNotProven(
        `a copy into ${index} is not proven stopped: ${second.silent.join("; ")}`,
      );
    }
    for (const id of [...options.recorded]) {
      if (id === options.keep) continue;
      if (id.startsWith("?")) {
        // A start with no answer: every node that could have taken it answered the list, and
        // none copies into the index. One the list did not reach may still run it.
        const nodes = id.slice(1).split("+").filter((n) => n !== "");
        const away = nodes.length === 0
          ? ["(none noted)"]
          : nodes.filter((n) => !second.answered.includes(n));
        if (away.length > 0) {
          throw new CopyNotProven(
            `a copy into ${index} whose start got no answer is not proven stopped: it may run ` +
              `on node ${away.join(", ")}, which the list of copies did not reach (not in the ` +
              "cluster now, as the node that listed them sees it)",
          );
        }
        options.recorded.delete(id);
        continue;
      }
      const why = await copyLeft(send, index, id, wait);
      if (why !== undefined) {
        throw new CopyNotProven(`a copy into ${index} (task ${id}) is not proven stopped: ${why}`);
      }
      options.recorded.delete(id);
    }
    return { members: second.answered };
  } catch (error) {
    if (options.strict) {
      // An HTTP refusal says what it is; Ctrl-C or a lost lock is not about the copies.
      if (!(error instanceof SearchTransportError)) throw error;
      throw new CopyNotProven(
        `a copy into ${index} is not proven stopped: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    const left = error instanceof CopyNotProven
      ? error.message
      : [...options.recorded].some((id) => id !== options.keep)
      ? `a copy into ${index} (task ${[...options.recorded].join(", ")}) is not proven stopped`
      : undefined;
    return { members: [], ...(left === undefined ? {} : { unproven: left }) };
  }
}

/** The copies a progress notes, with the task an earlier runner noted without them. */
function notedCopies(progress: ReindexProgress | undefined): string[] {
  if (progress === undefined) return [];
  const copies = [...(progress.copies ?? [])];
  if (progress.task !== undefined && !copies.includes(progress.task)) copies.push(progress.task);
  return copies;
}

// Why the copy noted as task `id` may still be going, or undefined when it ended.
async function copyLeft(
  send: Send,
  index: string,
  id: string,
  wait: string,
): Promise<string | undefined> {
  const node = id.split(":", 1)[0];
  let response: SearchResponse | undefined;
  // A node that just came back may drop the first connection the others open to it.
  for (let attempt = 1; response === undefined; attempt++) {
    try {
      response = await send("GET", `/_tasks/${encodeURIComponent(id)}?${wait}`, undefined, {
        ok: [404],
      });
    } catch (error) {
      if (attempt === 3) {
        return `node ${node} did not answer (${error instanceof Error ? error.message : error})`;
      }
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
  const body = isJsonObject(response.body) ? response.body : {};
  if (response.status === 404) {
    // The cluster says which: a member that runs no such task, or a node it does not know.
    const error = isJsonObject(body.error) ? body.error : {};
    const reason = typeof error.reason === "string" ? error.reason : "";
    if (reason.includes("isn't part of the cluster")) {
      return `its node ${node} is not in the cluster (hung, or gone), and once back it could ` +
        `write into ${index} what its source held when it began, bringing back documents ` +
        `deleted since`;
    }
    // Only the cluster's own word proves it: a proxy's 404, or another, proves nothing.
    if (reason.includes("isn't running and hasn't stored its results")) return undefined;
    return `the cluster's answer does not say it ended (HTTP 404: ${renderValue(body, 200)})`;
  }
  if (body.completed === true) return undefined;
  const task = isJsonObject(body.task) ? body.task : {};
  // The id taken by another task since: the node restarted, and the copy died with it.
  if (typeof task.description !== "string" || !task.description.endsWith(` to [${index}]`)) {
    return undefined;
  }
  return `it is still running on node ${node}`;
}

async function unblockQuietly(
  quiet: (method: string, path: string, body?: unknown) => Promise<SearchResponse | undefined>,
  index: string,
): Promise<boolean> {
  const lifted = await quiet("PUT", `/${encodeURIComponent(index)}/_settings`, UNBLOCK);
  return lifted !== undefined && (lifted.status < 300 || lifted.status === 404);
}

// What a `_tasks` answer says of a reindex task: its counts, documents gone through, and run time.
function taskStatus(body: unknown): { counts: JsonObject; done: number; ms: number } {
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
    return `the copy could not read shard ${renderValue(first.shard, 20)} of ` +
      `${renderValue(first.index, 100)}${node} (${failures.length} failure(s)): ${reason}`;
  }
  const cause = isJsonObject(first.cause) ? errorDetail({ error: first.cause }) : "no reason given";
  const id = typeof first.id === "string" ? ` (document ${first.id})` : "";
  return `${failures.length} document(s) could not be copied${id}: ${cause}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
