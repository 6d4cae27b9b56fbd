import { exitCodeOf } from "./exit_code.ts";
import type { RunError, RunReport } from "./run_report.ts";

/**
 * A run did not succeed: a file failed, the lock was not acquired, the configuration or a file is
 * wrong, `validate` found changed files, or the run was stopped. The message is the report's
 * (`connection "main", file 002-orders.sql:3: ...: no such table: nope`); the report is kept
 * whole, and where it names them the connection, file, line and reason are copied here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrate, MigrationRunError } from "@thaw/thaw/migrate";
 *
 * try {
 *   await migrate({ config: "/no/such/folder", migrations: "/no/such/folder" });
 * } catch (error) {
 *   if (!(error instanceof MigrationRunError)) throw error;
 *   assert.equal(error.kind, "config");
 *   assert.equal(error.exitCode, 2); // as the command line would exit
 * }
 * ```
 */
export class MigrationRunError extends Error {
  /** The whole report of the run, as `--json` prints it. */
  readonly report: RunReport;
  /** Why the run stopped: `failure`, `lock`, `config`, `plan`, `invalid`, `interrupted`, `usage`. */
  readonly kind: RunError["kind"];
  /** The command line's exit code for it: 1 (failed), 2 (usage or configuration), 3 (lock). */
  readonly exitCode: number;
  /** The connection or datasource, where known. */
  readonly connection?: string;
  /** The file, relative to its connection's folder, where known. */
  readonly file?: string;
  /** SQL: the line of the failing statement in the file. */
  readonly line?: number;
  /** The reason without its location (the database's or the cluster's own message). */
  readonly reason?: string;

  /**
   * Creates the error from a report that holds one.
   *
   * @param report the run's report, with its `error`
   */
  constructor(report: RunReport & { readonly error: RunError }) {
    super(report.error.message);
    this.name = "MigrationRunError";
    this.report = report;
    this.kind = report.error.kind;
    this.exitCode = exitCodeOf(report);
    const { connection, file, line, reason } = report.error;
    if (connection !== undefined) this.connection = connection;
    if (file !== undefined) this.file = file;
    if (line !== undefined) this.line = line;
    if (reason !== undefined) this.reason = reason;
  }
}
