import { AsyncLocalStorage } from "node:async_hooks";
import process from "node:process";

/**
 * A code file called `process.exit` (or `Deno.exit`) while it ran: refused, and its file fails.
 * Ending the process there would end the run with the exit code the file chose (0: success) and
 * no report, the file neither recorded nor known to have failed.
 */
export class ExitRefused extends Error {
  constructor(how: string, code: unknown) {
    super(
      `called ${how}(${code === undefined ? "" : String(code)}): a migration may not end the ` +
        "runner's process (the run would end with no report); throw to fail the file",
    );
    this.name = "ExitRefused";
  }
}

/** Where exit is refused: in the code a guard runs, and in whatever that code starts. */
export interface ExitGuard {
  /**
   * Runs `fn` so that an exit called by it, or later by what it started (a timer, a promise's
   * continuation, a listener it added and that `run` calls), is refused and told to this guard's
   * `onExit` alone.
   */
  run<T>(fn: () => T): T;
  /** The guarded code settled: the process's own exit is put back once no guarded code runs. */
  end(): void;
}

// Which guard's code is running, followed through promises and timers: an exit called elsewhere
// (the app's own, the runner's second Ctrl-C) is not a migration's and goes through, and of two
// overlapping runs only the one whose code called it fails.
const guarded = new AsyncLocalStorage<(error: ExitRefused) => void>();

/**
 * The `onExit` of the guard whose code is running, if any, to be compared: what a guard's code
 * throws where nobody catches it is that guard's too.
 */
export function runningGuard(): object | undefined {
  return guarded.getStore();
}
// The refusing functions put in place: an owner's exit that is not one of them was set by someone
// else since (the app, a test's stub), and is wrapped anew.
const refusals = new WeakSet<object>();
// The guards running at once (runs of several apps or targets), and how to put back the functions
// the first one replaced.
class RunningGuards {
  count = 0;
  readonly undo: (() => void)[] = [];
}
// Module-level as `process.exit` and `Deno.exit` are the process's.
const running = /* @__PURE__ */ new RunningGuards();

/**
 * Refuses `process.exit` and `Deno.exit` in what the returned guard runs, until its `end`: each
 * such call throws {@linkcode ExitRefused} and tells `onExit` (a file that catches the throw
 * still fails). The process's own functions are in place again once every guard ended, unless
 * something else replaced them meanwhile.
 */
export function guardExit(onExit: (error: ExitRefused) => void): ExitGuard {
  running.count++;
  replace(process, "process.exit");
  const deno = (globalThis as { Deno?: object }).Deno;
  if (deno !== undefined) replace(deno, "Deno.exit");
  let ended = false;
  return {
    run: (fn) => guarded.run(onExit, fn),
    end: () => {
      if (ended) return;
      ended = true;
      if (--running.count > 0) return;
      for (const step of running.undo.splice(0).reverse()) step();
    },
  };
}

function replace(owner: object, how: string): void {
  const own = Object.getOwnPropertyDescriptor(owner, "exit");
  const exit = (owner as { exit: (code?: unknown) => never }).exit;
  if (refusals.has(exit)) return;
  const refuse = (code?: unknown): never => {
    const told = guarded.getStore();
    if (told === undefined) return exit.call(owner, code);
    const error = new ExitRefused(how, code);
    told(error);
    throw error;
  };
  try {
    Object.defineProperty(owner, "exit", { configurable: true, writable: true, value: refuse });
  } catch {
    // A runtime whose exit cannot be replaced keeps it.
    return;
  }
  refusals.add(refuse);
  running.undo.push(() => {
    // Put back only where ours is still in place: an exit set since is its setter's.
    if ((owner as { exit?: unknown }).exit !== refuse) return;
    if (own === undefined) delete (owner as { exit?: unknown }).exit;
    else Object.defineProperty(owner, "exit", own);
  });
}
