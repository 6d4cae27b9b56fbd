import type { Command } from "../command/command.ts";
import { COMMANDS } from "../command/commands.ts";
import type { FileRecord, MigrationTarget } from "../driver.ts";
import { MigrationFileError, PlanError } from "../migration_error.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import type { CallbackEvent } from "../plan/callback_name.ts";
import type { PlannedCallback } from "../plan/planned_callback.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { Progress } from "../run_report.ts";
import type { ConnectionRun } from "./connection_run.ts";
import type { ConnectionCallback } from "./target_work.ts";

// The events a migrate run fires.
const MIGRATE_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeMigrate",
  "beforeEachMigrate",
  "afterEachMigrate",
  "afterMigrate",
  "afterMigrateError",
]);

// The events an undo run fires.
const UNDO_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeUndo",
  "beforeEachUndo",
  "afterEachUndo",
  "afterUndo",
  "afterUndoError",
]);

/** The events a validate fires (and a migrate under flyway_compatible). */
export const VALIDATE_EVENTS: ReadonlySet<string> = new Set<CallbackEvent>([
  "beforeValidate",
  "afterValidate",
]);

/** The events of a migrate or an undo run, around its work and each of its files. */
export interface WorkEvents {
  readonly before: CallbackEvent;
  readonly beforeEach: CallbackEvent;
  readonly afterEach: CallbackEvent;
  readonly after: CallbackEvent;
  readonly error: CallbackEvent;
}

/** The events around the work of each command that has any. */
export const WORK_EVENTS: Partial<Record<Command, WorkEvents>> = {
  migrate: {
    before: "beforeMigrate",
    beforeEach: "beforeEachMigrate",
    afterEach: "afterEachMigrate",
    after: "afterMigrate",
    error: "afterMigrateError",
  },
  undo: {
    before: "beforeUndo",
    beforeEach: "beforeEachUndo",
    afterEach: "afterEachUndo",
    after: "afterUndo",
    error: "afterUndoError",
  },
};

/** The events a run of `command` fires; `validates`: the validate events too. */
export function firedEvents(command: Command, validates: boolean): ReadonlySet<string> {
  return new Set([
    ...(command === "migrate" ? MIGRATE_EVENTS : []),
    ...(command === "undo" ? UNDO_EVENTS : []),
    ...(validates ? VALIDATE_EVENTS : []),
  ]);
}

/**
 * A file this runtime cannot run (a `.ts` file on a Node without TypeScript) stops the run before
 * it writes anything on the connection, as a file that cannot be planned does.
 */
export function refuseUnrunnable(
  connection: string,
  running: readonly { readonly path: string; readonly file?: PlannedFile | undefined }[],
): void {
  for (const { path, file } of running) {
    if (file?.unrunnable !== undefined) {
      throw new PlanError(connection, new MigrationFileError(path, file.unrunnable));
    }
  }
}

/** The callbacks of `event` Thaw runs, in their order. */
export function planned<F>(
  callbacks: readonly ConnectionCallback<F>[],
  event: CallbackEvent,
): PlannedCallback<F>[] {
  return callbacks.flatMap((c) =>
    c.event === event && c.file !== undefined ? [{ event, path: c.path, file: c.file }] : []
  );
}

/**
 * Runs the callbacks of `event`, in order, each counted in the report and shown in the progress.
 * `stopped`: the run failed already (afterMigrateError), and a callback that fails is told, not
 * thrown: the failure that stopped the run stays the one reported.
 */
export async function fireCallbacks<F extends PlannedFile>(
  target: MigrationTarget<F>,
  callbacks: readonly ConnectionCallback<F>[],
  event: CallbackEvent,
  run: ConnectionRun,
  progress: Progress,
  stopped = false,
): Promise<void> {
  for (const callback of planned(callbacks, event)) {
    let ran;
    try {
      ran = await target.runCallback(callback);
    } catch (error) {
      if (!stopped) throw error;
      progress.notice(
        `${target.name}: the ${event} callback ${callback.path} failed too: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
      continue;
    }
    run.ranCallback(callback.path, ran.ms);
    progress.step(target.name, `callback ${callback.path} (${event}, ${ran.ms} ms)`);
    if (ran.notice) progress.notice(`${target.name}: ${ran.notice}`);
  }
}

/** Whether this connection alone passes `validate`: afterValidate runs only then, as in Flyway. */
export function passes(run: ConnectionRun, name: string): boolean {
  const connection = run.report(name, [], { requests: 0, ms: 0 });
  return COMMANDS.validate.verdict?.({ command: "validate", connections: [connection], ms: 0 }) ===
    undefined;
}

/** Files earlier versions ran once as migrations, named as callbacks: they now run at each event. */
export function recordedCallbacks(
  name: string,
  callbacks: readonly ConnectionCallback<unknown>[],
  records: ReadonlyMap<string, FileRecord>,
  progress: Progress,
  names: OptionNames = COMMAND_LINE_NAMES,
): void {
  for (const c of callbacks) {
    if (!records.has(c.path)) continue;
    progress.notice(
      `${name}: ${c.path} has a record of a run as a migration, from an earlier version; it is ` +
        `now the ${c.event} callback${
          c.file === undefined ? ", an event Thaw does not run" : ", run at each of its events"
        } (${names.invocation("repair")} drops its record)`,
    );
  }
}

/** A copied Flyway folder may hold callbacks of events Thaw does not run: said, never run. */
export function unsupportedCallbacks(
  name: string,
  callbacks: readonly ConnectionCallback<unknown>[],
  progress: Progress,
): void {
  for (const c of callbacks) {
    if (c.file !== undefined) continue;
    progress.notice(
      `${name}: ${c.path} is Flyway's ${c.event} callback, an event Thaw does not run: it is ` +
        "not run (docs/migrations-reference.md lists the events Thaw runs)",
    );
  }
}
