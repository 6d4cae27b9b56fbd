import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";

/** A child process whose output a test reads line by line, as it comes. */
export interface WatchedChild {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line that matches; rejects if the process ends first. */
  line(pattern: RegExp): Promise<string>;
  stdout(): string;
  stderr(): string;
  /** The exit code, once the process has ended. */
  readonly exited: Promise<number | null>;
}

/**
 * Spawns `command` and keeps its output, so that a test waits on what the process says (a line
 * that matches) rather than on time. `env` is added to the test's own environment.
 */
export function watchChild(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): WatchedChild {
  const child = spawn(command, args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code))
  );
  const find = (pattern: RegExp) => out.split("\n").find((l) => pattern.test(l));
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (const w of [...waiting]) {
      const found = find(w.pattern);
      if (found !== undefined) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(found);
      }
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => err += chunk);
  const line = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const found = find(pattern);
      if (found !== undefined) return resolve(found);
      waiting.push({ pattern, resolve });
      exited.then((code) =>
        reject(new Error(`exited (${code}) before printing ${pattern}:\n${out}\n${err}`))
      );
    });
  return { child, line, stdout: () => out, stderr: () => err, exited };
}
