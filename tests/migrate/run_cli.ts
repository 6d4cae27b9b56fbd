import process from "node:process";
import { type CliContext, runCli } from "../../src/migrate/cli_main.ts";

/** What one in-process CLI run printed, and its exit code. */
export interface Captured {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs the CLI in-process, capturing both streams; `context` replaces the defaults it names. */
export async function runCaptured(
  args: readonly string[],
  context: Partial<CliContext> = {},
): Promise<Captured> {
  const out: string[] = [], err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: (name) => process.env[name],
    identity: { host: "test", pid: process.pid },
    ...context,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
