import { type Clock, systemClock } from "../runtime/clock.ts";
import { MigrationError } from "./migration_error.ts";

/**
 * Waits `ms` on `clock` (the real one by default), or less when `signal` aborts: then it rejects
 * with an `interrupted` MigrationError saying `what` was interrupted. Every wait of a runner goes
 * through here, so none outlives a Ctrl-C.
 */
export async function pause(
  ms: number,
  signal: AbortSignal | undefined,
  what: string,
  clock: Clock = systemClock,
): Promise<void> {
  try {
    await clock.sleep(ms, signal);
  } catch (error) {
    if (signal?.aborted) throw new MigrationError("interrupted", `interrupted while ${what}`);
    throw error;
  }
}
