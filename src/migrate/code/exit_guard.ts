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

// The runs whose code is running now, told when it calls exit: migrate() calls may overlap.
const running = new Set<(error: ExitRefused) => void>();
let restore: (() => void) | undefined;

/**
 * Refuses `process.exit` and `Deno.exit` until the returned function is called: each call throws
 * {@linkcode ExitRefused} and tells `onExit` (a file that catches the throw still fails). The
 * process's own functions are put back once no guarded code runs.
 */
export function guardExit(onExit: (error: ExitRefused) => void): () => void {
  running.add(onExit);
  if (running.size === 1) restore = replaceExits();
  return () => {
    if (!running.delete(onExit) || running.size > 0) return;
    restore?.();
    restore = undefined;
  };
}

function replaceExits(): () => void {
  const undo: (() => void)[] = [];
  replace(process, "process.exit", undo);
  const deno = (globalThis as { Deno?: object }).Deno;
  if (deno !== undefined) replace(deno, "Deno.exit", undo);
  return () => {
    for (const step of undo.reverse()) step();
  };
}

function replace(owner: object, how: string, undo: (() => void)[]): void {
  const own = Object.getOwnPropertyDescriptor(owner, "exit");
  const refuse = (code?: unknown): never => {
    const error = new ExitRefused(how, code);
    for (const told of running) told(error);
    throw error;
  };
  try {
    Object.defineProperty(owner, "exit", { configurable: true, writable: true, value: refuse });
  } catch {
    // A runtime whose exit cannot be replaced keeps it.
    return;
  }
  undo.push(() => {
    if (own === undefined) delete (owner as { exit?: unknown }).exit;
    else Object.defineProperty(owner, "exit", own);
  });
}
