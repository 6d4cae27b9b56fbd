// What becomes of a job once a run of it ended: the one rule every store applies. Pure: the
// randomness of the backoff's jitter is given.
import type { Backoff } from "../runtime/backoff.ts";

/** How a run ended. */
export type RunEnd =
  /** The handler resolved. */
  | "succeeded"
  /** The handler threw, or its lease ran out. */
  | "failed"
  /** The payload's schema refused it: no run would do better. */
  | "refused"
  /** The app closed while it ran, and it did not finish: it was not a try. */
  | "interrupted";

/** What the store does with the job. */
export type NextStep =
  | { readonly state: "done" }
  | { readonly state: "waiting"; readonly delayMs: number }
  | { readonly state: "dead" }
  /** Back to waiting, due now, this run not counted. */
  | { readonly state: "released" };

/**
 * What follows run `attempt` (1: the first) of a job allowed `attempts` runs in all, ended as
 * `end`: done; tried again after the backoff's wait for that failure; dead once it was the last
 * run or its payload was refused; given back untried when the app closed under it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Backoff } from "../runtime/backoff.ts";
 * import { nextStep } from "./run_outcome.ts";
 *
 * const backoff = new Backoff({ delay: 1000, multiplier: 2 });
 * assert.deepEqual(nextStep("failed", 1, 3, backoff), { state: "waiting", delayMs: 1000 });
 * assert.deepEqual(nextStep("failed", 2, 3, backoff), { state: "waiting", delayMs: 2000 });
 * assert.deepEqual(nextStep("failed", 3, 3, backoff), { state: "dead" });
 * assert.deepEqual(nextStep("succeeded", 3, 3, backoff), { state: "done" });
 * ```
 */
export function nextStep(
  end: RunEnd,
  attempt: number,
  attempts: number,
  backoff: Backoff,
  random: () => number = Math.random,
): NextStep {
  switch (end) {
    case "succeeded":
      return { state: "done" };
    case "refused":
      return { state: "dead" };
    case "interrupted":
      return { state: "released" };
    case "failed":
      return attempt >= attempts
        ? { state: "dead" }
        : { state: "waiting", delayMs: backoff.delayOf(attempt, random) };
  }
}
