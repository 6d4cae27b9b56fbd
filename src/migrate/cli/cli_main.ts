import type { RunnerIdentity } from "./runner_identity.ts";
import type { EnvLookup } from "../config/env.ts";
import {
  type CommandLine,
  commandNamed,
  jsonRequested,
  parseCommandLine,
  USAGE,
  UsageError,
} from "./command_line.ts";
import { ExitCode } from "./exit_code.ts";
import { humanProgress, humanSummary } from "./human_output.ts";
import { type RunReport, silentProgress } from "./run_report.ts";
import { exitCodeOf, runMigrations } from "./run_migrations.ts";
import type { TransportFactory } from "./search/transport.ts";

/** What the CLI talks to: its output streams and the process it runs in. */
export interface CliContext {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: EnvLookup;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: RunnerIdentity;
  readonly transport?: TransportFactory;
  readonly signal?: AbortSignal;
}

/**
 * Runs the command line and returns the exit code; never throws for a user's mistake. Every
 * outcome ends in one {@linkcode RunReport}: with `--json` (seen in the raw arguments, so even a
 * refused command line) it is printed on stdout, else as lines for a person.
 */
export async function runCli(args: readonly string[], context: CliContext): Promise<number> {
  const started = Date.now();
  let line: CommandLine;
  try {
    line = parseCommandLine(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (!jsonRequested(args)) {
      context.err(`error: ${error.message}\n\n${USAGE}`);
      return ExitCode.usage;
    }
    return print(context, true, {
      command: commandNamed(args) ?? null,
      connections: [],
      ms: Date.now() - started,
      error: { kind: "usage", message: error.message },
    });
  }
  if (line.help) {
    context.out(USAGE);
    return ExitCode.ok;
  }
  const report = await runMigrations({
    line,
    env: context.env,
    identity: context.identity,
    progress: line.json ? silentProgress : humanProgress(context.err),
    ...(context.transport ? { transport: context.transport } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
  });
  return print(context, line.json, report);
}

function print(context: CliContext, json: boolean, report: RunReport): number {
  if (json) context.out(JSON.stringify(report, null, 2));
  else {
    for (const l of humanSummary(report)) (report.error ? context.err : context.out)(l);
  }
  return exitCodeOf(report);
}
