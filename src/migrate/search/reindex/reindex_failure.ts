import { MigrationError, MigrationFailure } from "../../migration_error.ts";
import { SearchTransportError } from "../http/search_client.ts";
import type { ReindexContext } from "./reindex_setup.ts";
import { type FailedStep, StepError } from "./reindex_step.ts";

/**
 * What a failed step throws: a failure naming the step, the request, and the state the run
 * leaves (`state`); Ctrl-C's own error once interrupted; else the error itself, which is no
 * answer of the cluster's (a bug, or the lock lost).
 */
export function stepFailure(ctx: ReindexContext, failed: FailedStep, state: string): unknown {
  const { error, request } = failed;
  const detail = error instanceof StepError || error instanceof SearchTransportError
    ? error.message
    : ctx.interrupt?.aborted
    ? "interrupted"
    : undefined;
  if (detail === undefined) return error;
  const reason = `reindex step ${failed.step}: ${detail}; ${state}`;
  if (ctx.interrupt?.aborted) {
    return new MigrationError("interrupted", `connection "${ctx.connection}": ${reason}`);
  }
  return new MigrationFailure({
    connection: ctx.connection,
    file: ctx.file,
    ...(request === "" ? {} : { request }),
    ...(error instanceof StepError && error.status !== undefined ? { status: error.status } : {}),
    reason,
  }, { cause: error });
}
