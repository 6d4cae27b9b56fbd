import assert from "node:assert/strict";
import type { Captured } from "./run_cli.ts";

// The documented `--json` report (docs/migrations-reference.md, "Command line"), written out here independently of the
// types in src/migrate/run_report.ts: a field added there without being documented fails here.
const COMMANDS = [
  "migrate",
  "undo",
  "status",
  "validate",
  "baseline",
  "repair",
  "unlock",
  "dry-run",
];
const STATES = ["ran", "disabled", "not-selected", "no-folder", "not-reached"];
/** Every action a file of a report may have, as documented. */
export const ACTIONS: readonly string[] = [
  "apply",
  "skip",
  "reapply",
  "changed",
  "missing",
  "rename",
  "unknown",
  "record",
  "drop",
  "above-target",
  "undone",
  "undo",
];
const KINDS = ["usage", "config", "plan", "failure", "lock", "invalid", "interrupted"];
const EXIT: Record<string, number> = {
  usage: 2,
  config: 2,
  plan: 1,
  failure: 1,
  lock: 3,
  invalid: 1,
  interrupted: 1,
};

type Json = Record<string, unknown>;

/** A `--json` report as a test reads it (already checked against the shape). */
export interface Report {
  readonly command: string | null;
  readonly dryRun?: true;
  readonly connections: {
    readonly name: string;
    readonly state: string;
    readonly reason?: string;
    readonly files: {
      path: string;
      action: string;
      outOfOrder?: string;
      renamedFrom?: string;
      sameResourceAs?: string;
      baselined?: true;
      inProgress?: true;
      resource?: string;
      request?: string;
      overwrites?: string;
      result?: string;
      reindex?: {
        source: string;
        index: string;
        alias: string;
        resumed: boolean;
        deletedSource: boolean;
        documents?: number;
        copyMs?: number;
        documentsPerSecond?: number;
        writeBlockedMs?: number;
      };
      applied?: { at?: string; by?: string; runnerVersion?: string };
      recordChecksum?: string;
    }[];
    readonly applied: number;
    readonly skipped: number;
    readonly requests: number;
    readonly ms: number;
    readonly unlocked?: "nothing" | Json;
    readonly note?: string;
    readonly ignored?: string[];
    readonly drift?: {
      readonly checked: number;
      readonly resources: {
        readonly resource: string;
        readonly file: string;
        readonly differences: string[];
        readonly reapply: boolean;
        readonly note?: string;
        readonly result?: "reapplied" | "refused";
        readonly remaining?: string[];
      }[];
    };
  }[];
  readonly ms: number;
  readonly error?: {
    readonly kind: string;
    readonly message: string;
    readonly connection?: string;
    readonly file?: string;
    readonly line?: number;
  };
}

function keys(value: unknown, where: string, required: string[], optional: string[]): Json {
  assert.ok(
    typeof value === "object" && value !== null && !Array.isArray(value),
    `${where}: an object`,
  );
  const object = value as Json;
  for (const k of required) assert.ok(k in object, `${where}: "${k}" missing`);
  for (const k of Object.keys(object)) {
    assert.ok(required.includes(k) || optional.includes(k), `${where}: unexpected "${k}"`);
  }
  return object;
}

function count(object: Json, key: string, where: string): void {
  const n = object[key];
  assert.ok(typeof n === "number" && Number.isInteger(n) && n >= 0, `${where}.${key}: ${n}`);
}

function text(object: Json, key: string, where: string, required = false): void {
  if (!required && object[key] === undefined) return;
  assert.ok(typeof object[key] === "string" && object[key] !== "", `${where}.${key}`);
}

