import { ConfigError } from "../config/config_error.ts";
import type { EnvLookup } from "../config/env.ts";
import type { CommandLine } from "./command_line.ts";
import { ExitCode } from "./exit_code.ts";
import { MigrationFileError } from "./migration_error.ts";
import { MissingPackageError } from "../runtime/optional_module.ts";
import { PlanError } from "./plan_error.ts";
import type {
  ConnectionReport,
  ErrorKind,
  FileReport,
  Progress,
  RunError,
  RunReport,
} from "./run_report.ts";
import type { RunnerIdentity } from "./runner_identity.ts";
import { runSearchMigrations } from "./search/search_runner.ts";
import type { TransportFactory } from "./search/transport.ts";
import { runSqlMigrations } from "./sql/sql_runner.ts";

/**
 * One run of either runner: a parsed command line (the CLI's, or the one `migrate.ts` builds from
 * its options) and what it runs in.
 */
export interface MigrationRequest {
  readonly line: Omit<CommandLine, "help" | "json">;
  readonly env: EnvLookup;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: RunnerIdentity;
  readonly progress: Progress;
  readonly transport?: TransportFactory;
  readonly signal?: AbortSignal;
  /** Where relative SQLite paths start; the working directory by default. */
  readonly cwd?: string;
}

const EXIT: Record<ErrorKind, number> = {
  usage: ExitCode.usage,
  config: ExitCode.usage,
  plan: ExitCode.failed,
  failure: ExitCode.failed,
  invalid: ExitCode.failed,
  interrupted: ExitCode.failed,
  lock: ExitCode.locked,
};

/** The CLI's exit code for a report: 0 without an error, else by its kind (1, 2 or 3). */
export function exitCodeOf(report: RunReport): number {
  return report.error ? EXIT[report.error.kind] : ExitCode.ok;
}

/**
 * Runs the migrations a command line asks for and returns the one report of every outcome: a
 * user's mistake (configuration, a file that cannot be planned, a failed file, a lock not
 * acquired, `validate` finding changed files) is the report's `error`, never a throw. Anything
 * else is a bug and propagates.
 */
export async function runMigrations(request: MigrationRequest): Promise<RunReport> {
  const started = Date.now();
  const { line } = request;
  let report: RunReport;
  try {
    report = await run(request);
  } catch (error) {
    const stopped = stoppedBefore(error);
    if (stopped === undefined) throw error;
    report = {
      command: line.dryRun ? "dry-run" : line.command,
      connections: [],
      ms: Date.now() - started,
      error: stopped,
    };
  }
  if (line.command === "validate" && report.error === undefined) {
    const invalid = invalidFiles(report);
    if (invalid !== undefined) report.error = invalid;
  }
  return report;
}

function run(request: MigrationRequest): Promise<RunReport> {
  const { line } = request;
  const options = {
    configDir: line.configDir,
    migrationsRoot: line.migrationsRoot,
    command: line.command,
    dryRun: line.dryRun,
    ...(line.strictOrder === undefined ? {} : { strictOrder: line.strictOrder }),
    force: line.force,
    ...(line.drift ? { drift: true } : {}),
    ...(line.connection === undefined ? {} : { connection: line.connection }),
    lockTimeoutMs: line.lockTimeoutMs,
    env: request.env,
    progress: request.progress,
    identity: request.identity,
    ...(request.signal ? { signal: request.signal } : {}),
  };
  return line.mode === "search"
    ? runSearchMigrations({
      ...options,
      ...(request.transport ? { transport: request.transport } : {}),
    })
    : runSqlMigrations({ ...options, ...(request.cwd ? { cwd: request.cwd } : {}) });
}

// The user's mistakes found before anything was sent; anything else is a bug and propagates.
function stoppedBefore(error: unknown): RunError | undefined {
  if (error instanceof ConfigError) return { kind: "config", message: error.message };
  // An optional package a datasource of the configuration needs (a driver) is not installed.
  if (error instanceof MissingPackageError) {
    return {
      kind: "config",
      message: error.message,
      ...(error.connection === undefined ? {} : { connection: error.connection }),
    };
  }
  if (error instanceof PlanError) {
    return {
      kind: "plan",
      message: `${error.message} (nothing was sent)`,
      connection: error.connection,
      ...(error.file === undefined ? {} : { file: error.file }),
    };
  }
  if (error instanceof MigrationFileError) {
    return { kind: "plan", message: `${error.message} (nothing was sent)`, file: error.file };
  }
  return undefined;
}

// `validate` fails on run-once files changed after they ran and, under strict order, on files out
// of order and on two files of one resource, and with `--drift` on resources that differ from
// their files, naming them all, on every connection.
function invalidFiles(report: RunReport): RunError | undefined {
  const found = (
    test: (f: FileReport, c: ConnectionReport) => boolean,
    text: (f: FileReport) => string,
  ) =>
    report.connections.flatMap((c) =>
      c.files.filter((f) => test(f, c)).map((f) => ({
        connection: c.name,
        file: f.path,
        text: `${c.name}: ${text(f)}`,
      }))
    );
  const changed = found((f) => f.action === "changed", (f) => f.path);
  const late = found(
    (f, c) => c.strictOrder === true && f.outOfOrder !== undefined,
    (f) => `${f.path} before ${f.outOfOrder}`,
  );
  const twice = found(
    (f, c) => c.strictOrder === true && f.sameResourceAs !== undefined,
    (f) => `${f.path} and ${f.sameResourceAs}`,
  );
  // `--drift`: each resource that differs from its file, with its first difference.
  const drifted = report.connections.flatMap((c) =>
    (c.drift?.resources ?? []).map((r) => ({
      reapply: r.reapply,
      connection: c.name,
      file: r.file,
      text: `${c.name}: ${r.resource} (${r.differences[0]}${
        r.differences.length > 1 ? `, and ${r.differences.length - 1} more` : ""
      })`,
    }))
  );
  const first = changed[0] ?? late[0] ?? twice[0] ?? drifted[0];
  if (first === undefined) return undefined;
  const list = (items: { text: string }[]) => items.map((i) => i.text).join(", ");
  const why = [
    changed.length > 0 &&
    `run-once files were changed after they ran (${list(changed)}); restore them and put ` +
      `changes in new files, or record them as they are with "repair"`,
    late.length > 0 &&
    `files are out of order under strict order (${list(late)}); rename them to sort after the ` +
      `applied ones`,
    twice.length > 0 &&
    `files define one resource twice under strict order (${
      list(twice)
    }); keep one file per resource`,
    drifted.some((d) => d.reapply) &&
    `the cluster differs from the applied files (${
      list(drifted.filter((d) => d.reapply))
    }); apply the files again with "migrate --drift", or put the change in a new file`,
    drifted.some((d) => !d.reapply) &&
    `the cluster differs from the applied files in what applying them again cannot change (${
      list(drifted.filter((d) => !d.reapply))
    }); each difference says what to do`,
  ].filter(Boolean).join("; ");
  return { kind: "invalid", message: why, connection: first.connection, file: first.file };
}
