// One run of a taken job by its handler, whoever took it: a worker that polls its store, or an edge
// runtime's queue event. The payload is read and checked by the handler's schema, the handler is
// called within the run's span, and its lease is kept by a timer that aborts its signal. How the
// run ended is the caller's to record.
import type { FoundHandler, Job } from "./job_handler.ts";
import type { TakenJob } from "./job_store.ts";
import type { JobsTelemetry, ObservedRun } from "./jobs_telemetry.ts";
import type { RunEnd } from "./run_outcome.ts";

/** How a run ended, and what the caller reports with that end. */
export interface RunResult {
  readonly end: RunEnd;
  /** The error the job keeps: why it failed or was refused. */
  readonly error: string | undefined;
  /** What the handler threw, for the span. */
  readonly thrown: unknown;
  /** The run's span and metrics, ended by the caller once it recorded the end. */
  readonly observed: ObservedRun | undefined;
}

/** How a run is watched, beside its handler and job. */
export interface RunContext {
  /** Aborts the handler's signal: at the lease's end (`timeout`), or when the caller closes. */
  readonly controller: AbortController;
  readonly telemetry: JobsTelemetry | undefined;
  /** Whether the caller is closing: a run its close ended is `interrupted`, not a try. */
  readonly closing: () => boolean;
  /**
   * Ends the run as its signal aborts, rather than when the handler settles: where what is
   * delivered waits for the run's end (an edge runtime's batch), a handler that ignores its
   * signal holds nothing up past its `timeout`.
   */
  readonly leaveAtAbort?: boolean;
  /** Why the job cannot be run, found before (its body is not JSON): it is refused, untried. */
  readonly refused?: string | undefined;
}

/** Runs `job` with `handler`, and resolves how the run ended. */
export async function runJob(
  handler: FoundHandler,
  job: TakenJob,
  { controller, telemetry, closing, leaveAtAbort, refused }: RunContext,
): Promise<RunResult> {
  if (closing()) {
    return { end: "interrupted", error: undefined, thrown: undefined, observed: undefined };
  }
  const { timeoutMs } = handler.settings;
  const observed = telemetry?.run(job);
  if (refused !== undefined) return { end: "refused", error: refused, thrown: undefined, observed };
  const timer = setTimeout(
    () => controller.abort(new Error(`the run outlasted its lease (timeout ${timeoutMs} ms)`)),
    timeoutMs,
  );
  try {
    const prepared = await preparedPayload(handler, job.payload);
    if ("refused" in prepared) {
      return { end: "refused", error: prepared.refused, thrown: undefined, observed };
    }
    // The close came while an async schema checked the payload: not a try.
    if (closing() && controller.signal.aborted) {
      return { end: "interrupted", error: undefined, thrown: undefined, observed };
    }
    const run = async () => {
      await handler.run(prepared.payload, jobOf(job, controller.signal));
    };
    const running = observed === undefined ? run() : observed.within(run);
    if (leaveAtAbort) {
      // A run left behind may still reject: not an unhandled rejection.
      running.catch(() => {});
      await Promise.race([running, aborted(controller.signal)]);
    } else {
      await running;
    }
    return { end: "succeeded", error: undefined, thrown: undefined, observed };
  } catch (thrown) {
    const end = closing() && controller.signal.aborted ? "interrupted" : "failed";
    return { end, error: describe(thrown), thrown, observed };
  } finally {
    clearTimeout(timer);
  }
}

// Rejects with the signal's reason once it aborts.
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

// The payload the handler is given, or why no run would take it.
async function preparedPayload(
  handler: FoundHandler,
  text: string,
): Promise<{ readonly payload: unknown } | { readonly refused: string }> {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return { refused: `its payload is not JSON (${(error as Error).message})` };
  }
  const { schema } = handler.settings;
  if (schema === undefined) return { payload };
  const result = await schema["~standard"].validate(payload);
  if (result.issues === undefined) return { payload: result.value };
  const issues = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p));
    return path.length === 0 ? issue.message : `${path.join(".")}: ${issue.message}`;
  });
  return { refused: `the handler's schema refused its payload: ${issues.join("; ")}` };
}

// What the handler is given beside the payload.
function jobOf(job: TakenJob, signal: AbortSignal): Job {
  return {
    id: job.id,
    queue: job.queue,
    attempt: job.attempt,
    enqueuedAt: job.enqueuedAt,
    signal,
  };
}

/**
 * A run's error as the job keeps it: its stack, which names it and says where it was thrown. Never
 * throws, whatever was thrown (an object whose every conversion throws).
 */
export function describe(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const { stack } = thrown;
      return typeof stack === "string" ? stack : `${thrown.name}: ${thrown.message}`;
    }
    return `thrown: ${JSON.stringify(thrown) ?? String(thrown)}`;
  } catch {
    try {
      return `thrown: ${String(thrown)}`;
    } catch {
      return `thrown: ${Object.prototype.toString.call(thrown)}`;
    }
  }
}
