import { isJsonObject } from "../json_object.ts";
import { RunInterrupted } from "../interruption.ts";
import { MigrationFailure } from "../migration_failure.ts";
import type { ApplyOutcome } from "./apply_request.ts";
import { recordId } from "./migration_record.ts";
import {
  type AliasMember,
  decideReindex,
  namesToCheck,
  type ReindexProgress,
  type ReindexStep,
} from "./reindex_plan.ts";
import {
  errorDetail,
  type SearchClient,
  type SearchResponse,
  SearchTransportError,
} from "./search_client.ts";
import type { ReindexReport } from "../run_report.ts";
import type { ReindexSpec } from "./search_request.ts";

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
  /** The file's checksum. */
  readonly hash: string;
  /** The records index, where the progress document lives. */
  readonly recordsIndex: string;
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

type Json = Record<string, unknown>;

/**
 * Runs a reindex file: observes the cluster, decides the steps ({@linkcode decideReindex}), and
 * runs them in order. A step that fails before the swap lifts the write block (the alias is still
 * on the source) and cancels the copy; the run stops naming the step. The progress document and
 * the new index stay, so the next run of the same file resumes where this one stopped.
 */
export async function runReindex(
  spec: ReindexSpec,
  body: Readonly<Record<string, unknown>>,
  ctx: ReindexContext,
): Promise<ReindexOutcome> {
  const { client, lost } = ctx;
  const signal = ctx.interrupt ? AbortSignal.any([lost, ctx.interrupt]) : lost;
  const progressPath = `/${ctx.recordsIndex}/_doc/${
    encodeURIComponent(`reindex-${await recordId(ctx.connection, ctx.file)}`)
  }`;
  let request = "";
  // Sends one request; `ok` lists the statuses that count as done besides 2xx.
  const send = async (
    method: string,
    path: string,
    body?: unknown,
    ok: readonly number[] = [],
  ): Promise<SearchResponse> => {
    request = `${method} ${path.split("?", 1)[0]}`;
    // Every request of a reindex is safe to repeat: see the steps in reindex_plan.ts.
    const response = await client.send(method, path, body, { repeatable: true, signal });
    if ((response.status < 200 || response.status >= 300) && !ok.includes(response.status)) {
      throw new StepError(errorDetail(response.body), response.status);
    }
    return response;
  };

  const progress = await readProgress(send, progressPath);
  const members = await aliasMembers(send, spec.alias);
  const found = new Set<string>();
  for (const name of namesToCheck(spec, progress)) {
    const head = await send("HEAD", `/${encodeURIComponent(name)}`, undefined, [404]);
    if (head.status === 200) found.add(name);
  }
  const decision = decideReindex({
    spec,
    hash: ctx.hash,
    ...(progress === undefined ? {} : { progress }),
    members,
    exists: (name) => found.has(name),
  });
  if (decision.kind === "refuse") {
    throw new MigrationFailure({
      connection: ctx.connection,
      file: ctx.file,
      reason: `reindex not started: ${decision.reason} (nothing was changed)`,
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
  const { source, steps } = decision;
  const from = `/${encodeURIComponent(source)}`;
  const to = `/${encodeURIComponent(spec.index)}`;
  let task = decision.resumed ? progress?.task : undefined;
  let blockedAt: number | undefined;
  let copy: { documents: number; ms: number } | undefined;
  let documents: number | undefined;
  let writeBlockedMs: number | undefined;
  if (decision.resumed) {
    ctx.say(`reindex ${source} -> ${spec.index}: resuming a run that stopped halfway`);
  }
  // The progress document as it stands: the task only while it is the copy to follow.
  const progressDoc = () => ({
    source,
    index: spec.index,
    alias: spec.alias,
    hash: ctx.hash,
    started_at: progress?.started_at ?? new Date().toISOString(),
    connection: ctx.connection,
    file: ctx.file,
    ...(task === undefined ? {} : { task }),
  });
  let noted = decision.resumed;
  const note = async () => {
    await send("PUT", progressPath, progressDoc());
    noted = true;
  };
  const unblock = (index: string) =>
    send("PUT", `/${encodeURIComponent(index)}/_settings`, { "index.blocks.write": null }, [404]);

  const run: Record<ReindexStep, () => Promise<void>> = {
    "unblock-earlier": async () => {
      await unblock(decision.earlier!.source);
    },
    discard: async () => {
      await send("DELETE", `/${encodeURIComponent(decision.earlier!.index)}`, undefined, [404]);
      ctx.say(
        `reindex: deleted ${decision.earlier!.index}, made by an earlier version of the file`,
      );
    },
    note: async () => {
      await note();
    },
    create: async () => {
      const created = await send("PUT", to, body, [400]);
      // Made by this reindex already (a resumed run, or an answer lost and the request repeated).
      if (created.status === 400 && !errorDetail(created.body).startsWith("resource_already")) {
        throw new StepError(errorDetail(created.body), 400);
      }
      ctx.say(`reindex: created ${spec.index}`);
    },
    block: async () => {
      await send("PUT", `${from}/_block/write`);
      blockedAt = Date.now();
      // The copy reads what a refresh made visible: every acknowledged write must be.
      await send("POST", `${from}/_refresh`);
      ctx.say(`reindex: writes to ${source} blocked`);
    },
    copy: async () => {
      copy = await copyDocuments();
    },
    verify: async () => {
      await send("POST", `${to}/_refresh`);
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
      try {
        await send("POST", "/_aliases", {
          actions: [
            // must_exist: false makes it safe to repeat, and lets a source outside the alias be.
            { remove: { index: source, alias: spec.alias, must_exist: false } },
            { add: { index: spec.index, alias: spec.alias, is_write_index: true } },
          ],
        });
      } catch (error) {
        if (signal.aborted) throw error;
        // An answer lost on the way back: the alias itself says whether it moved.
        const now = await aliasMembers(send, spec.alias).catch(() => []);
        if (!now.some((m) => m.index === spec.index && m.write)) throw error;
      }
      ctx.say(`reindex: alias ${spec.alias} moved to ${spec.index}`);
    },
    unblock: async () => {
      await unblock(source);
      if (blockedAt !== undefined) writeBlockedMs = Date.now() - blockedAt;
      ctx.say(
        `reindex: writes to ${source} unblocked` +
          (writeBlockedMs === undefined ? "" : ` after ${seconds(writeBlockedMs)}`),
      );
    },
    "delete-source": async () => {
      await send("DELETE", from, undefined, [404]);
      summary.deletedSource = true;
      ctx.say(`reindex: deleted ${source}`);
    },
    forget: async () => {
      await send("DELETE", progressPath, undefined, [404]);
    },
  };

  // Starts the copy, or follows the task an earlier run started, until it ends.
  async function copyDocuments(): Promise<{ documents: number; ms: number }> {
    // The first wait that times out says where the copy stands; later ones every few seconds.
    let saidAt = 0;
    const wait = ctx.waitMs ?? 1_000;
    for (;;) {
      if (task === undefined) {
        const started = await send("POST", "/_reindex?wait_for_completion=false", {
          source: { index: source },
          dest: { index: spec.index, op_type: "create" },
          conflicts: "proceed",
          ...(spec.script === undefined ? {} : { script: spec.script }),
        });
        const id = isJsonObject(started.body) ? started.body.task : undefined;
        if (typeof id !== "string") throw new StepError("_reindex answered without a task id");
        task = id;
        // Kept before waiting: a runner killed now finds the task instead of starting another.
        await note();
        ctx.say(`reindex ${source} -> ${spec.index}: copying (task ${task})`);
      }
      // The cluster answers as soon as the task ends, or after `wait` with a timeout error.
      const path = `/_tasks/${encodeURIComponent(task)}`;
      const waited = await send(
        "GET",
        `${path}?wait_for_completion=true&timeout=${wait}ms`,
        undefined,
        [
          404,
          500,
        ],
      );
      if (waited.status === 404) {
        // The node that ran it restarted, and it stored no result: copy again, skipping what is there.
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
          const { counts, done, ms } = taskStatus((await send("GET", path, undefined, [404])).body);
          const total = typeof counts.total === "number" ? counts.total : 0;
          ctx.say(
            `reindex ${source} -> ${spec.index}: ${done} of ${total} document(s)` +
              (total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : "") +
              (ms > 0 ? `, ${Math.round(done / (ms / 1000))}/s` : ""),
          );
        }
        continue;
      }
      const body = isJsonObject(waited.body) ? waited.body : {};
      const failure = taskFailure(body);
      if (failure !== undefined) throw new StepError(failure);
      const { done, ms } = taskStatus(body);
      return { documents: done, ms };
    }
  }

  async function count(index: string): Promise<number> {
    const response = await send("GET", `${index}/_count`);
    const n = isJsonObject(response.body) ? response.body.count : undefined;
    if (typeof n !== "number") throw new StepError("_count answered without a count");
    return n;
  }

  const swapAt = steps.indexOf("swap");
  for (const [i, current] of steps.entries()) {
    try {
      await run[current]();
    } catch (error) {
      if (lost.aborted) throw error; // another runner has the lock now: it finishes the job
      const swapped = swapAt >= 0 && i > swapAt;
      const undone = swapped ? "" : await rollBack();
      const detail = error instanceof StepError
        ? error.message
        : error instanceof SearchTransportError
        ? error.message
        : ctx.interrupt?.aborted
        ? "interrupted"
        : undefined;
      if (detail === undefined) throw error;
      const state = swapped
        ? `the alias ${spec.alias} is on ${spec.index} already; the next run finishes the rest`
        : `the alias ${spec.alias} stays on ${source}; ${undone}; ${spec.index} and the ` +
          `progress are kept, so the next run resumes (or starts again if the file changed)`;
      const what = {
        connection: ctx.connection,
        file: ctx.file,
        ...(request === "" ? {} : { request }),
        ...(error instanceof StepError && error.status !== undefined
          ? { status: error.status }
          : {}),
        reason: `reindex step ${current}: ${detail}; ${state}`,
      };
      if (ctx.interrupt?.aborted) {
        throw new RunInterrupted(`connection "${ctx.connection}": ${what.reason}`);
      }
      throw new MigrationFailure(what, { cause: error });
    }
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

  // Before the swap: the copy is stopped and the source takes writes again. Says what it did.
  async function rollBack(): Promise<string> {
    // Not signal: the rollback must run after Ctrl-C too.
    const quiet = (method: string, path: string, body?: unknown) =>
      client.send(method, path, body, { repeatable: true }).catch(() => undefined);
    if (task !== undefined) {
      await quiet("POST", `/_tasks/${encodeURIComponent(task)}/_cancel`);
      task = undefined;
    }
    // Before the block is lifted: the source takes writes again, which a copy that ended now
    // lacks, so the next run must copy again, not trust this task.
    if (noted) await quiet("PUT", progressPath, progressDoc());
    const mayBeBlocked = blockedAt !== undefined || decision.kind === "run" && decision.resumed;
    if (!mayBeBlocked) return "writes to it were not blocked";
    const lifted = await quiet("PUT", `${from}/_settings`, { "index.blocks.write": null });
    return lifted !== undefined && lifted.status < 300
      ? "writes to it are unblocked"
      : `the write block on ${source} could not be lifted (the next run lifts it; or ` +
        `PUT /${source}/_settings {"index.blocks.write": null})`;
  }
}

/** A step's request was answered with an error, or with what the step cannot use. */
class StepError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = "StepError";
    if (status !== undefined) this.status = status;
  }
}

async function readProgress(
  send: (m: string, p: string, b?: unknown, ok?: readonly number[]) => Promise<SearchResponse>,
  path: string,
): Promise<ReindexProgress | undefined> {
  const response = await send("GET", path, undefined, [404]);
  const body = isJsonObject(response.body) ? response.body : {};
  if (response.status === 404 || body.found !== true || !isJsonObject(body._source)) {
    return undefined;
  }
  const p = body._source as Json;
  if (
    typeof p.source !== "string" || typeof p.index !== "string" || typeof p.hash !== "string"
  ) {
    throw new StepError(`the progress document ${path} is malformed: delete it by hand`);
  }
  return {
    source: p.source,
    index: p.index,
    alias: typeof p.alias === "string" ? p.alias : "",
    hash: p.hash,
    ...(typeof p.task === "string" ? { task: p.task } : {}),
    started_at: typeof p.started_at === "string" ? p.started_at : "",
  };
}

async function aliasMembers(
  send: (m: string, p: string, b?: unknown, ok?: readonly number[]) => Promise<SearchResponse>,
  alias: string,
): Promise<AliasMember[]> {
  const response = await send("GET", `/_alias/${encodeURIComponent(alias)}`, undefined, [404]);
  if (response.status === 404 || !isJsonObject(response.body)) return [];
  const members: AliasMember[] = [];
  for (const [index, value] of Object.entries(response.body)) {
    const aliases = isJsonObject(value) && isJsonObject(value.aliases) ? value.aliases : {};
    const entry = aliases[alias];
    if (!Object.hasOwn(aliases, alias)) continue;
    members.push({ index, write: isJsonObject(entry) && entry.is_write_index === true });
  }
  return members;
}

// What a `_tasks` answer says of a reindex task: its counts, documents gone through, and run time.
function taskStatus(body: unknown): { counts: Json; done: number; ms: number } {
  const task = isJsonObject(body) && isJsonObject(body.task) ? body.task : {};
  const counts = isJsonObject(task.status) ? task.status : {};
  const ms = typeof task.running_time_in_nanos === "number"
    ? Math.round(task.running_time_in_nanos / 1e6)
    : 0;
  const done = ["created", "updated", "version_conflicts", "noops", "deleted"]
    .reduce((n, k) => n + (typeof counts[k] === "number" ? counts[k] as number : 0), 0);
  return { counts, done, ms };
}

// Why a finished `_reindex` task failed, if it did.
function taskFailure(body: Json): string | undefined {
  if (body.error !== undefined) return errorDetail({ error: body.error });
  const response = isJsonObject(body.response) ? body.response : {};
  const failures = Array.isArray(response.failures) ? response.failures : [];
  if (failures.length === 0) return undefined;
  const first = isJsonObject(failures[0]) ? failures[0] : {};
  const cause = isJsonObject(first.cause) ? errorDetail({ error: first.cause }) : "";
  const id = typeof first.id === "string" ? ` (document ${first.id})` : "";
  return `${failures.length} document(s) could not be copied${id}: ${cause}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
