import type { Command } from "./command_line.ts";
import type { RunnerIdentity } from "./runner_identity.ts";
import { ConfigError } from "../config/config_error.ts";
import { notRun } from "./connection_outcomes.ts";
import type { EnvLookup } from "../config/env.ts";
import { RunInterrupted } from "./interruption.ts";
import { LockNotAcquiredError } from "./lock_not_acquired.ts";
import { MigrationFileError } from "./migration_error.ts";
import { MigrationFailure } from "./migration_failure.ts";
import { PlanError } from "./plan_error.ts";
import { decideFiles, isWork } from "./file_decisions.ts";
import type { PlannedFile } from "./planned_file.ts";
import type {
  ConnectionDrift,
  ConnectionReport,
  FileReport,
  Progress,
  ReindexReport,
  RunError,
  RunReport,
  UnlockOutcome,
} from "./run_report.ts";

export type { PlannedFile };

/** What applying one file did. */
export interface Applied {
  /** `created`, `updated`, `exists`, `sent`, `applied`. */
  readonly result: string;
  readonly ms: number;
  readonly status?: number;
  readonly notice?: string;
  /** Another runner recorded the file first (seen under the file's own lock): nothing was run. */
  readonly alreadyRecorded?: boolean;
  /** A reindex file: what it moved. */
  readonly reindex?: ReindexReport;
}

/**
 * One connection or datasource as the runner drives it. The search and SQL runners implement it;
 * everything else (deciding, locking order, progress, the report, stopping) is shared.
 */
export interface MigrationTarget<F extends PlannedFile> {
  readonly name: string;
  /** `migrations.strict_order`: a pending file that sorts before an applied one is an error. */
  readonly strictOrder: boolean;
  /** Requests or queries sent so far, reads included. */
  readonly requests: number;
  /** The applied files, path to content hash; empty when nothing was recorded yet. */
  readRecords(): Promise<ReadonlyMap<string, string>>;
  /** Creates the records index or table when missing. */
  prepare(): Promise<void>;
  /**
   * Takes the migration lock, waiting up to `timeoutMs`, else throws LockNotAcquiredError; a lock
   * with a lease renews it on its own until {@linkcode MigrationTarget.release}. `signal` (Ctrl-C)
   * ends the wait with a RunInterrupted.
   */
  lock(timeoutMs: number, onWait: (holder: string) => void, signal?: AbortSignal): Promise<void>;
  release(): Promise<void>;
  /**
   * `unlock`: removes a lock left by a runner that died, and says what it removed. A lock whose
   * lease is still renewed is refused (a LockHeldError naming its holder) unless `force`.
   */
  unlock(force: boolean): Promise<UnlockOutcome>;
  /** Runs the file and writes its record; throws a MigrationFailure naming what failed. */
  apply(file: F, executedAt: Date): Promise<Applied>;
  /** Writes the file's record at its checksum without running it (`baseline`, `repair`, renames). */
  record(file: F, executedAt: Date): Promise<void>;
  /** Removes the record of `path` (`repair`, renames); no record is fine. */
  dropRecord(path: string): Promise<void>;
  /**
   * `--drift` (search only): compares what the applied files define (`decided`: the runner's
   * decisions) with the live system. Sends only reads.
   */
  readDrift?(files: readonly F[], decided: readonly FileReport[]): Promise<ConnectionDrift>;
  /**
   * `migrate --drift`, under the lock: applies again the declarative files of `found` whose
   * resources drifted, rewrites their records at the same checksum, and says what still differs.
   * `signal` (Ctrl-C) stops it between two resources.
   */
  repairDrift?(
    files: readonly F[],
    decided: readonly FileReport[],
    found: ConnectionDrift,
    signal?: AbortSignal,
  ): Promise<ConnectionDrift>;
  /** This target's own I/O errors (a refused connection, a rejected login) as a message. */
  failure(error: unknown): string | undefined;
  close(): Promise<void>;
}

/** What either runner is asked to run, as the command line gives it. */
export interface MigrationRunOptions {
  readonly configDir: string;
  readonly migrationsRoot: string;
  readonly command: Command;
  /** Print the plan, send only reads. */
  readonly dryRun?: boolean;
  /** `--strict-order` (true) or `--no-strict-order` (false), over each connection's setting. */
  readonly strictOrder?: boolean;
  /** `--force`: see {@linkcode RunnerOptions.force}. */
  readonly force?: boolean;
  /** `--drift`: see {@linkcode RunnerOptions.drift}. */
  readonly drift?: boolean;
  /** Only this connection (or datasource). */
  readonly connection?: string;
  readonly lockTimeoutMs: number;
  readonly env: EnvLookup;
  readonly progress: Progress;
  /** Who runs, for whoever waits on the lock; SQL records `user@host` as `executed_by`. */
  readonly identity: RunnerIdentity;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
}

