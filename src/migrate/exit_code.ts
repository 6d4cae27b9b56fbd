import type { ErrorKind, RunReport } from "./run_report.ts";

/** The CLI's exit codes. */
export const ExitCode = {
  ok: 0,
  /** A migration failed (a request, or a file that cannot be planned). */
  failed: 1,
  /** The command line or the configuration is wrong: nothing was sent. */
  usage: 2,
  /** Another runner held the lock for longer than `--lock-timeout`. */
  locked: 3,
} as const;

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
