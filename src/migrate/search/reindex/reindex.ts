import { jsonContentHash } from "../../files/content_hash.ts";
import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { MigrationError, MigrationFailure } from "../../migration_error.ts";
import type { ReindexReport } from "../../run_report.ts";
import type { ApplyOutcome } from "../apply_request.ts";
import { recordId } from "../history/migration_record.ts";
import {
  decideReindex,
  type ReindexDecision,
  type ReindexObservation,
  type ReindexProgress,
  type ReindexStep,
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
  shardSeqNos,
} from "./catch_up.ts";
import { renderValue } from "../render_value.ts";
import type { DistributionName } from "../distribution.ts";
import { aliasMembers, clusterNodes, indexUuid, observe, writeBlocked } from "./cluster_reads.ts";
import { CopyNotProven, stopCopies } from "./stop_copies.ts";
import {
  fenceOf,
  notedCopies,
  parseSince,
  placeholder,
  refused,
  seconds,
  taskFailure,
  taskStatus,
} from "./reindex_values.ts";

export { taskFailure };

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
  /** What the cluster is (OpenSearch by default): the swap's parameters are named after it. */
  readonly distribution?: DistributionName;
}

// At most one progress line about the copy in this many milliseconds.
const SAY_EVERY_MS = 5_000;

// A catch-up that copied at most this many documents is short enough to be the last, under the
// block; else another runs while writes go on, up to this many.
const SHORT_CATCH_UP = 2_000;
const CATCH_UPS = 5;

const UNBLOCK = { "index.blocks.write": null };

// OpenSearch 2 renamed master_timeout; Elasticsearch knows only the old name, OpenSearch 3 only
// the new one.
const managerTimeout = (distribution: DistributionName = "opensearch") =>
  distribution === "elasticsearch" ? "master_timeout" : "cluster_manager_timeout";

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
  // Of what is sent, placeholders replaced: other values for them are another reindex.
  const hash = await jsonContentHash({ reindex: spec, body });
  const progressPath = `/${ctx.recordsIndex}/_doc/${
    encodeURIComponent(`reindex-${await recordId(ctx.connection, ctx.file)}`)
  }`;
  return await new Reindex(spec, body, ctx, hash, progressPath).run();
}

/** A decision to run steps. */
type RunDecision = Extract<ReindexDecision, { kind: "run" }>;

/** What the report says of a reindex whatever it did. */
interface Summary {
  source: string;
  index: string;
  alias: string;
  resumed: boolean;
  deletedSource: boolean;
}

/** The source's sequence numbers, as {@linkcode shardSeqNos} reads them. */
type SeqNos = Awaited<ReturnType<typeof shardSeqNos>>;

/**
 * One run of a reindex file: the state its steps share, and one method per step (`#steps` maps
 * each {@linkcode ReindexStep} to its method). `run()` observes, decides, and runs the steps
 * decided in order; a step that fails is told by `#stepFailure`, which rolls back first when the
 * alias has not moved.
 */
class Reindex {
  // What the file asks for: the new index, the alias, the source if named, the script.
  readonly #spec: ReindexSpec;
  // The new index's settings and mappings, which create sends.
  readonly #body: Readonly<Record<string, unknown>>;
  // Where the reindex runs, and what it may tell.
  readonly #ctx: ReindexContext;
  // The checksum of what the file asks for, which the progress notes (see runReindex).
  readonly #hash: string;
  // The progress document's path in the records index, named by the connection and the file.
  readonly #progressPath: string;
  // Aborts the steps' requests: the lock lost, or Ctrl-C.
  readonly #signal: AbortSignal;
  // How long the cluster waits for one node, or for the cluster manager: within half the
  // request's time, so that what a node did not do in time is not still queued when we go on.
  readonly #nodeWaitMs: number;
  // Elasticsearch 7 names the mapping type in a copy's description (stop_copies.ts).
  readonly #typed: boolean;
  // The new index's path.
  readonly #to: string;

  // `METHOD /path` of the last request sent, which a failure names: set by every send.
  #request = "";
  // Sends the steps' requests: aborted by #signal, then only by a lost lock once the alias moved.
  #send: Send;

