import process from "node:process";
import { type CliContext, runCli } from "../../src/migrate/cli/cli_main.ts";
import { searchDriver } from "../../src/migrate/search/search_driver.ts";
import { sqlDriver } from "../../src/migrate/sql/sql_driver.ts";
import type { TransportFactory } from "../../src/migrate/search/http/transport.ts";
import type { Clock } from "../../src/runtime/clock.ts";

/** What one in-process CLI run printed, and its exit code. */
export interface Captured {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs the CLI in-process, capturing both streams; `context` replaces the defaults it names, its
 * `transport` carries the search driver's requests, and its `clock` is the search locks' (a test's
 * fake clock runs their leases in virtual time).
 */
export async function runCaptured(
  args: readonly string[],
  { transport, clock, ...context }:
    & Partial<CliContext>
    & { transport?: TransportFactory; clock?: Clock } = {},
): Promise<Captured> {
  const out: string[] = [], err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: (name) => process.env[name],
    identity: { host: "test", pid: process.pid },
    // The built-in drivers, the search one over `transport` when a test records its requests.
    drivers: {
      sql: sqlDriver,
      search: searchDriver({ ...(transport ? { transport } : {}), ...(clock ? { clock } : {}) }),
    },
    ...context,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
