import type { ConnectionReport, ConnectionState, RunReport } from "./run_report.ts";

/** The report entry of a configured connection that was not run, saying why. */
export function notRun(
  name: string,
  state: Exclude<ConnectionState, "ran">,
  reason: string,
): ConnectionReport {
  return { name, state, reason, files: [], applied: 0, skipped: 0, requests: 0, ms: 0 };
}

/**
 * Completes the engine's report so that no connection goes unmentioned: every configured
 * connection, in configuration order, as it ran, as it was skipped, or `not-reached` when the run
 * stopped before it. A run that `signal` stopped between two connections says `interrupted`, not
 * a silent success.
 */
export function completeReport(
  report: RunReport,
  configured: readonly string[],
  skipped: readonly ConnectionReport[],
  signal?: AbortSignal,
): RunReport {
  const known = new Map<string, ConnectionReport>();
  for (const c of [...skipped, ...report.connections]) known.set(c.name, c);
  const connections = configured.map((name) =>
    known.get(name) ?? notRun(name, "not-reached", "the run stopped before it")
  );
  // The engine stops between two connections without an error of its own.
  const unreached = connections.find((c) => c.state === "not-reached");
  if (signal?.aborted && report.error === undefined && unreached !== undefined) {
    return {
      ...report,
      connections,
      error: {
        kind: "interrupted",
        message: `interrupted before connection "${unreached.name}"`,
        connection: unreached.name,
      },
    };
  }
  return { ...report, connections };
}
