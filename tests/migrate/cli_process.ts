import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { scriptCommand } from "../runtime.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** `cli.ts` running as a process of the test's runtime, its output gathered as it comes. */
export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves once the process ended and its output is closed. */
  readonly closed: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches `text`; rejects if the process ends first. */
  printed(text: RegExp): Promise<void>;
  /**
   * Sends `signal` with `process.kill`: through `child.kill`, Deno's child_process reports the
   * signal instead of the child's own exit code.
   */
  signal(signal: NodeJS.Signals): void;
}

/** Starts `cli.ts <args>` from the repository's root with `env` added to this process's. */
export function startCli(args: readonly string[], env: Record<string, string> = {}): CliProcess {
  const [command, argv] = scriptCommand(join(root, "cli.ts"), args);
  const child = spawn(command, argv, { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env } });
  // A test may write to a runner that has already ended (a gate it no longer waits at): the
  // write to its closed pipe is then nothing to report, and would fail the test as an EPIPE.
  child.stdin.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  let stdout = "", stderr = "";
  const watchers = new Set<{ text: RegExp; resolve(): void }>();
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => {
    stderr += d;
    for (const w of watchers) {
      if (w.text.test(stderr)) {
        watchers.delete(w);
        w.resolve();
      }
    }
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  return {
    child,
    closed,
    stdout: () => stdout,
    stderr: () => stderr,
    printed: (text) =>
      text.test(stderr) ? Promise.resolve() : new Promise<void>((resolve, reject) => {
        watchers.add({ text, resolve });
        closed.then(() => reject(new Error(`cli.ts ended before printing ${text}:\n${stderr}`)));
      }),
    signal: (signal) => process.kill(child.pid!, signal),
  };
}