  // The alias's definition (filter, routing) on each of its indices, read by #observe: the swap
  // keeps the source's.
  #definitions!: Map<string, JsonObject>;
  // The index copied from, set by #begin once decided.
  #source!: string;
  // The source's path, set by #begin.
  #from!: string;
  // The progress of an earlier version of the file, which the `*-earlier` steps undo (#begin).
  #earlier: ReindexProgress | undefined;
  // The progress of a run of this version that stopped halfway, which this one resumes (#begin).
  #resumed: ReindexProgress | undefined;
  // When the reindex began, which the progress notes: the resumed run's start, else #begin's.
  #startedAt!: string;
  // What the report says whatever ran, set by run() once decided; delete-source marks it.
  #summary!: Summary;

  // The new index's `index.uuid`: the resumed run's (#begin), then the one create reads.
  #uuid: string | undefined;
  // The source's sequence numbers right after the block (set by block): the swap checks nothing
  // moved them.
  #fence: string | undefined;
  // The source's sequence numbers once blocked (set by block): the catch-up copies up to them.
  #blockedSeqNos: SeqNos | undefined;
  // Every write to the source up to this sequence number is in the new index (see catch_up.ts):
  // the resumed run's (#begin), moved on by each catch-up, dropped when the copy starts over.
  #since: { uuid: string; seqNo: number } | undefined;
  // The documents of the source the new index holds, once pruned by copy (see catch_up.ts).
  #baseline: Baseline | undefined;
  // The copy this run started and follows, until it ends. A noted task was started for a
  // catch-up whose start this run does not know: not followed.
  #task: string | undefined;
  // Every copy into the new index not proven ended, as the progress notes them: the resumed
  // run's (#begin), then each one started or found running, until proven ended.
  #copies = new Set<string>();
  // Whether the progress document is written: by the resumed run (#begin), else once note ran.
  #noted = false;
  // Whether writes to the source may be blocked: a resumed run's may (#begin), and every step
  // that blocks sets it. Set before the block is asked for: an answer lost on the way back may
  // hide that it landed.
  #mayBeBlocked = false;
  // When writes were blocked (set by copy or block; cleared by a rollback that lifted the
  // block): by an earlier run, when it left its block for this one.
  #blockedAt: number | undefined;
  // The first copy's documents and run time, for the report: set by copy, else by catch-up.
  #firstCopy: { documents: number; ms: number } | undefined;
  // The new index's document count once it matched the source's, for the report: set by verify.
  #documents: number | undefined;
  // How long writes to the source were blocked, for the report: set by unblock.
  #writeBlockedMs: number | undefined;

