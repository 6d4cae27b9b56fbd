import process from "node:process";
import { type CliContext, runCli } from "../../src/migrate/cli/cli_main.ts";
import { searchDriver } from "../../src/migrate/search/search_driver.ts";
import type { TransportFactory } from "../../src/migrate/search/http/transport.ts";

/** What one in-process CLI run printed, and its exit code. */
export interface Captured {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs the CLI in-process, capturing both streams; `context` replaces the defaults it names, and
 * its `transport` carries the search driver's requests.
 */
export async function runCaptured(
  args: readonly string[],
  { transport, ...context }: Partial<CliContext> & { transport?: TransportFactory } = {},
): Promise<Captured> {
  const out: string[] = [], err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: (name) => process.env[name],
    identity: { host: "test", pid: process.pid },
    ...(transport ? { drivers: { search: searchDriver({ transport }) } } : {}),
    ...context,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