// `--drift` (README "Drift"): how many resources were compared, and each that differs.
function checkDrift(value: unknown, where: string, report: Json): void {
  assert.ok(
    ["status", "validate", "migrate"].includes(report.command as string),
    `${where} outside status, validate, migrate`,
  );
  const drift = keys(value, where, ["checked", "resources"], []);
  count(drift, "checked", where);
  assert.ok(Array.isArray(drift.resources), `${where}.resources: an array`);
  const resources = drift.resources as unknown[];
  assert.ok(resources.length <= (drift.checked as number), `${where}: more drifted than checked`);
  for (const [i, r] of resources.entries()) {
    const at = `${where}.resources[${i}]`;
    const resource = keys(r, at, ["resource", "file", "differences", "reapply"], [
      "note",
      "result",
      "remaining",
    ]);
    assert.match(resource.resource as string, /^(template|policy|index|alias) ./, `${at}.resource`);
    text(resource, "file", at, true);
    text(resource, "note", at);
    assert.equal(typeof resource.reapply, "boolean", `${at}.reapply`);
    for (const k of ["differences", "remaining"]) {
      if (resource[k] === undefined) continue;
      assert.ok(Array.isArray(resource[k]), `${at}.${k}: an array`);
      for (const d of resource[k] as unknown[]) {
        assert.ok(typeof d === "string" && d !== "", `${at}.${k}: strings`);
      }
    }
    assert.ok((resource.differences as unknown[]).length > 0, `${at}.differences: not empty`);
    if (resource.result !== undefined) {
      assert.ok(["reapplied", "refused"].includes(resource.result as string), `${at}.result`);
      assert.equal(report.command, "migrate", `${at}.result outside migrate`);
      assert.equal(resource.reapply, true, `${at}.result without reapply`);
      assert.ok(Array.isArray(resource.remaining), `${at}.remaining with result`);
    } else assert.equal(resource.remaining, undefined, `${at}.remaining without result`);
    assert.equal(
      resource.note === undefined,
      resource.reapply,
      `${at}.note: exactly when not reapplied`,
    );
  }
}

