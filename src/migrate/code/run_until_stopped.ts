import { guardExit } from "./exit_guard.ts";
import { failOnUncaught } from "./uncaught_errors.ts";

/** Seconds a code file may run on after Ctrl-C or SIGTERM, unless the run says otherwise. */
export const DEFAULT_STOP_TIMEOUT_SECONDS = 10;

/** The longest stop timeout a run accepts: an hour. */
export const MAX_STOP_TIMEOUT_SECONDS = 3_600;

/**
 * A code file (or callback) did not settle within the stop timeout of an interruption: it is left
 * behind, and its file fails as interrupted, so that the run can roll back, report and end.
 */
export class CodeAbandoned extends Error {
  constructor(stopTimeoutMs: number, option: string) {
    super(
      `did not stop within ${stopTimeoutMs / 1000} s of the interruption (${option}): it was ` +
        "abandoned; a long loop should check ctx.signal and throw",
    );
    this.name = "CodeAbandoned";
  }
}

/** What ends a code file's run early: the run's interruption, and how long it may run on after it. */
export interface StopRule {
  readonly signal: AbortSignal | undefined;
  readonly stopTimeoutMs: number;
  /** How the caller names the stop timeout: `--stop-timeout`, `stopTimeoutMs`. */
  readonly option: string;
}

/**
 * Runs a code file's function until it settles, calls `process.exit` (refused, with
 * `ExitRefused`) or throws where nobody catches it (a timer, a listener), or, once `rule.signal`
 * aborted (before or while it runs), until `rule.stopTimeoutMs` more passed: then it rejects with {@linkcode CodeAbandoned}.
 * A code file awaiting what never comes must neither hold a run past SIGTERM (Deno and Bun keep a
 * process with a signal listener alive) nor end the process with no report: a promise that waits
 * on nothing leaves Node's event loop empty, and Node exits with 13. The process is kept alive
 * while the code runs, so the only way out is the code settling or this timeout.
 *
 * `run` gets the signal to give the code as `ctx.signal`: it aborts with `rule.signal`, inside the
 * code's guard, so that an exit called by a listener of the code's is refused too. An abandoned
 * code's exit stays refused until that code settles: the run it was part of goes on to roll back
 * and report.
 */
export async function runUntilStopped<T>(
  run: (signal: AbortSignal) => Promise<T>,
  rule: StopRule,
): Promise<T> {
  const alive = setInterval(() => {}, 1 << 30);
  // Told an exit the code called, or an error it threw where nobody catches it (a timer's).
  let exit: ((error: unknown) => void) | undefined;
  const exited = new Promise<never>((_, reject) => (exit = reject));
  // Refused after the race ended (abandoned code): nobody waits for it any more.
  exited.catch(() => {});
  const guard = guardExit(exit!);
  const stopFailing = failOnUncaught(exit!);
  const stop = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let abandon: (() => void) | undefined;
  const abandoned = new Promise<never>((_, reject) => {
    abandon = () => {
      guard.run(() => stop.abort(rule.signal?.reason));
      timer = setTimeout(
        () => reject(new CodeAbandoned(rule.stopTimeoutMs, rule.option)),
        rule.stopTimeoutMs,
      );
    };
  });
  const { signal } = rule;
  if (signal?.aborted) abandon!();
  else signal?.addEventListener("abort", abandon!, { once: true });
  let running: Promise<T>;
  try {
    running = guard.run(() => run(stop.signal));
  } catch (error) {
    running = Promise.reject(error);
  }
  running.then(guard.end, guard.end);
  try {
    return await Promise.race([running, abandoned, exited]);
  } finally {
    clearInterval(alive);
    stopFailing();
    clearTimeout(timer);
    signal?.removeEventListener("abort", abandon!);
  }
}
