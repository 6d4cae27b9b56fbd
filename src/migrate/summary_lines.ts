import { humanSummary } from "./human_output.ts";
import type { RunReport } from "./run_report.ts";

/**
 * The closing lines the command line prints for a report: per connection what was applied and
 * skipped (`main: 1 applied, 0 unchanged, 5 request(s), 0.01 s`), the listing of `status`, the
 * error, and the time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summaryLines } from "@thaw/thaw/migrate";
 *
 * assert.deepEqual(summaryLines({ command: "migrate", connections: [], ms: 3 }), [
 *   "nothing ran: no connection is configured",
 *   "done in 0.00 s",
 * ]);
 * ```
 */
export function summaryLines(report: RunReport): string[] {
  return humanSummary(report);
}
