import { ConfigError } from "../config/config_error.ts";
import type { EnvLookup } from "../config/env.ts";
import { parseCommandLine, USAGE, UsageError } from "./command_line.ts";
import { ExitCode } from "./exit_code.ts";
import { humanProgress, humanSummary } from "./human_output.ts";
import { MigrationFileError } from "./migration_error.ts";
import { silentProgress } from "./run_report.ts";
import { runSearchMigrations } from "./search/search_runner.ts";
import type { TransportFactory } from "./search/transport.ts";

/** What the CLI talks to: its output streams and the process it runs in. */
export interface CliContext {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: EnvLookup;
  readonly identity: { host: string; pid: number };
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
  if (line.mode === "sql") {
    context.err("error: SQL migrations are not available in this version yet; use -m search");
    return ExitCode.usage;
  }
  const progress = line.json ? silentProgress : humanProgress(context.err);
  try {
    const report = await runSearchMigrations({
      configDir: line.configDir,
      migrationsRoot: line.migrationsRoot,
      command: line.command,
      dryRun: line.dryRun,
      ...(line.connection === undefined ? {} : { connection: line.connection }),
      lockTimeoutMs: line.lockTimeoutMs,
      env: context.env,
      progress,
      identity: context.identity,
      ...(context.transport ? { transport: context.transport } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
    });
    if (line.json) context.out(JSON.stringify(report, null, 2));
    else for (const l of humanSummary(report)) (report.error ? context.err : context.out)(l);
    if (report.error?.kind === "lock") return ExitCode.locked;
    return report.error ? ExitCode.failed : ExitCode.ok;
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
