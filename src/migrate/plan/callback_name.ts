import { MigrationFileError } from "../migration_error.ts";

/**
 * The Flyway callback events Thaw runs: around `migrate` (and each file it applies), around
 * `validate`, and around `undo` (and each version it undoes). Every other id of Flyway's `Event` enum is recognised but not run
 * ({@linkcode FLYWAY_EVENT_IDS}).
 */
export type CallbackEvent =
  | "beforeMigrate"
  | "beforeEachMigrate"
  | "afterEachMigrate"
  | "afterMigrate"
  | "afterMigrateError"
  | "beforeValidate"
  | "afterValidate"
  | "beforeUndo"
  | "beforeEachUndo"
  | "afterEachUndo"
  | "afterUndo"
  | "afterUndoError";

/**
 * The events Thaw runs, in the order a `migrate` run reaches them: validate's pair first (Flyway's
 * `validateOnMigrate` fires them before `DbMigrate`), then the migrate events. `afterMigrate` and
 * `afterMigrateError` never both follow one success, but `afterMigrateError` comes last because it
 * is the one that can follow any other (a failing `afterMigrate` included); Flyway's `Event` enum
 * also puts `AFTER_MIGRATE` before `AFTER_MIGRATE_ERROR`. Undo's events come last, in the order an
 * `undo` run reaches them, on the same rule. Callbacks are listed in this order.
 */
export const CALLBACK_EVENTS: readonly CallbackEvent[] = Object.freeze([
  "beforeValidate",
  "afterValidate",
  "beforeMigrate",
  "beforeEachMigrate",
  "afterEachMigrate",
  "afterMigrate",
  "afterMigrateError",
  "beforeUndo",
  "beforeEachUndo",
  "afterEachUndo",
  "afterUndo",
  "afterUndoError",
]);

/**
 * Every id of Flyway's `org.flywaydb.core.api.callback.Event` (Flyway 10, which adds
 * `afterMigrateApplied`, `createSchema` and `beforeConnect` to the older list), in the enum's
 * order. Flyway's `…OperationFinish` constants for clean, validate, undo, repair and baseline all
 * carry the id `afterInfoOperationFinish`, so `afterCleanOperationFinish` is no id to Flyway and is
 * none here either. A file named after one of these ids is a callback to Flyway, never a migration,
 * so Thaw never runs it as one, even for the ids it does not run.
 */
export const FLYWAY_EVENT_IDS: readonly string[] = Object.freeze([
  "beforeClean",
  "afterClean",
  "afterCleanError",
  "beforeMigrate",
  "beforeEachMigrate",
  "beforeEachMigrateStatement",
  "afterEachMigrateStatement",
  "afterEachMigrateStatementError",
  "afterEachMigrate",
  "afterEachMigrateError",
  "beforeRepeatables",
  "afterVersioned",
  "afterMigrateApplied",
  "afterMigrate",
  "afterMigrateError",
  "beforeUndo",
  "beforeEachUndo",
  "beforeEachUndoStatement",
  "afterEachUndoStatement",
  "afterEachUndoStatementError",
  "afterEachUndo",
  "afterEachUndoError",
  "afterUndo",
  "afterUndoError",
  "beforeValidate",
  "afterValidate",
  "afterValidateError",
  "beforeBaseline",
  "afterBaseline",
  "afterBaselineError",
  "beforeRepair",
  "afterRepair",
  "afterRepairError",
  "beforeInfo",
  "afterInfo",
  "afterInfoError",
  "afterMigrateOperationFinish",
  "afterInfoOperationFinish",
  "createSchema",
  "beforeConnect",
]);

/**
 * What a callback file's name says: its event and the description after `__`, if any
 * (`beforeMigrate__vacuum.sql`: `beforeMigrate`, `vacuum`). `supported` tells an event Thaw runs
 * (then `event` is a {@linkcode CallbackEvent}) from a Flyway event it only recognises.
 *
 * `beforeMigrate__.sql` has the description `""`, and is another callback than
 * `beforeMigrate.sql` (no description), as Flyway reads it.
 */
export type CallbackName =
  | {
    readonly event: CallbackEvent;
    readonly description?: string;
    readonly supported: true;
  }
  | {
    readonly event: string;
    readonly description?: string;
    readonly supported: false;
  };

const SUPPORTED: ReadonlySet<string> = new Set(CALLBACK_EVENTS);
const IDS: ReadonlySet<string> = new Set(FLYWAY_EVENT_IDS);
// ASCII case only: a Unicode fold would let a Kelvin sign or a dotted I spell an id.
const foldAscii = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
const BY_FOLDED: ReadonlyMap<string, string> = new Map(
  FLYWAY_EVENT_IDS.map((id) => [foldAscii(id), id]),
);

/**
 * Reads the file at `path` as Flyway's `SqlScriptCallbackFactory` reads a callback script: the last
 * path segment (a callback may sit in any sub-folder), without its last `.ext` (`.sql`, `.SQL`,
 * `.json`, `.ts`, …), split at its first `__`; what comes before must be a Flyway event id, spelled
 * exactly. `undefined` for any other name: `V1__beforeMigrate.sql`, `beforeMigrateX.sql` and
 * `beforeMigrate_x.sql` are no callbacks.
 *
 * Throws a {@linkcode MigrationFileError} for a name whose event differs from an id only in case
 * (`BeforeMigrate.sql`, `AFTERMIGRATE__log.sql`): Flyway would skip it, and Thaw would run it once
 * as an ordinary migration, where its author meant it to run at every event.
 */
export function readCallbackName(path: string): CallbackName | undefined {
  const file = path.slice(path.lastIndexOf("/") + 1);
  const stem = file.replace(/\.[^.]*$/, "");
  const separator = stem.indexOf("__");
  const id = separator < 0 ? stem : stem.slice(0, separator);
  if (!IDS.has(id)) {
    const spelled = BY_FOLDED.get(foldAscii(id));
    if (spelled !== undefined) {
      const rest = file.slice(id.length);
      throw new MigrationFileError(
        path,
        `is named after the callback event ${spelled}, spelled ${id}: event names are ` +
          `case-sensitive, and this file would run once as an ordinary migration; name it ` +
          `${spelled}${rest} to make it a callback, or give it another name`,
      );
    }
    return undefined;
  }
  const description = separator < 0 ? {} : { description: stem.slice(separator + 2) };
  return SUPPORTED.has(id)
    ? { event: id as CallbackEvent, ...description, supported: true }
    : { event: id, ...description, supported: false };
}

/**
 * Whether the file at `path` is named after a Flyway event, in any case (`afterMigrate.ts`,
 * `AfterMigrate.ts`): a folder walk keeps such a file for {@linkcode readCallbackName} to read, or
 * to refuse, rather than leaving it out unseen. Never throws.
 */
export function namesCallbackEvent(path: string): boolean {
  const stem = path.slice(path.lastIndexOf("/") + 1).replace(/\.[^.]*$/, "");
  const separator = stem.indexOf("__");
  return BY_FOLDED.has(foldAscii(separator < 0 ? stem : stem.slice(0, separator)));
}