/** What the shared runner is asked to do. */
export interface RunnerOptions {
  readonly command: Command;
  /** Print the plan, send only reads. */
  readonly dryRun: boolean;
  /** `--strict-order` (true) or `--no-strict-order` (false), over each connection's setting. */
  readonly strictOrder?: boolean;
  /**
   * `baseline --force`: record the files even where records exist; `repair --force`: also drop
   * missing records that sort after every file here.
   */
  readonly force?: boolean;
  /**
   * `--drift` (`status`, `validate`, `migrate`; targets with `readDrift`): compare the resources
   * of applied files with the live system; `migrate` also applies drifted files again.
   */
  readonly drift?: boolean;
  readonly lockTimeoutMs: number;
  readonly progress: Progress;
  /** Stops the run between two files (Ctrl-C); the lock is still released. */
  readonly signal?: AbortSignal;
}

/** The connections a run selected, and a report entry for each configured one it left out. */
export interface Selection<C> {
  /** The connections to run, in configuration order. */
  readonly selected: C[];
  /** The others, each with its state and reason; the runners add the ones without a folder. */
  readonly skipped: ConnectionReport[];
}

/**
 * Picks the connections to run: all enabled ones, or the one `--connection` names (which must be
 * enabled). Every other configured connection is reported as skipped, with the reason.
 */
export function selectEnabled<C extends { name: string; migrationsEnabled: boolean }>(
  all: readonly C[],
  name: string | undefined,
  kind: string,
): Selection<C> {
  if (name !== undefined) {
    const found = all.find((c) => c.name === name);
    if (found === undefined) {
      throw new ConfigError(
        `--connection ${name}: no such ${kind} (configured: ${all.map((c) => c.name).join(", ")})`,
      );
    }
    if (!found.migrationsEnabled) {
      throw new ConfigError(`--connection ${name}: set migrations.enabled: true on it first`);
    }
  }
  const selected: C[] = [];
  const skipped: ConnectionReport[] = [];
  for (const c of all) {
    if (name !== undefined && c.name !== name) {
      skipped.push(notRun(c.name, "not-selected", `--connection ${name} was given`));
    } else if (!c.migrationsEnabled) {
      skipped.push(notRun(c.name, "disabled", "migrations.enabled is not true"));
    } else selected.push(c);
  }
  return { selected, skipped };
}

/**
 * Runs planned files on their targets, one target after the other: reads the records, decides
 * per file, stops there for `status`, `validate` and `--dry-run`; otherwise creates the records
 * store, takes the lock, reads the records again (another runner may have applied files while
 * this one waited) and applies the pending files in order. The first failure stops the run;
 * every target is closed.
 */
export async function runTargets<F extends PlannedFile>(
  work: readonly { readonly target: MigrationTarget<F>; readonly files: readonly F[] }[],
  options: RunnerOptions,
): Promise<RunReport> {
  const started = Date.now();
  const report: RunReport = {
    command: options.dryRun && options.command === "migrate" ? "dry-run" : options.command,
    ...(options.dryRun ? { dryRun: true as const } : {}),
    connections: [],
    ms: 0,
  };
  let next = 0;
  try {
    for (; next < work.length && !options.signal?.aborted; next++) {
      const { target, files } = work[next];
      const entry: ConnectionReport = {
        name: target.name,
        state: "ran",
        files: [],
        applied: 0,
        skipped: 0,
        requests: 0,
        ms: 0,
      };
      report.connections.push(entry);
      const connectionStarted = Date.now();
      try {
        await runTarget(target, files, entry, options);
      } catch (error) {
        report.error = runError(error, target, options.signal);
        break;
      } finally {
        entry.requests = target.requests;
        entry.ms = Date.now() - connectionStarted;
      }
    }
  } finally {
    await closeAll(work.map((w) => w.target), report.error !== undefined);
  }
  report.ms = Date.now() - started;
  return report;
}

// Every target is closed, even when closing another one fails; the first such error is thrown
// once all are closed, unless the run already stopped for a better reason.
async function closeAll<F extends PlannedFile>(
  targets: readonly MigrationTarget<F>[],
  stopped: boolean,
): Promise<void> {
  const closing = await Promise.allSettled(targets.map((target) => target.close()));
  const failed = closing.find((c): c is PromiseRejectedResult => c.status === "rejected");
  if (failed && !stopped) throw failed.reason;
}

