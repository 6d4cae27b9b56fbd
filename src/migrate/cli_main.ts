import { ConfigError } from "../config/config_error.ts";
import type { EnvLookup } from "../config/env.ts";
import { parseCommandLine, USAGE, UsageError } from "./command_line.ts";
import { ExitCode } from "./exit_code.ts";
import { humanProgress, humanSummary } from "./human_output.ts";
import { MigrationFileError } from "./migration_error.ts";
import { silentProgress } from "./run_report.ts";
import { runSearchMigrations } from "./search/search_runner.ts";
import { runSqlMigrations } from "./sql/sql_runner.ts";
import type { TransportFactory } from "./search/transport.ts";

/** What the CLI talks to: its output streams and the process it runs in. */
export interface CliContext {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: EnvLookup;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: { host: string; pid: number; user?: string };
  readonly transport?: TransportFactory;
  readonly signal?: AbortSignal;
}

/** Runs the command line and returns the exit code; never throws for a user's mistake. */
export async function runCli(args: readonly string[], context: CliContext): Promise<number> {
  let line;
  try {
    line = parseCommandLine(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    context.err(`error: ${error.message}\n\n${USAGE}`);
    return ExitCode.usage;
  }
  if (line.help) {
    context.out(USAGE);
    return ExitCode.ok;
  }
  const options = {
    configDir: line.configDir,
    migrationsRoot: line.migrationsRoot,
    command: line.command,
    dryRun: line.dryRun,
    ...(line.connection === undefined ? {} : { connection: line.connection }),
    lockTimeoutMs: line.lockTimeoutMs,
    env: context.env,
    progress: line.json ? silentProgress : humanProgress(context.err),
    identity: context.identity,
    ...(context.signal ? { signal: context.signal } : {}),
  };
  try {
    const report = line.mode === "search"
      ? await runSearchMigrations({
        ...options,
        ...(context.transport ? { transport: context.transport } : {}),
      })
      : await runSqlMigrations(options);
    const invalid = line.command === "validate" &&
      report.connections.some((c) => c.files.some((f) => f.action === "changed"));
    if (line.json) context.out(JSON.stringify(report, null, 2));
    else {
      for (const l of humanSummary(report)) {
        (report.error || invalid ? context.err : context.out)(l);
      }
      if (invalid) {
        context.err(
          "invalid: applied files were changed; restore them and put changes in new files",
        );
      }
    }
    if (report.error?.kind === "lock") return ExitCode.locked;
    return report.error || invalid ? ExitCode.failed : ExitCode.ok;
  } catch (error) {
    if (error instanceof ConfigError) {
      report(context, line.json, "config", error.message);
      return ExitCode.usage;
    }
    if (error instanceof MigrationFileError) {
      report(context, line.json, "plan", `${error.message} (nothing was sent)`);
      return ExitCode.failed;
    }
    throw error;
  }
}

function report(context: CliContext, json: boolean, kind: string, message: string): void {
  if (json) context.out(JSON.stringify({ error: { kind, message } }, null, 2));
  else context.err(`error: ${message}`);
}
