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

/**
 * Runs `job` with `handler`: `controller` aborts the handler's signal, at the lease's end
 * (`timeout`) or when the caller closes; `closing` says whether it did. A run the close ended
 * before it finished is `interrupted`, not a try.
 */
export async function runJob(
  handler: FoundHandler,
  job: TakenJob,
  controller: AbortController,
  telemetry: JobsTelemetry | undefined,
  closing: () => boolean,
): Promise<RunResult> {
  if (closing()) {
    return { end: "interrupted", error: undefined, thrown: undefined, observed: undefined };
  }
  const { timeoutMs } = handler.settings;
  const observed = telemetry?.run(job);
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
    await (observed === undefined ? run() : observed.within(run));
    return { end: "succeeded", error: undefined, thrown: undefined, observed };
  } catch (thrown) {
    const end = closing() && controller.signal.aborted ? "interrupted" : "failed";
    return { end, error: describe(thrown), thrown, observed };
  } finally {
    clearTimeout(timer);
  }
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