async function runTarget<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const { command } = options;
  if (command === "unlock") {
    const outcome = await target.unlock(options.force === true);
    entry.unlocked = outcome.unlocked;
    if (outcome.note !== undefined) entry.note = outcome.note;
    return;
  }
  const strict = options.strictOrder ?? target.strictOrder;
  if (strict) entry.strictOrder = true;
  const decideAll = (records: ReadonlyMap<string, string>) => {
    entry.files.splice(
      0,
      entry.files.length,
      ...decideFiles(files, records, command, options.force),
    );
    entry.skipped = entry.files.filter((f) => f.action === "skip").length;
    // Before anything is written: the first check needs no lock, the second sees what another
    // runner wrote while this one waited. `validate` reports them with the changed files.
    if (strict && command === "migrate") refuseUnderStrictOrder(target, entry);
    if (command === "baseline" && records.size > 0 && !options.force) {
      throw new PlanError(
        target.name,
        `has ${records.size} record(s) already; baseline adopts a connection without records ` +
          `(--force records the current files over them; "repair" fixes single records)`,
      );
    }
  };
  let records: ReadonlyMap<string, string>;
  try {
    records = await target.readRecords();
  } catch (error) {
    // A listing still shows what this checkout holds, rather than "(no files)": each file, its
    // state unknown; the run fails all the same, with why the records could not be read.
    if (command === "status" || command === "validate") {
      entry.files.push(
        ...files.map((file): FileReport => ({ path: file.path, action: "unknown" })),
      );
    }
    throw error;
  }
  decideAll(records);
  const drift = options.drift === true && target.readDrift !== undefined &&
    (command === "status" || command === "validate" || command === "migrate");
  if (drift) entry.drift = await target.readDrift!(files, entry.files);
  const work = entry.files.filter((f) => isWork(command, f.action));
  // `migrate --drift` takes the lock for drifted files too, even with nothing pending.
  const repair = drift && command === "migrate" && !options.dryRun &&
    target.repairDrift !== undefined && entry.drift!.resources.some((r) => r.reapply);
  if (options.dryRun || (work.length === 0 && !repair)) {
    if (command === "migrate") warn(target, entry, options.progress);
    return;
  }
  await target.prepare();
  await target.lock(
    options.lockTimeoutMs,
    (holder) => options.progress.notice(`${target.name}: waiting for the lock of ${holder}`),
    options.signal,
  );
  let done = false;
  try {
    decideAll(await target.readRecords());
    if (command === "migrate") warn(target, entry, options.progress);
    // Decided again under the lock: another runner may have changed the records meanwhile.
    const pending = entry.files.some((f) => isWork(command, f.action));
    if (pending || !repair) await run(target, files, entry, options);
    if (drift && command === "migrate") await repairDrift(target, files, entry, options);
    done = true;
  } finally {
    // A failing release must not hide why the run stopped.
    await target.release().catch((error) => {
      if (done) throw error;
    });
  }
}

/**
 * `migrate --drift`, under the lock, once the pending files ran: compares again (the files just
 * applied, and another runner, may have changed what is live), then applies again the files whose
 * resources drifted.
 */
async function repairDrift<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const found = await target.readDrift!(files, entry.files);
  entry.drift = found;
  if (!found.resources.some((r) => r.reapply) || target.repairDrift === undefined) return;
  entry.drift = await target.repairDrift(files, entry.files, found, options.signal);
  for (const r of entry.drift.resources) {
    if (r.result === undefined) continue;
    options.progress.notice(
      `${target.name}: ${r.resource} had drifted: ${r.file} ${
        r.result === "reapplied" ? "applied again" : "refused by the cluster"
      }${r.remaining?.length ? `; ${r.remaining.length} difference(s) remain` : ""}`,
    );
  }
}

/** Says when the applied file a late one sorts before is recorded but not in this checkout. */
function elsewhere(entry: ConnectionReport, late: FileReport): string {
  return entry.files.some((f) => f.path === late.outOfOrder && f.action !== "missing")
    ? ""
    : " (recorded, not in this checkout)";
}

/**
 * `--strict-order`: the first out-of-order file, or the first file defining a resource an earlier
 * one defines, stops the connection before anything is written.
 */
function refuseUnderStrictOrder<F extends PlannedFile>(
  target: MigrationTarget<F>,
  entry: ConnectionReport,
): void {
  const late = entry.files.filter((f) => f.outOfOrder !== undefined);
  if (late.length > 0) {
    throw new PlanError(
      target.name,
      new MigrationFileError(
        late[0].path,
        `sorts before ${late[0].outOfOrder}, which is applied already${elsewhere(entry, late[0])}` +
          (late.length > 1 ? ` (and ${late.length - 1} more file(s) like it)` : "") +
          `; strict order refuses to apply it out of order (rename it to sort after it, run ` +
          `with --no-strict-order, or set migrations.strict_order: false)`,
      ),
    );
  }
  const twice = entry.files.find((f) => f.sameResourceAs !== undefined);
  if (twice !== undefined) {
    throw new PlanError(
      target.name,
      new MigrationFileError(
        twice.path,
        `${sameResource(twice)}; strict order refuses it (keep one file per resource: delete ` +
          `the older one and run "repair", or run with --no-strict-order)`,
      ),
    );
  }
}