  // The step each name runs.
  readonly #steps: Record<ReindexStep, () => Promise<void>> = {
    "unblock-earlier": () => this.#unblockEarlier(),
    "forget-earlier": () => this.#forgetEarlier(),
    discard: () => this.#discard(),
    note: () => this.#note(),
    create: () => this.#create(),
    copy: () => this.#copy(),
    block: () => this.#block(),
    "catch-up": () => this.#lastCatchUp(),
    verify: () => this.#verify(),
    swap: () => this.#swap(),
    unblock: () => this.#unblock(),
    "delete-source": () => this.#deleteSource(),
    forget: () => this.#forget(),
  };

  constructor(
    spec: ReindexSpec,
    body: Readonly<Record<string, unknown>>,
    ctx: ReindexContext,
    hash: string,
    progressPath: string,
  ) {
    this.#spec = spec;
    this.#body = body;
    this.#ctx = ctx;
    this.#hash = hash;
    this.#progressPath = progressPath;
    this.#signal = ctx.interrupt ? AbortSignal.any([ctx.lost, ctx.interrupt]) : ctx.lost;
    this.#send = this.#sender(this.#signal);
    this.#nodeWaitMs = Math.max(1_000, Math.floor(ctx.timeoutMs / 2));
    this.#typed = ctx.distribution === "elasticsearch";
    this.#to = `/${encodeURIComponent(spec.index)}`;
  }

  /** Observes, decides, and runs the steps decided: see {@linkcode runReindex}. */
  async run(): Promise<ReindexOutcome> {
    const spec = this.#spec;
    const ctx = this.#ctx;
    const observation = await this.#observe();
    const decision = decideReindex(observation);
    if (decision.kind === "refuse") {
      const released = await this.#release(decision.release);
      throw new MigrationFailure({
        connection: ctx.connection,
        file: ctx.file,
        reason: `reindex not started: ${decision.reason} (${released})`,
      });
    }
    this.#summary = {
      source: decision.kind === "run" ? decision.source : spec.alias,
      index: spec.index,
      alias: spec.alias,
      resumed: decision.kind === "run" && decision.resumed,
      deletedSource: false,
    };
    if (decision.kind === "done") {
      ctx.say(`reindex: alias ${spec.alias} is on ${spec.index} already; nothing to do`);
      return { result: "exists", status: 200, reindex: this.#summary };
    }
    this.#begin(decision, observation.progress);
    await this.#runSteps(decision.steps);
    if (decision.thenRefuse !== undefined) {
      throw new MigrationFailure({
        connection: ctx.connection,
        file: ctx.file,
        reason: `reindex not applied: ${decision.thenRefuse}`,
      });
    }
    return this.#outcome();
  }

  // Reads what the planner needs; a failure changed nothing.
  async #observe(): Promise<ReindexObservation> {
    try {
      const observation = await observe(this.#send, this.#spec, this.#hash, this.#progressPath);
      this.#definitions = observation.definitions;
      return observation;
    } catch (error) {
      if (this.#ctx.lost.aborted) throw error;
      throw this.#failure("observe", error, "nothing was changed");
    }
  }

  // Before a refusal: lets go of what an unfinished run left. Says what it did.
  async #release(release: ReindexProgress | undefined): Promise<string> {
    if (release === undefined) return "nothing was changed";
    // A copy stopped halfway, which this run will not follow: the source takes writes again.
    const { unproven } = await stopCopies(this.#unsignalled(), release.index, {
      recorded: new Set(notedCopies(release)),
      waitMs: this.#nodeWaitMs,
      typed: this.#typed,
    });
    const lifted = await this.#unblockQuietly(release.source);
    return (lifted
      ? `the write block an unfinished run left on ${release.source} was lifted`
      : `the write block an unfinished run left on ${release.source} could not be ` +
        `lifted: PUT /${release.source}/_settings {"index.blocks.write": null}`) +
      (unproven === undefined
        ? ""
        : `; ${unproven}: put ${release.index} to no use until a run proves that ` +
          "copy ended (or the node that may hold it is gone for good)");
  }

  // Takes up what the run starts from: the source decided, and what a resumed run noted.
  #begin(decision: RunDecision, progress: ReindexProgress | undefined): void {
    const { source } = decision;
    this.#source = source;
    this.#from = `/${encodeURIComponent(source)}`;
    this.#earlier = decision.earlier;
    const resumed = decision.resumed ? progress : undefined;
    this.#resumed = resumed;
    this.#uuid = resumed?.uuid;
    this.#since = parseSince(resumed?.since);
    this.#copies = new Set(notedCopies(resumed));
    this.#noted = resumed !== undefined;
    this.#mayBeBlocked = resumed !== undefined;
    if (resumed !== undefined) {
      this.#ctx.say(
        `reindex ${source} -> ${this.#spec.index}: resuming a run that stopped halfway`,
      );
    }
    this.#startedAt = resumed?.started_at ?? new Date().toISOString();
  }

  async #runSteps(steps: readonly ReindexStep[]): Promise<void> {
    const swapAt = steps.indexOf("swap");
    for (const [i, current] of steps.entries()) {
      // Once the alias moved, what is left is quick and only tidies up: Ctrl-C lets it finish.
      if (i > swapAt && swapAt >= 0) this.#send = this.#sender(this.#ctx.lost);
      try {
        await this.#steps[current]();
      } catch (error) {
        throw await this.#stepFailure(current, error, swapAt >= 0 && i > swapAt);
      }
    }
  }

  // What a failed step throws, once what came before the swap is rolled back.
  async #stepFailure(step: ReindexStep, error: unknown, swapped: boolean): Promise<unknown> {
    const spec = this.#spec;
    const source = this.#source;
    if (this.#ctx.lost.aborted) return error; // another runner has the lock now: it finishes the job
    // The request that failed, not one the rollback sent after it.
    const failed = this.#request;
    if (error instanceof SwapUnknown) {
      return this.#failure(
        step,
        error.cause,
        `whether the alias ${spec.alias} moved is unknown (no answer, and it is not on ` +
          `${spec.index} yet): writes to ${source} stay blocked, since a swap still queued ` +
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
    this.#request = failed;
    return this.#failure(step, error, state);
  }

  #outcome(): ReindexOutcome {
    const copy = this.#firstCopy;
    return {
      result: "reindexed",
      status: 200,
      reindex: {
        ...this.#summary,
        ...(this.#documents === undefined ? {} : { documents: this.#documents }),
        ...(copy === undefined ? {} : {
          copyMs: copy.ms,
          documentsPerSecond: copy.ms > 0 ? Math.round(copy.documents / (copy.ms / 1000)) : 0,
        }),
        ...(this.#writeBlockedMs === undefined ? {} : { writeBlockedMs: this.#writeBlockedMs }),
      },
    };
  }

  // The steps, in the order they run (see ReindexStep).

  async #unblockEarlier(): Promise<void> {
    const earlier = this.#earlier!;
    // The earlier run's block is on this run's source: lifted by a rollback if this step fails.
    if (earlier.source === this.#source) this.#mayBeBlocked = true;
    await stopCopies(this.#send, earlier.index, {
      recorded: new Set(notedCopies(earlier)),
      waitMs: this.#nodeWaitMs,
      typed: this.#typed,
      strict: true,
    });
    await this.#send("PUT", `/${encodeURIComponent(earlier.source)}/_settings`, UNBLOCK, {
      ok: [404],
    });
  }

  async #forgetEarlier(): Promise<void> {
    await this.#send("DELETE", this.#progressPath, undefined, { ok: [404] });
  }

  async #discard(): Promise<void> {
    const earlier = this.#earlier!;
    await this.#send("DELETE", `/${encodeURIComponent(earlier.index)}`, undefined, { ok: [404] });
    this.#ctx.say(`reindex: deleted ${earlier.index}, made by an earlier version of the file`);
  }

  async #note(): Promise<void> {
    await this.#send("PUT", this.#progressPath, this.#progressDoc());
    this.#noted = true;
  }

  async #create(): Promise<void> {
    await this.#createIndex();
    this.#ctx.say(`reindex: created ${this.#spec.index}`);
  }

  async #copy(): Promise<void> {
    const spec = this.#spec;
    const source = this.#source;
    const ctx = this.#ctx;
    const { uuid: sourceUuid } = await shardSeqNos(this.#send, source);
    // The source was deleted and made again: what was copied is of another index.
    if (this.#since !== undefined && this.#since.uuid !== sourceUuid) this.#since = undefined;
    // Left blocked by a run that stopped after its block (or whose swap got no answer, which
    // must not land on a source taking writes): it stays blocked, and the copy is made under it.
    if ((await writeBlocked(this.#send, source)).blocked) {
      this.#mayBeBlocked = true;
      const at = Date.parse(this.#resumed?.blocked_at ?? "");
      this.#blockedAt = Number.isNaN(at) ? Date.now() : at;
      ctx.say(
        `reindex: writes to ${source} are blocked already; the copy is made under the block`,
      );
      return;
    }
    if (this.#since === undefined) this.#firstCopy = await this.#catchUp();
    else ctx.say(`reindex ${source} -> ${spec.index}: catching up from a run that stopped`);
    // Each catch-up copies what came while the one before ran: they shrink, as long as the copy
    // is faster than the writes.
    for (let i = 0; i < CATCH_UPS; i++) {
      if ((await this.#catchUp()).documents <= SHORT_CATCH_UP) break;
    }
    await this.#pruneAndCatchUp();
  }

  async #block(): Promise<void> {
    const source = this.#source;
    this.#mayBeBlocked = true;
    const blocked = await this.#send("PUT", `${this.#from}/_block/write`);
    // A block in place already (a resumed run) is acknowledged with no index listed.
    if (!isJsonObject(blocked.body) || blocked.body.acknowledged !== true) {
      throw new StepError(`the block was not acknowledged: ${renderValue(blocked.body, 300)}`);
    }
    if (!(await writeBlocked(this.#send, source)).blocked) {
      throw new StepError(`${source} is not write-blocked after the block was acknowledged`);
    }
    this.#blockedAt ??= Date.now();
    // The last catch-up reads what a refresh made visible: every acknowledged write must be.
    await refresh(this.#send, source);
    this.#blockedSeqNos = await shardSeqNos(this.#send, source);
    this.#fence = fenceOf(this.#blockedSeqNos);
    await this.#note();
    this.#ctx.say(`reindex: writes to ${source} blocked`);
  }

  async #lastCatchUp(): Promise<void> {
    const { uuid: sourceUuid, shards } = this.#blockedSeqNos!;
    const last = await this.#copyDocuments(this.#since?.seqNo);
    this.#firstCopy ??= last;
    this.#since = {
      uuid: sourceUuid,
      seqNo: Math.max(-1, Math.min(...shards.map((s) => s.max))),
    };
    await this.#note();
    // The new index holds every document of the source now, each as it is: what is left is the
    // documents the source deleted since they were copied.
    const { deleted } = this.#baseline === undefined
      ? await prune(this.#send, this.#source, this.#spec.index, Number.MAX_SAFE_INTEGER)
      : await rebase(this.#send, this.#source, this.#spec.index, this.#baseline, Infinity);
    if (deleted > 0) {
      this.#ctx.say(`reindex: deleted ${deleted} document(s) the source no longer holds`);
    }
  }

  async #verify(): Promise<void> {
    const spec = this.#spec;
    const source = this.#source;
    await refresh(this.#send, spec.index);
    const [before, after] = [await this.#count(this.#from), await this.#count(this.#to)];
    if (before !== after) {
      throw new StepError(
        `${source} holds ${before} document(s), ${spec.index} ${after}: the copy is incomplete ` +
          `(a script that drops documents cannot be verified)`,
      );
    }
    this.#documents = after;
    this.#ctx.say(`reindex: ${spec.index} holds all ${after} document(s) of ${source}`);
  }

  async #swap(): Promise<void> {
    const spec = this.#spec;
    const source = this.#source;
    const nodeWaitMs = this.#nodeWaitMs;
    const swapRequest = `POST /_aliases`;
    // Not sent yet: Ctrl-C now rolls back, with nothing queued that could land later.
    if (this.#ctx.interrupt?.aborted) throw new StepError("interrupted before the swap was sent");
    await this.#checkBeforeSwap();
    // The cluster answers within nodeWaitMs: a swap still queued when the client gives up could
    // land after a rollback lifted the block.
    try {
      await this.#send(
        "POST",
        `/_aliases?${
          managerTimeout(this.#ctx.distribution)
        }=${nodeWaitMs}ms&timeout=${nodeWaitMs}ms`,
        {
          actions: [
            // Only from a source that holds the alias (it may be outside it), and without
            // `must_exist`, which Elasticsearch 7.10 refuses to parse: a swap repeated after it
            // landed fails on the remove, and the alias read below shows it moved.
            ...(this.#definitions.has(source)
              ? [{ remove: { index: source, alias: spec.alias } }]
              : []),
            {
              add: {
                // The alias keeps its filter and routing on the new index.
                ...this.#definitions.get(source),
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
      const now = await aliasMembers(this.#sender(), spec.alias).catch(() => undefined);
      this.#request = swapRequest;
      if (now?.members.some((m) => m.index === spec.index && m.write)) return;
      // Only a refusal (4xx) says the swap did not happen; without an answer, or with a 5xx (a
      // proxy's 502, a cluster manager that timed out), it may still be queued and land later.
      if (!refused(error)) throw new SwapUnknown(error);
      throw error;
    }
    this.#ctx.say(`reindex: alias ${spec.alias} moved to ${spec.index}`);
  }

  async #unblock(): Promise<void> {
    await this.#send("PUT", `${this.#from}/_settings`, UNBLOCK, { ok: [404] });
    if (this.#blockedAt !== undefined) this.#writeBlockedMs = Date.now() - this.#blockedAt;
    this.#ctx.say(
      `reindex: writes to ${this.#source} unblocked` +
        (this.#writeBlockedMs === undefined ? "" : ` after ${seconds(this.#writeBlockedMs)}`),
    );
  }

  async #deleteSource(): Promise<void> {
    await this.#send("DELETE", this.#from, undefined, { ok: [404] });
    this.#summary.deletedSource = true;
    this.#ctx.say(`reindex: deleted ${this.#source}`);
  }

  async #forget(): Promise<void> {
    await this.#send("DELETE", this.#progressPath, undefined, { ok: [404] });
  }

  // What the steps do in parts.

  #progressDoc() {
    return {
      source: this.#source,
      index: this.#spec.index,
      alias: this.#spec.alias,
      hash: this.#hash,
      started_at: this.#startedAt,
      connection: this.#ctx.connection,
      file: this.#ctx.file,
      ...(this.#uuid === undefined ? {} : { uuid: this.#uuid }),
      ...(this.#since === undefined ? {} : { since: `${this.#since.uuid}/${this.#since.seqNo}` }),
      ...(this.#blockedAt === undefined
        ? {}
        : { blocked_at: new Date(this.#blockedAt).toISOString() }),
      ...(this.#task === undefined ? {} : { task: this.#task }),
      ...(this.#copies.size === 0 ? {} : { copies: [...this.#copies] }),
    };
  }

  async #createIndex(): Promise<void> {
    const created = await this.#send("PUT", this.#to, this.#body, { ok: [400] });
    // Made by this reindex already: a resumed run (the planner checked its uuid), or an answer
    // lost and the request repeated (this run saw no such index a moment before).
    if (
      created.status === 400 && !errorDetail(created.body).startsWith("resource_already_exists")
    ) {
      throw new StepError(errorDetail(created.body), 400);
    }
    // Made here, empty: what the progress says was copied is not in it (deleted by hand).
    if (created.status !== 400) this.#since = undefined;
    this.#uuid = await indexUuid(this.#send, this.#spec.index);
    await this.#note();
  }

  // Documents deleted from the source since they were copied: found here, reading both
  // indices whole, then after each catch-up from what changed, so that under the block only
  // what changed since the last one needs looking at.
  async #pruneAndCatchUp(): Promise<void> {
    const spec = this.#spec;
    const source = this.#source;
    const pruned = await prune(this.#send, source, spec.index, this.#since!.seqNo);
    this.#baseline = pruned.baseline;
    let deleted = pruned.deleted;
    for (let i = 0; i < CATCH_UPS; i++) {
      const copied = (await this.#catchUp()).documents;
      const rebased = await rebase(
        this.#send,
        source,
        spec.index,
        this.#baseline,
        this.#since!.seqNo,
      );
      deleted += rebased.deleted;
      if (copied + rebased.looked <= SHORT_CATCH_UP) break;
    }
    // Sorted now, while writes go on: the rebase under the block reads it sorted.
    listingsOf(this.#baseline);
    if (deleted > 0) {
      this.#ctx.say(
        `reindex: deleted ${deleted} document(s) from ${spec.index} the source no longer holds`,
      );
    }
  }

  // Last thing before the swap: no copy may still write into the new index, and the source took
  // no write since the block.
  async #checkBeforeSwap(): Promise<void> {
    const source = this.#source;
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
    if (last !== this.#fence) {
      throw new StepError(
        `${source} took writes under the block (its sequence numbers moved from ${this.#fence} to ` +
          `${last}); the alias was not moved, and the next run catches up with them`,
      );
    }
  }

  // Stops every copy into the new index but the one this run follows, and proves each copy noted
  // so far ended; the progress keeps those it cannot prove, for the swap and the next run to see.
  // Returns the nodes that answered the list proving it.
  async #stopOthers(keep?: string): Promise<readonly string[]> {
    const before = [...this.#copies].join();
    try {
      const { members } = await stopCopies(this.#send, this.#spec.index, {
        recorded: this.#copies,
        waitMs: this.#nodeWaitMs,
        typed: this.#typed,
        strict: true,
        ...(keep === undefined ? {} : { keep }),
        remember: () => this.#note(),
      });
      return members;
    } catch (error) {
      if (!(error instanceof CopyNotProven)) throw error;
      throw new CopyNotProven(
        `${error.message}. Run again once that node answers, back in the cluster; if it is ` +
          `gone for good, delete ${this.#spec.index} and the progress document ${this.#progressPath}, and run again ` +
          `(the copy starts over)`,
        { cause: error.cause },
      );
    } finally {
      if (this.#noted && [...this.#copies].join() !== before) await this.#note();
    }
  }

  // Reads the source's checkpoint, refreshes it, and copies every document written after the
  // checkpoint before (all of them, the first time): once done, the new index holds every write
  // up to that checkpoint.
  async #catchUp(): Promise<{ documents: number; ms: number }> {
    const seqNos = await shardSeqNos(this.#send, this.#source);
    await refresh(this.#send, this.#source);
    const done = await this.#copyDocuments(this.#since?.seqNo);
    this.#since = { uuid: seqNos.uuid, seqNo: checkpointOf(seqNos.shards) };
    await this.#note();
    return done;
  }

  // Starts a copy of the documents written after sequence number `after` (all, when undefined),
  // or follows the task started for it, until it ends.
  async #copyDocuments(after?: number): Promise<{ documents: number; ms: number }> {
    const spec = this.#spec;
    const source = this.#source;
    const ctx = this.#ctx;
    // The first wait that times out says where the copy stands; later ones every few seconds.
    let saidAt = 0;
    const wait = ctx.waitMs ?? 1_000;
    for (;;) {
      const task = this.#task ?? await this.#startCopy(after);
      // The cluster answers as soon as the task ends, or after `wait` with a timeout error.
      const path = `/_tasks/${encodeURIComponent(task)}`;
      const waited = await this.#send(
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
        this.#task = undefined;
        continue;
      }
      if (waited.status === 500) {
        if (!errorDetail(waited.body).startsWith("timeout_exception")) {
          throw new StepError(errorDetail(waited.body), 500);
        }
        if (Date.now() - saidAt >= SAY_EVERY_MS) {
          saidAt = Date.now();
          await this.#sayProgress(path);
        }
        continue;
      }
      const answer = isJsonObject(waited.body) ? waited.body : {};
      const failed = taskFailure(answer);
      if (failed !== undefined) throw new StepError(failed);
      const { done, ms } = taskStatus(answer);
      this.#copies.delete(task);
      this.#task = undefined;
      await this.#note();
      if (after !== undefined) {
        ctx.say(
          `reindex ${source} -> ${spec.index}: caught up with ${done} document(s) written since ` +
            `sequence number ${after}`,
        );
      }
      return { documents: done, ms };
    }
  }

  // Starts the `_reindex` task of a copy (see #copyDocuments), noted before and once started.
  // Returns its id.
  async #startCopy(after: number | undefined): Promise<string> {
    const spec = this.#spec;
    const source = this.#source;
    const copies = this.#copies;
    // A copy that is gone may have been restarted by nobody; one still going is stopped.
    // A start that gets no answer may have started a copy on the node that took it, which
    // may hang and leave the cluster before anyone lists it: noted, before it is sent, as a
    // copy on any node, until a start is answered. Any node: those that answered the list,
    // and those the cluster manager counts (a node joining is applied node by node, so the
    // node that coordinated the list may not know it yet).
    const members = new Set([...await this.#stopOthers(), ...await clusterNodes(this.#send)]);
    let unknown = placeholder(members);
    copies.add(unknown);
    await this.#note();
    // Not repeatable: sent twice, two copies would run, one of them followed by nobody.
    const started = await this.#send("POST", "/_reindex?wait_for_completion=false", {
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
      const now = await clusterNodes(this.#send).catch(() => []);
      const wider = placeholder(new Set([...members, ...now]));
      if (wider !== unknown) {
        copies.delete(unknown);
        copies.add(unknown = wider);
        await this.#note().catch(() => {});
      }
      throw error;
    });
    const id = isJsonObject(started.body) ? started.body.task : undefined;
    if (typeof id !== "string") throw new StepError("_reindex answered without a task id");
    this.#task = id;
    copies.add(id);
    copies.delete(unknown);
    // Kept before waiting: a runner killed now finds the task instead of starting another.
    await this.#note();
    // A catch-up says what it copied once done, in one line.
    if (after === undefined) {
      this.#ctx.say(`reindex ${source} -> ${spec.index}: copying (task ${id})`);
    }
    return id;
  }

  // A line on where the copy stands, from its task's status.
  async #sayProgress(path: string): Promise<void> {
    const status = await this.#send("GET", path, undefined, { ok: [404] });
    const { counts, done, ms } = taskStatus(status.body);
    const total = typeof counts.total === "number" ? counts.total : 0;
    this.#ctx.say(
      `reindex ${this.#source} -> ${this.#spec.index}: ${done} of ${total} document(s)` +
        (total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : "") +
        (ms > 0 ? `, ${Math.round(done / (ms / 1000))}/s` : ""),
    );
  }

  async #count(index: string): Promise<number> {
    const response = await this.#send("GET", `${index}/_count`);
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
  async #rollBack(said: boolean): Promise<string> {
    const { unproven } = await stopCopies(this.#unsignalled(), this.#spec.index, {
      recorded: this.#copies,
      waitMs: this.#nodeWaitMs,
      typed: this.#typed,
    });
    this.#task = undefined;
    // Before the block is lifted: the next run must not follow a copy that ended. What was copied
    // stays noted: the next run catches up from there.
    if (this.#noted) await this.#quiet("PUT", this.#progressPath, this.#progressDoc());
    const left = unproven === undefined || said
      ? ""
      : `; ${unproven}: the alias moves only once it is`;
    if (!this.#mayBeBlocked) return "writes to it were not blocked" + left;
    const lifted = await this.#unblockQuietly(this.#source);
    if (lifted && this.#blockedAt !== undefined) {
      this.#blockedAt = undefined;
      if (this.#noted) await this.#quiet("PUT", this.#progressPath, this.#progressDoc());
    }
    return (lifted
      ? "writes to it are unblocked"
      : `the write block on ${this.#source} could not be lifted (the next run lifts it; or ` +
        `PUT /${this.#source}/_settings {"index.blocks.write": null})`) + left;
  }

  // Requests, and how a failure is told.

  // Sends one request of a step; `ok` lists the statuses that count as done besides 2xx.
  #sender(signal?: AbortSignal): Send {
    return async (method, path, body, options = {}) => {
      this.#request = `${method} ${path.split("?", 1)[0]}`;
      const response = await this.#ctx.client.send(method, path, body, {
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
  }

  #unsignalled(): Send {
    return this.#sender();
  }

  // Cleaning up runs after Ctrl-C too, and never throws: it says what it could not do.
  #quiet(method: string, path: string, body?: unknown): Promise<SearchResponse | undefined> {
    return this.#ctx.client.send(method, path, body, { repeatable: true }).catch(() => undefined);
  }

  async #unblockQuietly(index: string): Promise<boolean> {
    const lifted = await this.#quiet("PUT", `/${encodeURIComponent(index)}/_settings`, UNBLOCK);
    return lifted !== undefined && (lifted.status < 300 || lifted.status === 404);
  }

  #failure(step: string, error: unknown, state: string): unknown {
    const ctx = this.#ctx;
    const request = this.#request;
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
  }
}

/** The swap got no answer, and the alias has not moved (yet). */
class SwapUnknown extends Error {
  constructor(cause: unknown) {
    super("the swap got no answer", { cause });
    this.name = "SwapUnknown";
  }
}