// What a file's record says of its run (docs/migrations-reference.md, "Status"): on the reports of
// runs that write no record, for files that have one, with at least one of its fields.
function checkApplied(value: unknown, where: string, file: Json, report: Json): void {
  assert.ok(
    ["status", "validate", "dry-run"].includes(report.command as string) || report.dryRun === true,
    `${where} on a run that writes records`,
  );
  assert.ok(!["apply", "unknown"].includes(file.action as string), `${where} without a record`);
  const applied = keys(value, where, [], ["at", "by", "runnerVersion"]);
  assert.ok(Object.keys(applied).length > 0, `${where}: says something, or is absent`);
  if (applied.at !== undefined) {
    assert.match(String(applied.at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `${where}.at`);
  }
  text(applied, "at", where);
  text(applied, "by", where);
  text(applied, "runnerVersion", where);
}

/**
 * Checks that `value` is a report of the documented shape, with nothing else in it, and returns
 * it typed.
 */
export function checkReport(value: unknown): Report {
  const report = keys(value, "report", ["command", "connections", "ms"], ["dryRun", "error"]);
  if (report.dryRun !== undefined) assert.equal(report.dryRun, true, "dryRun: true or absent");
  assert.ok(report.command === null || COMMANDS.includes(report.command as string), "command");
  count(report, "ms", "report");
  assert.ok(Array.isArray(report.connections), "connections: an array");
  for (const [i, c] of (report.connections as unknown[]).entries()) {
    const where = `connections[${i}]`;
    const connection = keys(
      c,
      where,
      ["name", "state", "files", "applied", "skipped", "requests", "ms"],
      [
        "reason",
        "unlocked",
        "note",
        "strictOrder",
        "validateOnMigrate",
        "drift",
        "ignored",
        "callbacks",
      ],
    );
    if (connection.callbacks !== undefined) {
      const callbacks = connection.callbacks as unknown[];
      assert.ok(
        Array.isArray(callbacks) && callbacks.length > 0,
        `${where}.callbacks: a list, or absent`,
      );
      for (const [j, cb] of callbacks.entries()) {
        const at = `${where}.callbacks[${j}]`;
        const callback = keys(cb, at, ["path", "event"], ["supported", "runs", "ms"]);
        text(callback, "path", at, true);
        text(callback, "event", at, true);
        if (callback.supported !== undefined) assert.equal(callback.supported, false, at);
        if (callback.runs !== undefined) count(callback, "runs", at);
        if (callback.ms !== undefined) count(callback, "ms", at);
        // A callback of an event Thaw does not run never runs.
        assert.ok(callback.supported === undefined || callback.runs === undefined, at);
      }
    }
    if (connection.ignored !== undefined) {
      const ignored = connection.ignored as unknown[];
      assert.ok(
        Array.isArray(ignored) && ignored.length > 0,
        `${where}.ignored: a list, or absent`,
      );
      for (const path of ignored) assert.equal(typeof path, "string", `${where}.ignored`);
    }
    if (connection.drift !== undefined) checkDrift(connection.drift, `${where}.drift`, report);
    for (const flag of ["strictOrder", "validateOnMigrate"]) {
      if (connection[flag] === undefined) continue;
      assert.equal(connection[flag], true, `${where}.${flag}: true or absent`);
    }
    text(connection, "name", where, true);
    assert.ok(STATES.includes(connection.state as string), `${where}.state: ${connection.state}`);
    // A connection not run always says why; one that ran has no reason.
    assert.equal(connection.reason === undefined, connection.state === "ran", `${where}.reason`);
    text(connection, "reason", where);
    text(connection, "note", where);
    for (const k of ["applied", "skipped", "requests", "ms"]) count(connection, k, where);
    if (connection.unlocked !== undefined) {
      assert.equal(report.command, "unlock", `${where}.unlocked outside unlock`);
      if (connection.unlocked !== "nothing") {
        const holder = keys(
          connection.unlocked,
          `${where}.unlocked`,
          ["owner", "host", "pid"],
          ["acquired_at", "expires_at"],
        );
        count(holder, "pid", `${where}.unlocked`);
      }
    }
    assert.ok(Array.isArray(connection.files), `${where}.files: an array`);
    for (const [j, f] of (connection.files as unknown[]).entries()) {
      const at = `${where}.files[${j}]`;
      const file = keys(f, at, ["path", "action"], [
        "request",
        "overwrites",
        "code",
        "resource",
        "outOfOrder",
        "renamedFrom",
        "sameResourceAs",
        "baselined",
        "inProgress",
        "result",
        "status",
        "ms",
        "notice",
        "reindex",
        "applied",
        "recordChecksum",
      ]);
      text(file, "path", at, true);
      if (file.applied !== undefined) checkApplied(file.applied, `${at}.applied`, file, report);
      if (file.reindex !== undefined) {
        const r = keys(file.reindex, `${at}.reindex`, [
          "source",
          "index",
          "alias",
          "resumed",
          "deletedSource",
        ], ["documents", "copyMs", "documentsPerSecond", "writeBlockedMs"]);
        for (const k of ["source", "index", "alias"]) text(r, k, `${at}.reindex`, true);
        for (const k of ["documents", "copyMs", "documentsPerSecond", "writeBlockedMs"]) {
          if (r[k] !== undefined) count(r, k, `${at}.reindex`);
        }
        // A reindex undone moves its alias back: reported as the reindex it is.
        const results = report.command === "undo" ? ["undone"] : ["reindexed", "exists"];
        assert.ok(results.includes(file.result as string), `${at}.result`);
      }
      if (file.recordChecksum !== undefined) {
        assert.match(String(file.recordChecksum), /^\S+$/, `${at}.recordChecksum`);
      }
      if (file.request !== undefined) {
        assert.match(String(file.request), /^[A-Z]+ \/\S*$/, `${at}.request: METHOD /path`);
      }
      for (const k of ["outOfOrder", "renamedFrom", "sameResourceAs", "resource", "overwrites"]) {
        if (file[k] !== undefined) text(file, k, at, true);
      }
      assert.equal(file.renamedFrom !== undefined, file.action === "rename", `${at}.renamedFrom`);
      if (file.code !== undefined) assert.equal(file.code, true, `${at}.code: only true`);
      for (const flag of ["baselined", "inProgress"]) {
        if (file[flag] !== undefined) assert.equal(file[flag], true, `${at}.${flag}: only true`);
      }
      assert.ok(ACTIONS.includes(file.action as string), `${at}.action`);
    }
  }
  if (report.error !== undefined) {
    const error = keys(report.error, "error", ["kind", "message"], [
      "connection",
      "file",
      "callback",
      "request",
      "status",
      "line",
      "code",
      "reason",
    ]);
    assert.ok(KINDS.includes(error.kind as string), `error.kind: ${error.kind}`);
    text(error, "message", "error", true);
  }
  return value as Report;
}

/**
 * Parses a `--json` run: stdout holds exactly one report of the documented shape, and the exit
 * code is the one its error kind (or its absence) stands for.
 */
export function jsonRun(run: Captured): Report {
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.out);
  } catch (error) {
    assert.fail(`stdout is not one JSON document (${error}):\n${run.out}\nstderr:\n${run.err}`);
  }
  const report = checkReport(parsed);
  const expected = report.error === undefined ? 0 : EXIT[report.error.kind];
  assert.equal(run.code, expected, `exit code for ${report.error?.kind ?? "success"}`);
  return report;
}
