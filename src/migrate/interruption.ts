import { MigrationError } from "./migration_error.ts";

/**
 * Waits `ms`, or less when `signal` aborts: then it rejects with an `interrupted` MigrationError
 * saying `what` was interrupted. Every wait of a runner goes through here, so none outlives a
 * Ctrl-C.
 */
export function pause(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const interrupted = () =>
      reject(new MigrationError("interrupted", `interrupted while ${what}`));
    if (signal?.aborted) return interrupted();
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    const onAbort = () => {
      clearTimeout(timer);
      interrupted();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
