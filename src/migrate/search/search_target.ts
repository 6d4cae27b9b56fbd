import { VERSION } from "../../version.ts";
import {
  type Applied,
  AppliedThenFailed,
  type ApplyAlso,
  type CallbackRun,
  type DriftInspection,
  type FileRecord,
  type MigrationTarget,
  recordedBy,
  TargetIo,
} from "../driver.ts";
import type { RequestCounter } from "../request_counter.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import { MigrationFailure } from "../migration_error.ts";
import { type Progress, silentProgress, type UnlockOutcome } from "../run_report.ts";
import { type ApplyOutcome, applyRequest, RequestRefused } from "./apply_request.ts";
import { clusterFoundNothing } from "./found_nothing.ts";
import type { Distribution } from "./distribution.ts";
import { readDistribution } from "./cluster_distribution.ts";
import { driftChecks } from "./drift/drift_plan.ts";
import type { Mask } from "../../config/secrets_mask.ts";
import { readDrift as readLiveDrift } from "./drift/live_resources.ts";
import { repairSearchDrift } from "./drift_repair.ts";
import { RecordStore } from "./history/record_store.ts";
import { runReindex } from "./reindex/reindex.ts";
import { runReindexUndo } from "./reindex/reindex_undo.ts";
import type { ReindexContext } from "./reindex/reindex_setup.ts";
import type { MovedOff } from "./reindex/run_plan.ts";
import { recordedIndexRefusal, type RefusalReads } from "./recorded_index_refusal.ts";
import { movedOffOf, type RecordOf, recordOf } from "./applied_record.ts";
import { joinNotices, noticeOf } from "./joined_notices.ts";
import { type FailureSite, holdingLock, lockLost, requestFailure } from "./target_failure.ts";
import { searchReportMask } from "./search_report_mask.ts";
import { downRecordPath } from "../plan/undo_name.ts";
import { SearchClient, SearchTransportError } from "./http/search_client.ts";
import type { SearchConnection } from "./search_connection.ts";
import { describeHolder, SearchLock } from "./history/search_lock.ts";
import type { Transport } from "./http/transport.ts";
import type { RunnerIdentity } from "../runner_identity.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { SearchFile, SearchPlannedFile } from "./search_file.ts";
import { type CodeFile, isCodeFile } from "../code/code_file.ts";
import { codeFailure } from "../code/code_failure.ts";
import { CodeLoadError, loadCode, loadDown } from "../code/load_code.ts";
import type { CodeMigration } from "../code/code_context.ts";
import { DEFAULT_STOP_TIMEOUT_SECONDS, runUntilStopped } from "../code/run_until_stopped.ts";
import { migrationContext } from "../code/migration_context.ts";
import { searchContext } from "./search_code_context.ts";
import type { CallbackEvent } from "../plan/callback_name.ts";
import type { EachFileCallbacks, PlannedCallback } from "../plan/planned_callback.ts";
import { definedFields } from "../../defined_fields.ts";

/**
 * One search connection for the engine: records index, lock document, requests. A transport
 * error (no host answered) is thrown as a MigrationFailure with its message, and every request is
 * counted in the run's request counter.
 */
export class SearchTarget implements MigrationTarget<SearchPlannedFile> {
  readonly name: string;
  readonly #client: SearchClient;
  readonly #store: RecordStore;
  readonly #lock: SearchLock;
  readonly #transport: Transport;
  readonly #mask: Mask;
  readonly #failures: FailureSite;
  readonly #io: TargetIo;
  readonly #recordsIndex: string;
  readonly #timeoutMs: number;
  readonly #progress: Progress;
  readonly #interrupt: AbortSignal | undefined;
  readonly #stopTimeoutMs: number;
  // Who each record names as its writer: `user@host`, as in the SQL records.
  readonly #executedBy: string;
  readonly #optionNames: OptionNames;
  readonly #placeholders: SearchConnection["placeholders"];
  #cluster: Promise<Distribution> | undefined;

