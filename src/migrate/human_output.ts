import type { FileReport, Progress, RunReport } from "./run_report.ts";

const LABEL: Record<string, string> = { apply: "apply", skip: "skip", reapply: "re-apply" };
const STATE: Record<string, string> = { apply: "pending", skip: "applied", reapply: "changed" };

/** Progress lines for a person: `main [2/5] apply a.json -> PUT /a (201, 14 ms)`. */
export function humanProgress(write: (line: string) => void): Progress {
  return {
    start: (connection, pending, total) =>
      write(`${connection}: ${pending} of ${total} file(s) to apply`),
    file: (connection, n, pending, file) => write(`${connection} [${n}/${pending}] ${line(file)}`),
    notice: (message) => write(`note: ${message}`),
  };
}

function line(file: FileReport): string {
  const done = file.result === undefined
    ? ""
    : ` (${file.result}, HTTP ${file.status}, ${file.ms} ms)`;
  return `${LABEL[file.action]} ${file.path} -> ${file.request}${done}`;
}

/** The closing lines: the plan or status table when asked for, then one summary per connection. */
export function humanSummary(report: RunReport): string[] {
  const lines: string[] = [];
  for (const c of report.connections) {
    if (report.command === "status" || report.command === "dry-run") {
      lines.push(`${c.name}:`);
      if (c.files.length === 0) lines.push("  (no files)");
      for (const f of c.files) {
        lines.push(
          report.command === "status"
            ? `  ${STATE[f.action].padEnd(8)} ${f.path}`
            : `  ${LABEL[f.action].padEnd(8)} ${f.path}${
              f.action === "skip" ? "" : ` -> ${f.request}`
            }`,
        );
      }
    }
    if (report.command === "unlock") continue;
    const pending = c.files.filter((f) => f.action !== "skip").length;
    const counts = report.command === "migrate"
      ? `${c.applied} applied, ${c.skipped} unchanged`
      : `${pending} to apply, ${c.skipped} unchanged`;
    lines.push(`${c.name}: ${counts}, ${c.requests} request(s), ${seconds(c.ms)}`);
  }
  if (report.error) lines.push(`failed: ${report.error.message}`);
  lines.push(`${report.error ? "stopped" : "done"} in ${seconds(report.ms)}`);
  return lines;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
