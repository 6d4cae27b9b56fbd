import process from "node:process";
import { ExitRefused, runningGuard } from "./exit_guard.ts";

/** Told an error that nobody caught, thrown or rejected while a code file ran. */
export type FailUncaught = (error: unknown) => void;

// The runs whose code is running, each told what its code throws outside the chain it awaits.
const live = new Set<FailUncaught>();
// Module-level as the process's uncaught-error events are: one listener while any run listens.
let stopListening: (() => void) | undefined;

/**
 * Until the returned function is called, an error nobody catches (thrown by a timer or a listener,
 * or a rejection nobody handles) goes to `fail` instead of ending the process with no report: a
 * code file's timer or `ctx.signal` listener that throws, or that calls `process.exit` (refused by
 * the exit guard with a throw of its own), runs outside the chain its run awaits.
 *
 * `fail` must be the `onExit` of the guard the code runs in: an error whose code's guard can be
 * told (the runtime keeps it for the error's handler: Node always, Deno and Bun not for every
 * kind) goes to that run alone; any other to every run whose code is running, normally one.
 */
export function failOnUncaught(fail: FailUncaught): () => void {
  live.add(fail);
  stopListening ??= listen();
  return () => {
    if (!live.delete(fail) || live.size > 0) return;
    stopListening?.();
    stopListening = undefined;
  };
}

function take(error: unknown): void {
  // The guard told its own run before throwing.
  if (error instanceof ExitRefused) return;
  // Of a guard that is not live, the code was abandoned: its run already failed and went on.
  const own = runningGuard();
  for (const fail of live) if (own === undefined || own === fail) fail(error);
}

// Deno ends the process on an `error` or `unhandledrejection` event of the global scope that no
// listener cancelled; Node and Bun on an uncaught error or rejection with no listener.
function listen(): () => void {
  if ((globalThis as { Deno?: unknown }).Deno !== undefined) {
    const onError = (event: ErrorEvent) => {
      event.preventDefault();
      take(event.error);
    };
    const onRejection = (event: PromiseRejectionEvent) => {
      event.preventDefault();
      take(event.reason);
    };
    globalThis.addEventListener("error", onError);
    globalThis.addEventListener("unhandledrejection", onRejection);
    return () => {
      globalThis.removeEventListener("error", onError);
      globalThis.removeEventListener("unhandledrejection", onRejection);
    };
  }
  const onError = (error: unknown) => take(error);
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  return () => {
    process.off("uncaughtException", onError);
    process.off("unhandledRejection", onError);
  };
}