  /**
   * @param options `progress` hears the steps of a long file (a reindex); `signal` (Ctrl-C) stops
   * one midway, undoing what must not stay (a write block); `clock` is the lock's (the system's
   * by default); `requests` counts the requests sent (a run's; none by default); `optionNames`
   * names the options in messages (the command line's by default)
   */
  constructor(
    connection: SearchConnection,
    transport: Transport,
    identity: RunnerIdentity,
    options: {
      progress?: Progress;
      signal?: AbortSignal;
      stopTimeoutMs?: number;
      clock?: Clock;
      requests?: RequestCounter;
      optionNames?: OptionNames;
    } = {},
  ) {
    this.#optionNames = options.optionNames ?? COMMAND_LINE_NAMES;
    this.name = connection.name;
    this.#recordsIndex = connection.recordsIndex;
    this.#placeholders = connection.placeholders;
    this.#timeoutMs = connection.timeoutMs;
    this.#progress = options.progress ?? silentProgress;
    this.#interrupt = options.signal;
    this.#stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_SECONDS * 1000;
    this.#executedBy = recordedBy(identity);
    this.#transport = transport;
    const client = new SearchClient(connection, transport);
    this.#client = client;
    this.#mask = searchReportMask(connection, client.credentialsMask);
    this.#failures = { connection: connection.name, mask: this.#mask };
    this.#io = new TargetIo(
      connection.name,
      () => client.requests,
      options.requests ?? { count() {} },
      (error): error is SearchTransportError => error instanceof SearchTransportError,
    );
    this.#store = new RecordStore(
      this.#client,
      connection.recordsIndex,
      connection.name,
      connection.timeoutMs,
    );
    this.#lock = new SearchLock(
      this.#client,
      connection.recordsIndex,
      connection.name,
      identity,
      connection.lockLeaseMs,
      options.clock,
      this.#optionNames,
    );
  }

  // What the cluster is, read from `GET /` once, by the first file that needs to know (a
  // reindex); a read that failed is not kept, so the next file asks again.
  #distribution(file: SearchFile): Promise<Distribution> {
    if (this.#cluster === undefined) {
      const read = readDistribution(this.#client, this.name, file);
      read.catch(() => {
        if (this.#cluster === read) this.#cluster = undefined;
      });
      this.#cluster = read;
    }
    return this.#cluster;
  }

  // What the undo plan's check reads with.
  #reads(): RefusalReads {
    return { client: this.#client, store: this.#store, connection: this.name, mask: this.#mask };
  }

  readRecords(): Promise<ReadonlyMap<string, FileRecord>> {
    return this.#io.run(() => this.#store.readFileRecords());
  }

  // The records index is created (or brought up to date) first, when missing: the lock document
  // lives in it.
  lock(timeoutMs: number, onWait: (holder: string) => void, signal?: AbortSignal): Promise<void> {
    return this.#io.run(async () => {
      await this.#store.ensureIndex();
      await this.#lock.acquire(timeoutMs, (holder) => onWait(describeHolder(holder)), signal);
      // The records are read again next: a runner that died may have written some unrefreshed.
      await this.#store.refresh();
    });
  }

  release(): Promise<void> {
    return this.#io.run(async () => {
      // Records first: a runner waiting for the lock reads them as soon as it has it.
      await this.#store.publish();
      await this.#lock.release();
    });
  }

  unlock(force: boolean): Promise<UnlockOutcome> {
    return this.#io.run(async () => {
      const holder = await this.#lock.remove(force);
      if (holder === undefined) return { unlocked: "nothing" };
      // The documented fields only: the report keeps its shape whatever else the document holds.
      const { owner, host, pid, acquired_at, expires_at } = holder;
      return { unlocked: { owner, host, pid, acquired_at, expires_at } };
    });
  }

  // A version undone and applied again loses its undo records once its request was sent, before
  // its own record is rewritten: a runner killed between the two leaves the record it had, and the
  // version applied, as it is (written the other way round, it would read undone, and the next run
  // would send it twice). Files since renamed (other paths of its version) are in `undoRecords`
  // too: their version reads pending then, as when no record was written.
  apply(
    file: SearchPlannedFile,
    executedAt: Date,
    { around = NO_CALLBACKS, undoRecords = [] }: ApplyAlso<SearchPlannedFile> = {},
  ): Promise<Applied> {
    return this.#io.run(() =>
      this.#around(file.path, false, around, async () => {
        const sent: Applied & { readonly movedOff?: MovedOff } = isCodeFile(file)
          ? await this.#applyCode(file, file.path, () => loadCode(file))
          : await this.#apply(file, file.path, this.#send(file, file.path));
        const { movedOff, ...applied } = sent;
        for (const path of undoRecords) await this.#store.remove(path);
        await this.#write(recordOf(file), executedAt, applied.ms, movedOff);
        return applied;
      })
    );
  }

  // The undo file (or a code file's `down`) is sent in place of the file, and its record marks the
  // version undone; the file's own record stays, as history. No transaction: what a failed undo
  // sent stays, and the version is not recorded undone.
  undo(
    file: SearchPlannedFile,
    undo: SearchPlannedFile | "down",
    executedAt: Date,
    around: EachFileCallbacks<SearchPlannedFile> = NO_CALLBACKS,
  ): Promise<Applied> {
    return this.#io.run(() =>
      this.#around(file.path, true, around, async () => {
        let applied: Applied;
        let record: RecordOf;
        if (undo === "down") {
          record = {
            path: downRecordPath(file.path),
            hash: file.hash,
            method: "CODE",
            at: file.path,
          };
          applied = await this.#applyCode(file as CodeFile, record.path, async () => {
            const down = await loadDown(file as CodeFile);
            // The plan checked it (checkUndoCode); a module changed since may have dropped it.
            if (down === undefined) throw new CodeLoadError("exports no down function any more");
            return down;
          });
        } else {
          record = recordOf(undo);
          applied = isCodeFile(undo)
            ? await this.#applyCode(undo, undo.path, () => loadCode(undo))
            : await this.#apply(undo, undo.path, this.#sendUndo(file, undo));
        }
        await this.#write(record, executedAt, applied.ms);
        return { ...applied, result: "undone" };
      })
    );
  }

  // Runs `work` between the callbacks of its file: no transaction holds them together, so what ran
  // stays, and a failure says so.
  async #around(
    path: string,
    undoing: boolean,
    around: EachFileCallbacks<SearchPlannedFile>,
    work: () => Promise<Applied>,
  ): Promise<Applied> {
    const notices: (string | undefined)[] = [];
    for (const callback of around.before) {
      const left = undoing ? `; ${path} was not undone` : `; ${path} did not run`;
      notices.push((await this.#runCallback(callback, left)).notice);
    }
    const applied = await work();
    notices.push(applied.notice);
    const withNotices = (): Applied => {
      const notice = joinNotices(notices);
      return { ...applied, ...(notice === undefined ? {} : { notice }) };
    };
    const done = undoing ? `; ${path} was undone, and is recorded so` : `; ${path} ran and is ` +
      "recorded";
    for (const [ran, callback] of around.after.entries()) {
      try {
        notices.push((await this.#runCallback(callback, done)).notice);
      } catch (error) {
        throw new AppliedThenFailed(withNotices(), ran, error);
      }
    }
    return withNotices();
  }

  runCallback(callback: PlannedCallback<SearchPlannedFile>): Promise<CallbackRun> {
    return this.#io.run(() => this.#runCallback(callback, ""));
  }

  // Sent as its file would be, with no record: a callback runs at each of its events.
  async #runCallback(
    { event, path, file }: PlannedCallback<SearchPlannedFile>,
    left: string,
  ): Promise<CallbackRun> {
    const started = Date.now();
    const lost = this.#lock.lost;
    const site = { callback: event, after: left };
    if (isCodeFile(file)) {
      const notices = await this.#runCode(file, path, lost, site);
      return { ms: Date.now() - started, ...noticeOf(notices) };
    }
    try {
      const outcome = await applyRequest(
        this.#client,
        file.searchRequest,
        { connection: this.name, file: path },
        lost,
        this.#optionNames,
      );
      return {
        ms: Date.now() - started,
        ...(outcome.notice === undefined ? {} : { notice: this.#mask(outcome.notice) }),
      };
    } catch (error) {
      throw requestFailure(this.#failures, error, file, path, site);
    }
  }

  // Recorded as a JSON file is: once its code returned, and only while the lock is held.
  async #applyCode(
    file: CodeFile,
    path: string,
    load: () => Promise<CodeMigration<never>>,
  ): Promise<Applied> {
    const started = Date.now();
    const lost = this.#lock.lost;
    let notices;
    try {
      notices = await this.#runCode(file, path, lost, {}, load);
    } catch (error) {
      if (lost.aborted) throw lockLost(this.#failures, file, path, lost.reason);
      throw error;
    }
    if (lost.aborted) throw lockLost(this.#failures, file, path, lost.reason);
    return { result: "sent", ms: Date.now() - started, ...noticeOf(notices) };
  }

  // Runs a code file's function on this connection's client; what its requests left to say.
  async #runCode(
    file: CodeFile,
    path: string,
    lost: AbortSignal,
    site: { callback?: CallbackEvent; after?: string },
    load: () => Promise<CodeMigration<never>> = () => loadCode(file),
  ): Promise<string[]> {
    const notices: string[] = [];
    let running = true;
    try {
      const run = await load();
      const base = migrationContext({
        connection: this.name,
        path,
        placeholders: this.#placeholders,
        progress: this.#progress,
        mask: this.#mask,
        signal: this.#interrupt,
      });
      const ctx = (signal: AbortSignal) =>
        searchContext({ ...base, signal }, {
          client: this.#client,
          lost,
          optionNames: this.#optionNames,
          notice: (text) => notices.push(this.#mask(text)),
          running: () => running,
        });
      await runUntilStopped(async (signal) => await run(ctx(signal) as never), {
        signal: this.#interrupt,
        stopTimeoutMs: this.#stopTimeoutMs,
        option: this.#optionNames.stopTimeout,
      });
    } catch (error) {
      throw codeFailure(file, error, {
        connection: this.name,
        mask: this.#mask,
        ...site,
        interrupted: this.#interrupt?.aborted === true,
      });
    } finally {
      running = false;
    }
    return notices;
  }

  // What sending a JSON file does: its request, or its reindex.
  #send(file: SearchFile, path: string): (lost: AbortSignal) => Promise<SentOutcome> {
    return async (lost) => {
      const { reindex, body } = file.searchRequest;
      return reindex === undefined
        ? await applyRequest(
          this.#client,
          file.searchRequest,
          { connection: this.name, file: path },
          lost,
          this.#optionNames,
        )
        : await runReindex(reindex, body ?? {}, await this.#reindexContext(file, path, lost));
    };
  }

  // What sending an undo file does: its request, or, undoing a reindex, the reindex back.
  #sendUndo(
    file: SearchPlannedFile,
    undo: SearchFile,
  ): (lost: AbortSignal) => Promise<ApplyOutcome> {
    const back = undo.searchRequest.reindex;
    const forward = isCodeFile(file) ? undefined : file.searchRequest.reindex;
    if (back === undefined || forward === undefined) {
      const send = this.#send(undo, undo.path);
      if (undo.searchRequest.method !== "DELETE") return send;
      // What an undo deletes may be gone already: deleted by the run killed before it recorded
      // the undo, or by hand. Gone is what the undo asks for, when the cluster says so: a 404 of a
      // proxy that never passed the request on says nothing of what the cluster holds.
      // Only the path its V file sent: a 404 elsewhere is more likely a wrong path than a
      // version undone already.
      const made = isCodeFile(file) ? undefined : pathOf(file.searchRequest.path);
      return (lost) =>
        send(lost).catch((error: unknown) => {
          if (!(error instanceof RequestRefused) || !clusterFoundNothing(error.answer)) throw error;
          if (made !== pathOf(undo.searchRequest.path)) {
            throw new MigrationFailure({
              ...error.detail,
              reason: `${error.detail.reason}; a DELETE that finds nothing counts as undone only ` +
                (made === undefined
                  ? `where it deletes what its V file sent, and ${file.path} is code`
                  : `where it deletes what its V file sent, and this is not the path ` +
                    `${file.path} sent (${made})`) +
                `: ${undo.path} is not undone`,
            }, { cause: error });
          }
          return {
            result: "sent",
            status: 404,
            notice: `${undo.path}: ${undo.request} found nothing to delete (404): taken as undone`,
          };
        });
    }
    return async (lost) => {
      const context = await this.#reindexContext(undo, undo.path, lost);
      // Read now, by id: what the reindex's run recorded, under this run's lock.
      const record = await this.#store.read(file.path);
      const movedOff = movedOffOf(record?.previous_index);
      const { movedOff: _, ...outcome } = await runReindexUndo(back, forward, context, {
        file: file.path,
        ...definedFields({ movedOff }),
      });
      return outcome;
    };
  }

  /**
   * A reindex undo of the plan that would go into another index than the one its reindex moved
   * the alias off (see `previousIndexRefusal`), checked for every pair before any runs. An index
   * that is not there yet is left to the undo's own run, which refuses what it finds then.
   */
  undoPlanRefusal(
    pairs: readonly { readonly file: SearchPlannedFile; readonly undo: SearchPlannedFile }[],
  ): Promise<{ readonly path: string; readonly why: string } | undefined> {
    return this.#io.run(async () => {
      for (const { file, undo } of pairs) {
        const forward = isCodeFile(file) ? undefined : file.searchRequest.reindex;
        const back = isCodeFile(undo) ? undefined : undo.searchRequest.reindex;
        if (forward === undefined || back === undefined) continue;
        const why = await recordedIndexRefusal(this.#reads(), file.path, forward, undo.path, back);
        if (why !== undefined) return { path: undo.path, why };
      }
      return undefined;
    });
  }

  async #reindexContext(
    file: SearchFile,
    path: string,
    lost: AbortSignal,
  ): Promise<ReindexContext> {
    return {
      client: this.#client,
      connection: this.name,
      file: path,
      recordsIndex: this.#recordsIndex,
      timeoutMs: this.#timeoutMs,
      lost,
      ...(this.#interrupt === undefined ? {} : { interrupt: this.#interrupt }),
      say: (message) => this.#progress.step(this.name, this.#mask(message)),
      distribution: (await this.#distribution(file)).name,
    };
  }

  // Sends a JSON file; recorded by the caller, only while the lock is held.
  async #apply(
    file: SearchFile,
    path: string,
    send: (lost: AbortSignal) => Promise<SentOutcome>,
  ): Promise<Applied & { readonly movedOff?: MovedOff }> {
    const started = Date.now();
    // Aborts the request in flight when a background renewal finds the lock lost.
    const lost = this.#lock.lost;
    let outcome;
    try {
      outcome = await send(lost);
    } catch (error) {
      if (lost.aborted) throw lockLost(this.#failures, file, path, lost.reason);
      throw requestFailure(this.#failures, error, file, path);
    }
    // Another runner may hold the lock now: recording the file could hide that it ran twice.
    if (lost.aborted) throw lockLost(this.#failures, file, path, lost.reason);
    return { ...outcome, ms: Date.now() - started };
  }

  // A code file's record names no request: `CODE` and its own path say what ran.
  #write(record: RecordOf, executedAt: Date, ms: number, movedOff?: MovedOff): Promise<void> {
    return this.#store.write({
      migration_path: record.path,
      connection: this.name,
      content_hash: record.hash,
      executed_at: executedAt.toISOString(),
      execution_ms: ms,
      request: { method: record.method, path: record.at },
      runner_version: VERSION,
      executed_by: this.#executedBy,
      ...definedFields({ previous_index: movedOff }),
    });
  }

  /**
   * Writes the record of `file` at its current hash without sending its request (baseline,
   * repair, a renamed file): the fields {@linkcode SearchTarget.apply} writes, `execution_ms` 0.
   * Under the lock.
   */
  record(file: SearchPlannedFile, executedAt: Date, from?: string): Promise<void> {
    return this.#io.run(() => this.#record(file, executedAt, from));
  }

  async #record(file: SearchPlannedFile, executedAt: Date, from?: string): Promise<void> {
    holdingLock(this.name, this.#lock.lost, file.path, "recorded");
    // A reindex's record written again (repair) or moved (a rename) keeps the index its run moved
    // the alias off: nothing ran that moved it.
    const reindex = !isCodeFile(file) && file.searchRequest.reindex !== undefined;
    const kept = reindex
      ? movedOffOf((await this.#store.read(from ?? file.path))?.previous_index)
      : undefined;
    await this.#write(recordOf(file), executedAt, 0, kept);
  }

  /** Deletes every record of `path` on this connection, if it has any. Under the lock. */
  dropRecord(path: string): Promise<void> {
    return this.#io.run(async () => {
      holdingLock(this.name, this.#lock.lost, path, "dropped");
      await this.#store.remove(path);
    });
  }

  /** `--drift`: compares the cluster with the applied files, and applies drifted files again. */
  readonly drift: DriftInspection<SearchPlannedFile> = {
    // Sends only reads.
    read: (files, applied) =>
      this.#io.run(() =>
        readLiveDrift(this.#client, driftChecks(files, applied), this.name, this.#mask)
      ),
    // Under the lock: rewrites the records of the files applied again at the same checksum.
    repair: (files, applied, found, signal) =>
      this.#io.run(() =>
        repairSearchDrift(this.#client, files, applied, found, {
          connection: this.name,
          mask: this.#mask,
          lost: this.#lock.lost,
          record: (file) => this.#record(file, new Date()),
        }, signal)
      ),
  };

  close(): Promise<void> {
    this.#transport.close();
    return Promise.resolve();
  }
}

// A request's path without its query: `/logs/_doc/1?refresh=true` deletes `/logs/_doc/1`.
function pathOf(request: string): string {
  const query = request.indexOf("?");
  return query < 0 ? request : request.slice(0, query);
}

const NO_CALLBACKS: EachFileCallbacks<SearchPlannedFile> = { before: [], after: [] };

// What sending a file did: a reindex says which index it moved the alias off, for its record.
type SentOutcome = ApplyOutcome & { readonly movedOff?: MovedOff };