function sameResource(file: FileReport): string {
  const what = file.resource ?? "the same resource";
  return `${file.path} and ${file.sameResourceAs} both define ${what}`;
}

function warn<F extends PlannedFile>(
  target: MigrationTarget<F>,
  entry: ConnectionReport,
  progress: Progress,
): void {
  const note = (text: string) => progress.notice(`${target.name}: ${text}`);
  for (const f of entry.files) {
    if (f.outOfOrder !== undefined) {
      note(
        `${f.path} sorts before ${f.outOfOrder}, which is applied already${elsewhere(entry, f)}; ` +
          `it is applied out of order (--strict-order refuses this)`,
      );
    }
    if (f.sameResourceAs !== undefined) {
      note(
        `${sameResource(f)}: whichever changes is applied again, over the other ` +
          `(--strict-order refuses this)`,
      );
    }
    if (f.action === "changed") {
      note(
        `${f.path} changed after it was applied; it runs once and is not run again (put the ` +
          `change in a new file, or record it with "repair"; "validate" fails until then)`,
      );
    }
    if (f.action === "missing") {
      note(`${f.path} is recorded as applied, but its file is gone ("repair" drops the record)`);
    }
    if (f.action === "rename") {
      note(`${f.path} was renamed from ${f.renamedFrom}: its record moves, nothing is run`);
    }
  }
}

// Runs each file's work, in order: applying it, or writing, moving or dropping its record.
async function run<F extends PlannedFile>(
  target: MigrationTarget<F>,
  files: readonly F[],
  entry: ConnectionReport,
  options: RunnerOptions,
): Promise<void> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const work = entry.files.filter((f) => isWork(options.command, f.action));
  options.progress.start(
    target.name,
    work.length,
    entry.files.length,
    options.command === "migrate" ? "apply" : "record",
  );
  let n = 0;
  for (const report of work) {
    if (options.signal?.aborted) {
      throw new RunInterrupted(
        `connection "${target.name}": interrupted before ${report.path}; it and later files ` +
          `did not run`,
      );
    }
    const file = byPath.get(report.path);
    try {
      if (report.action === "drop") {
        await target.dropRecord(report.path);
        report.result = "dropped";
      } else if (report.action === "record" || report.action === "rename") {
        // The new record first: a run stopped in between leaves both, and the next run reads
        // the file as applied and the old path as missing; nothing runs twice.
        await target.record(file!, new Date());
        if (report.action === "rename") await target.dropRecord(report.renamedFrom!);
        report.result = report.action === "rename" ? "moved" : "recorded";
      } else await applyOne(target, file!, report, entry);
    } catch (error) {
      report.result = "failed";
      throw error;
    }
    options.progress.file(target.name, ++n, work.length, report);
    if (report.notice) options.progress.notice(`${target.name}: ${report.notice}`);
  }
}

async function applyOne<F extends PlannedFile>(
  target: MigrationTarget<F>,
  file: F,
  report: FileReport,
  entry: ConnectionReport,
): Promise<void> {
  const outcome = await target.apply(file, new Date());
  if (outcome.alreadyRecorded) {
    // Another runner applied it meanwhile: it is no longer a pending file, late or not.
    delete report.outOfOrder;
    report.action = "skip";
    entry.skipped++;
  } else entry.applied++;
  report.result = outcome.result;
  report.ms = outcome.ms;
  if (outcome.status !== undefined) report.status = outcome.status;
  if (outcome.notice) report.notice = outcome.notice;
  if (outcome.reindex) report.reindex = outcome.reindex;
}

// Failures of the run are reported; anything else is a bug and propagates.
function runError<F extends PlannedFile>(
  error: unknown,
  target: MigrationTarget<F>,
  signal: AbortSignal | undefined,
): RunError {
  if (error instanceof MigrationFailure) {
    return { kind: "failure", message: error.message, ...error.detail };
  }
  if (error instanceof PlanError) {
    return {
      kind: "plan",
      message: `${error.message} (nothing was written on this connection)`,
      connection: error.connection,
      ...(error.file === undefined ? {} : { file: error.file }),
    };
  }
  if (error instanceof LockNotAcquiredError) {
    return { kind: "lock", message: error.message, connection: target.name };
  }
  if (error instanceof RunInterrupted) {
    return { kind: "interrupted", message: error.message, connection: target.name };
  }
  const message = target.failure(error);
  if (message !== undefined) return { kind: "failure", message, connection: target.name };
  // A driver's own abort error, from a request Ctrl-C cut short.
  if (signal?.aborted) {
    return { kind: "interrupted", message: "interrupted", connection: target.name };
  }
  throw error;
}
