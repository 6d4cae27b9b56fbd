import type {
  ConnectionDrift,
  ConnectionReport,
  ErrorKind,
  FileAction,
  FileReport,
  Progress,
  ReindexReport,
  RunReport,
} from "./run_report.ts";
import { compareVersions, versionedName } from "./plan/migration_name.ts";
import { printable } from "../shown_value.ts";

const LABEL: Record<FileAction, string> = {
  apply: "apply",
  skip: "skip",
  reapply: "re-apply",
  changed: "changed",
  missing: "missing",
  rename: "rename",
  unknown: "unknown",
  record: "record",
  drop: "drop",
  "above-target": "later",
  undone: "undone",
  undo: "undo",
};
// The states `status` lists (docs/migrations-reference.md, "Status"): `record` and `drop` are baseline's and repair's.
const STATE: Record<FileAction, string> = {
  apply: "pending",
  skip: "applied",
  reapply: "changed",
  changed: "changed",
  missing: "missing",
  rename: "renamed",
  unknown: "unknown",
  record: "record",
  drop: "drop",
  "above-target": "above target",
  undone: "undone",
  undo: "to undo",
};

/** Progress lines for a person: `main [2/5] apply a.json -> PUT /a (created, HTTP 201, 14 ms)`. */
export function humanProgress(sink: (line: string) => void): Progress {
  // Records, and the paths of files without one, are written by whoever can write the records:
  // as they are, an escape sequence would recolour or clear the terminal of whoever runs `status`.
  const write = (line: string) => sink(printable(line));
  return {
    start: (connection, pending, total, verb) =>
      write(`${connection}: ${pending} of ${total} file(s) to ${verb}`),
    file: (connection, n, pending, file) => write(`${connection} [${n}/${pending}] ${line(file)}`),
    notice: (message) => write(`note: ${message}`),
    step: (connection, message) => write(`${connection}   ${message}`),
  };
}

function line(file: FileReport): string {
  const done = file.result === undefined ? "" : ` (${
    [
      file.result,
      file.status !== undefined && `HTTP ${file.status}`,
      file.ms !== undefined && `${file.ms} ms`,
    ].filter(Boolean).join(", ")
  })`;
  return `${LABEL[file.action]} ${file.path}${sent(file)}${remarks(file)}${done}`;
}

function state(file: FileReport): string {
  if (file.inProgress) return "in progress";
  if (file.outOfOrder !== undefined) return "out of order";
  return file.baselined && file.action === "skip" ? "baselined" : STATE[file.action];
}

// What a listing adds after a file's path.
function remarks(file: FileReport, planned = false): string {
  const runs = planned && (file.action === "apply" || file.action === "reapply");
  return [
    file.code === true && (runs ? " (would run code)" : " (code)"),
    file.outOfOrder !== undefined && ` (sorts before ${file.outOfOrder}, applied)`,
    file.renamedFrom !== undefined && ` (renamed from ${file.renamedFrom})`,
    file.sameResourceAs !== undefined && ` (${file.resource} also in ${file.sameResourceAs})`,
    file.reindex !== undefined && ` (${moved(file.reindex)})`,
  ].filter(Boolean).join("");
}

// `2026-11-25 06:16 UTC by ci@build-7 (thaw 0.1.0)`: what the record holds, nothing more.
function ran(run: NonNullable<FileReport["applied"]>): string {
  return [
    run.at !== undefined && minute(run.at),
    run.by !== undefined && `by ${run.by}`,
    run.runnerVersion !== undefined && `(thaw ${run.runnerVersion})`,
  ].filter(Boolean).join(" ");
}

