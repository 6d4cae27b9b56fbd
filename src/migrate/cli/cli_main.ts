import type { RunnerIdentity } from "../runner_identity.ts";
import type { EnvLookup } from "../../config/env.ts";
import {
  type CommandLine,
  commandNamed,
  jsonRequested,
  parseCommandLine,
  USAGE,
} from "./command_line.ts";
import { isMigrationError } from "../migration_error.ts";
import type { MigrationDriver, MigrationMode } from "../driver.ts";
import { builtInDriver } from "../drivers.ts";
import { runMigrations } from "../engine.ts";
import { ExitCode, exitCodeOf } from "../exit_code.ts";
import { humanProgress, humanSummary } from "../human_output.ts";
import { type RunReport, silentProgress } from "../run_report.ts";

/** What the CLI talks to: its output streams and the process it runs in. */
export interface CliContext {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: EnvLookup;
  /** Who runs: shown to runners waiting for the lock; SQL records `user@host` as executed_by. */
  readonly identity: RunnerIdentity;
  /** A driver to use instead of the built-in one of its mode (tests record its requests). */
  readonly drivers?: Partial<Record<MigrationMode, MigrationDriver>>;
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
    if (!isMigrationError(error, "usage")) throw error;
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
  const driver = context.drivers?.[line.mode] ?? await builtInDriver(line.mode);
  const report = await runMigrations(line, driver, {
    env: context.env,
    identity: context.identity,
    progress: line.json ? silentProgress : humanProgress(context.err),
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
