// The time limits of the container's hooks: `@PreDestroy`'s, and what a limit may be.
import { messageOf } from "./message_of.ts";
import { shownValue } from "../shown_value.ts";
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";

/**
 * Runs a hook, bounded by `timeoutMs`; resolves to its failure, if any. A hook still running then
 * is left to itself: waiting for it is what the bound is there to prevent.
 */
export async function within(
  run: () => unknown,
  timeoutMs: number,
  name: string,
): Promise<Error | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => resolve("timed out"), timeoutMs);
  });
  try {
    const outcome = await Promise.race([
      Promise.resolve().then(run).then(() => "done" as const),
      timedOut,
    ]);
    return outcome === "done" ? undefined : new Error(`${name} timed out after ${timeoutMs} ms`);
  } catch (error) {
    return new Error(`${name} threw: ${messageOf(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `ms` is a time limit setTimeout keeps. */
export function isTimeout(ms: unknown): ms is number {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 && ms <= MAX_DURATION_MS;
}

/** What a time limit must be, and what `ms` was, for a message. */
export function timeoutRule(ms: unknown): string {
  return `must be a number of milliseconds from 0 to ${MAX_DURATION_MS}, got ${shownValue(ms)}`;
}
