import type { Mask } from "../../config/secrets_mask.ts";
import { definedFields } from "../../defined_fields.ts";
import type { MigrationCommand } from "../command/command.ts";
import { COMMANDS } from "../command/commands.ts";
import type { MigrationTarget } from "../driver.ts";
import type { CallbackEvent } from "../plan/callback_name.ts";
import type { PlannedFile } from "../plan/planned_file.ts";
import type { UndoableFile } from "../plan/undo_pairs.ts";
import { fireCallbacks, WORK_EVENTS, type WorkEvents } from "./callbacks.ts";
import { ConnectionRun } from "./connection_run.ts";
import type { ConnectionCallback, RunnerOptions, TargetWork } from "./target_work.ts";

/** One target's run, as its command, options and connection settings make it. */
export interface TargetRun<F extends PlannedFile> {
  readonly target: MigrationTarget<F>;
  readonly files: readonly F[];
  readonly undoFiles: readonly F[];
  readonly undoable: readonly UndoableFile[];
  readonly undoRefusal?: (file: F, undo: F) => string | undefined;
  readonly callbacks: readonly ConnectionCallback<F>[];
  readonly mask: Mask | undefined;
  readonly run: ConnectionRun;
  readonly options: RunnerOptions;
  readonly command: MigrationCommand;
  readonly force: boolean;
  readonly strict: boolean;
  readonly validateOnMigrate: boolean;
  /** `validate`, not in a dry run: its callbacks run. */
  readonly validating: boolean;
  /** `migrate`, not in a dry run: its callbacks run. */
  readonly migrating: boolean;
  /**
   * `migrate` or `undo` under flyway_compatible, not in a dry run: validated first, as Flyway
   * does, between the validate callbacks.
   */
  readonly validatesFirst: boolean;
  /** The events of the run's callbacks around its work (`migrate`, `undo`, not in a dry run). */
  readonly events: WorkEvents | undefined;
  /** The report shows what each record says of its run. */
  readonly showsRuns: boolean;
  readonly callbackPaths: ReadonlySet<string>;
  readonly fire: (event: CallbackEvent, stopped?: boolean) => Promise<void>;
}

/**
 * The connection's run, before anything is read: a command that works on the target alone
 * (`unlock`) reports none of the connection's settings or callbacks.
 */
export function connectionRun<F extends PlannedFile>(
  { settings, callbacks = [] }: TargetWork<F>,
  options: RunnerOptions,
): ConnectionRun {
  if (COMMANDS[options.command].alone) return new ConnectionRun();
  return new ConnectionRun({
    callbacks,
    strictOrder: options.strictOrder ?? settings?.strictOrder ?? false,
    validateOnMigrate: settings?.validateOnMigrate ?? false,
  });
}

/** The run of `work`'s target as `command` and `options` make it. */
export function targetRun<F extends PlannedFile>(
  work: TargetWork<F>,
  run: ConnectionRun,
  options: RunnerOptions,
  command: MigrationCommand,
  force: boolean,
): TargetRun<F> {
  const { target, files, mask, callbacks = [], undoFiles = [], undoable = [], undoRefusal } = work;
  const { dryRun } = options;
  const validateOnMigrate = run.validateOnMigrate;
  return {
    target,
    files,
    undoFiles,
    undoable,
    ...definedFields({ undoRefusal }),
    callbacks,
    mask,
    run,
    options,
    command,
    force,
    strict: run.strictOrder,
    validateOnMigrate,
    // Only migrate, undo and validate run callbacks, and never in a dry run: status, baseline
    // and repair list them.
    validating: command.name === "validate" && !dryRun,
    migrating: command.name === "migrate" && !dryRun,
    validatesFirst: (command.name === "migrate" || command.name === "undo") && !dryRun &&
      validateOnMigrate,
    events: dryRun ? undefined : WORK_EVENTS[command.name],
    // A run that writes no record reports what each record says of its run: the records stay so.
    // One that writes them would report what they said before it replaced them.
    showsRuns: !command.writes || dryRun,
    callbackPaths: new Set(callbacks.map((c) => c.path)),
    fire: (event, stopped = false) =>
      fireCallbacks(target, callbacks, event, run, options.progress, stopped),
  };
}
