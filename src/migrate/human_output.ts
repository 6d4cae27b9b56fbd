import type { ConnectionReport, ErrorKind, FileReport, Progress, RunReport } from "./run_report.ts";

const LABEL: Record<string, string> = {
  apply: "apply",
  skip: "skip",
  reapply: "re-apply",
  changed: "changed",
};
const STATE: Record<string, string> = {
  apply: "pending",
  skip: "applied",
  reapply: "changed",
  changed: "changed",
};

/** Progress lines for a person: `main [2/5] apply a.json -> PUT /a (created, HTTP 201, 14 ms)`. */
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
    : ` (${
      [file.result, file.status !== undefined && `HTTP ${file.status}`, `${file.ms} ms`]
        .filter(Boolean).join(", ")
    })`;
  return `${LABEL[file.action]} ${file.path}${target(file)}${done}`;
}

function state(file: FileReport): string {
  return file.outOfOrder === undefined ? STATE[file.action] : "out of order";
}

function late(file: FileReport): string {
  return file.outOfOrder === undefined ? "" : ` (sorts before ${file.outOfOrder}, applied)`;
}

function target(file: FileReport): string {
  return file.request === undefined ? "" : ` -> ${file.request}`;
}

const ERROR_PREFIX: Record<ErrorKind, string> = {
  usage: "error",
  config: "error",
  plan: "error",
  failure: "failed",
  lock: "failed",
  invalid: "invalid",
  interrupted: "interrupted",
};

/**
 * The closing lines: the plan or status table when asked for, then one line per configured
 * connection (its summary, what `unlock` removed, or why it was skipped), the error, and the time.
 * Never only the time: a run where nothing ran says so.
 */
export function humanSummary(report: RunReport): string[] {
  const lines: string[] = [];
  const listing = report.command === "status" || report.command === "validate";
  for (const c of report.connections) {
    if (c.state !== "ran") {
      lines.push(`${c.name}: ${c.state === "not-reached" ? "not run" : "skipped"} (${c.reason})`);
      continue;
    }
    if (report.command === "unlock") {
      lines.push(`${c.name}: ${unlocked(c)}`);
      continue;
    }
    if (listing || report.command === "dry-run") {
      lines.push(`${c.name}:`);
      if (c.files.length === 0) lines.push("  (no files)");
      for (const f of c.files) {
        lines.push(
          listing
            ? `  ${state(f).padEnd(12)} ${f.path}${late(f)}`
            : `  ${LABEL[f.action].padEnd(8)} ${f.path}${f.action === "skip" ? "" : target(f)}${
              late(f)
            }`,
        );
      }
    }
    const pending = c.files.filter((f) => f.action === "apply" || f.action === "reapply").length;
    const changed = c.files.filter((f) => f.action === "changed").length;
    const counts = [
      report.command === "migrate" ? `${c.applied} applied` : `${pending} to apply`,
      `${c.skipped} unchanged`,
      changed > 0 && `${changed} changed since applied`,
    ].filter(Boolean).join(", ");
    lines.push(`${c.name}: ${counts}, ${c.requests} request(s), ${seconds(c.ms)}`);
  }
  if (report.error) lines.push(`${ERROR_PREFIX[report.error.kind]}: ${report.error.message}`);
  else if (!report.connections.some((c) => c.state === "ran")) {
    lines.push(
      report.connections.length === 0
        ? "nothing ran: no connection is configured"
        : "nothing ran: every configured connection was skipped",
    );
  }
  lines.push(`${report.error ? "stopped" : "done"} in ${seconds(report.ms)}`);
  return lines;
}

function unlocked(c: ConnectionReport): string {
  if (c.unlocked === undefined || c.unlocked === "nothing") {
    return `nothing to remove${c.note ? `: ${c.note}` : ""}`;
  }
  const { host, pid, owner, expires_at } = c.unlocked;
  return `removed the lock of ${host} pid ${pid} (owner ${owner})${
    expires_at ? `, expiring ${expires_at}` : ""
  }`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