// C0 and C1 controls, DEL, line and paragraph separators, bidi overrides and isolates.
// To the minute, in UTC as recorded: the report has the exact time.
function minute(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime())
    ? iso
    : `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

// `alias products: products-v1 -> products-v2, 50000 document(s), 31000/s, writes blocked 1.8 s`
function moved(r: ReindexReport): string {
  return [
    `alias ${r.alias}: ${r.source} -> ${r.index}`,
    r.resumed && "resumed",
    r.documents !== undefined && `${r.documents} document(s)`,
    r.documentsPerSecond !== undefined && `${r.documentsPerSecond}/s`,
    r.writeBlockedMs !== undefined && `writes blocked ${(r.writeBlockedMs / 1000).toFixed(1)} s`,
    r.deletedSource && `${r.source} deleted`,
  ].filter(Boolean).join(", ");
}

// The request, for the files a command sends (an undo: its undo file's): records alone send none
// to the resource.
function sent(file: FileReport): string {
  const sends = file.action === "apply" || file.action === "reapply" || file.action === "undo";
  if (file.request === undefined || !sends) return "";
  const into = file.overwrites === undefined
    ? ""
    : ` into ${file.overwrites} (overwritten and pruned)`;
  return ` -> ${file.request}${into}`;
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
  const plan = report.command === "dry-run" || report.command === "baseline" ||
    report.command === "repair" || (report.command === "undo" && report.dryRun === true);
  for (const c of report.connections) {
    if (c.state !== "ran") {
      lines.push(`${c.name}: ${c.state === "not-reached" ? "not run" : "skipped"} (${c.reason})`);
      continue;
    }
    if (report.command === "unlock") {
      lines.push(`${c.name}: ${unlocked(c)}`);
      continue;
    }
    if (listing || plan) lines.push(...fileLines(report, c, listing));
    if (c.files.some((f) => f.action === "unknown")) {
      lines.push(unknownLine(c));
      continue;
    }
    if (c.drift) lines.push(...driftLines(c.name, c.drift, report.command === "migrate"));
    lines.push(`${c.name}: ${counts(report, c)}, ${c.requests} request(s), ${seconds(c.ms)}`);
  }
  lines.push(...closingLines(report));
  return lines.map(printable);
}

// Commands that record without running: what they leave is pending, for migrate.
function runsNone(report: RunReport): boolean {
  return report.command === "repair" || report.command === "baseline";
}

// The plan or status table of a connection: its files, callbacks and (listing) ignored files.
function fileLines(report: RunReport, c: ConnectionReport, listing: boolean): string[] {
  const lines = [`${c.name}:`];
  if (c.files.length === 0) lines.push("  (no files)");
  const recordsOnly = runsNone(report);
  // What the records say of their runs, in a column after the longest path that has one.
  const width = Math.max(
    0,
    ...c.files.filter((f) => f.applied).map((f) => `${f.path}${remarks(f)}`.length),
  );
  for (const f of report.command === "undo" ? inUndoOrder(c.files) : c.files) {
    lines.push(
      listing
        ? `  ${state(f).padEnd(12)} ${
          f.applied
            ? `${`${f.path}${remarks(f)}`.padEnd(width)}  ${ran(f.applied)}`
            : `${f.path}${remarks(f)}`
        }`
        : recordsOnly && (f.action === "apply" || f.action === "reapply")
        ? `  ${"pending".padEnd(8)} ${f.path}${remarks(f)}`
        : `  ${LABEL[f.action].padEnd(8)} ${f.path}${sent(f)}${remarks(f, !recordsOnly)}`,
    );
  }
  // Apart from the files: they run at their events, and are never recorded.
  for (const cb of c.callbacks ?? []) {
    const note = cb.supported === false ? ", an event Thaw does not run" : "";
    lines.push(`  ${"callback".padEnd(listing ? 12 : 8)} ${cb.path} (${cb.event}${note})`);
  }
  if (listing) {
    for (const path of c.ignored ?? []) lines.push(`  ${"ignored".padEnd(12)} ${path}`);
  }
  return lines;
}

// The records were not read: the counts would say 0 where nothing is known.
function unknownLine(c: ConnectionReport): string {
  const unknown = c.files.filter((f) => f.action === "unknown").length;
  return `${c.name}: ${unknown} file(s) in this checkout, their state unknown (the records ` +
    `could not be read), ${c.requests} request(s), ${seconds(c.ms)}`;
}

// What a connection's files came to, counted by what was decided (or, where the run writes,
// done).
function counts(report: RunReport, c: ConnectionReport): string {
  const n = (...actions: FileAction[]) => c.files.filter((f) => actions.includes(f.action)).length;
  const done = (result: string) => c.files.filter((f) => f.result === result).length;
  const writes = !report.dryRun &&
    (report.command === "migrate" || report.command === "baseline" ||
      report.command === "repair" || report.command === "undo");
  return [
    report.command === "migrate"
      ? `${c.applied} applied`
      : report.command === "baseline" || report.command === "repair" ||
          report.command === "undo"
      ? undefined
      : `${n("apply", "reapply")} to apply`,
    `${c.skipped} unchanged`,
    n("changed") > 0 && `${n("changed")} changed since applied`,
    n("record") > 0 &&
    `${writes ? done("recorded") : n("record")} ${writes ? "recorded" : "to record"}`,
    n("rename") > 0 &&
    `${writes ? done("moved") : n("rename")} ${writes ? "renamed" : "to rename"}`,
    n("drop") > 0 && `${writes ? done("dropped") : n("drop")} ${writes ? "dropped" : "to drop"}`,
    n("undo") > 0 && `${writes ? done("undone") : n("undo")} ${writes ? "undone" : "to undo"}`,
    n("undone") > 0 && `${n("undone")} undone${report.command === "undo" ? " before" : ""}`,
    n("missing") > 0 && `${n("missing")} missing`,
    n("above-target") > 0 && `${n("above-target")} above the target version`,
    c.ignored && `${c.ignored.length} other file(s) ignored`,
    runsNone(report) && n("apply", "reapply") > 0 &&
    `${n("apply", "reapply")} pending (${report.command} runs none)`,
  ].filter(Boolean).join(", ");
}

// The error, or that nothing ran, then the time. A message about the configuration or the
// command line may hold lines of its own (a YAML snippet): kept as lines. Every other names paths
// and values from files, records or a server, which must not start a line of their own: escaped,
// as every line is.
function closingLines(report: RunReport): string[] {
  const lines: string[] = [];
  if (report.error) {
    const { kind, message } = report.error;
    const text = `${ERROR_PREFIX[kind]}: ${message}`;
    lines.push(...(kind === "config" || kind === "usage" ? text.split("\n") : [text]));
  } else if (!report.connections.some((c) => c.state === "ran")) {
    lines.push(
      report.connections.length === 0
        ? "nothing ran: no connection is configured"
        : "nothing ran: every configured connection was skipped",
    );
  }
  lines.push(`${report.error ? "stopped" : "done"} in ${seconds(report.ms)}`);
  return lines;
}

// `--drift`: each resource that differs from its file, a difference a line; after `migrate`, what
// applying the file again did and what still differs.
function driftLines(name: string, drift: ConnectionDrift, migrate: boolean): string[] {
  const { checked, resources } = drift;
  if (resources.length === 0) {
    return [`${name}: no drift: the ${checked} resource(s) of the applied files match them`];
  }
  const lines = [
    `${name}: drift: ${resources.length} of ${checked} resource(s) differ from their files`,
  ];
  for (const r of resources) {
    for (const d of r.differences) lines.push(`  ${r.resource}: ${d}`);
    if (r.result === undefined) {
      if (migrate && r.note) lines.push(`  ${r.resource}: not applied again: ${r.note}`);
      continue;
    }
    const remaining = r.remaining ?? [];
    lines.push(
      `  ${r.resource}: ${
        r.result === "reapplied" ? `applied ${r.file} again` : `${r.file} refused by the cluster`
      }${remaining.length === 0 ? "; it matches its file now" : "; still differs:"}`,
    );
    for (const d of remaining) lines.push(`    ${d}`);
  }
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

// The files as `undo` goes: those it undoes newest version first (as it runs them), in the places
// they hold in run order, the others where they are.
function inUndoOrder(files: readonly FileReport[]): FileReport[] {
  const undone = files.filter((f) => f.action === "undo").sort((a, b) =>
    compareVersions(versionedName(b.path) ?? "0", versionedName(a.path) ?? "0")
  );
  let next = 0;
  return files.map((f) => f.action === "undo" ? undone[next++] : f);
}
