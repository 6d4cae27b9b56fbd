import type { MigrationFile } from "../files/migration_files.ts";
import { MigrationFileError } from "../migration_error.ts";
import {
  CALLBACK_EVENTS,
  type CallbackName,
  FLYWAY_EVENT_IDS,
  readCallbackName,
} from "./callback_name.ts";
import { compareCodePoints, compareVersionPaths } from "./version_order.ts";

/** A callback file found among a connection's files, with what its name says. */
export interface FoundCallback {
  readonly name: CallbackName;
  readonly file: MigrationFile;
}

/**
 * Sorts a connection's files into migrations and callbacks ({@linkcode readCallbackName}), before
 * any migration rule sees them: a callback is never versioned, ordered or recorded.
 *
 * Migrations keep the order they came in. Callbacks come in the order of their events
 * ({@linkcode CALLBACK_EVENTS}, then the Flyway events Thaw does not run, in Flyway's order), and
 * for one event in the order of Flyway's `SqlScriptCallback.compareTo`: the one without a
 * description first, then by description, read as Flyway reads it (`_` as a space), in code point
 * order; Flyway compares UTF-16 code units, which differs only between characters past U+FFFF and
 * those from U+E000.
 *
 * Throws a {@linkcode MigrationFileError} for a name `readCallbackName` refuses, and for two files
 * of one event and description, in two folders or with two suffixes (`beforeMigrate.sql`,
 * `beforeMigrate.ts`), naming both: both would run, where Flyway refuses them ("Found more than 1
 * SQL callback script called …").
 */
export function splitCallbacks(
  files: readonly MigrationFile[],
): { migrations: MigrationFile[]; callbacks: FoundCallback[] } {
  const migrations: MigrationFile[] = [];
  const callbacks: FoundCallback[] = [];
  for (const file of files) {
    const name = readCallbackName(file.path);
    if (name === undefined) migrations.push(file);
    else callbacks.push({ name, file });
  }
  callbacks.sort(compareCallbacks);
  // Sorted first, so that the same one of two files is named second whatever order they came in;
  // two of one event and description are then next to each other.
  for (let i = 1; i < callbacks.length; i++) {
    const a = callbacks[i - 1].name, b = callbacks[i].name;
    if (a.event === b.event && a.description === b.description) {
      throw new MigrationFileError(
        callbacks[i].file.path,
        `is the ${callbackLabel(b)} callback, as ${callbacks[i - 1].file.path} is: one event ` +
          `and description, in two folders or with two suffixes, would run twice; remove one, ` +
          `or give it another description (${b.event}__<description>)`,
      );
    }
  }
  return { migrations, callbacks };
}

function callbackLabel(name: CallbackName): string {
  return name.description === undefined ? name.event : `${name.event}__${name.description}`;
}

// Events Thaw runs, in its order, then the ones it only recognises, in Flyway's enum order.
const EVENT_RANK: ReadonlyMap<string, number> = new Map([
  ...CALLBACK_EVENTS.map((event, i) => [event, i] as const),
  ...FLYWAY_EVENT_IDS.filter((id) => !(CALLBACK_EVENTS as readonly string[]).includes(id))
    .map((id, i) => [id, CALLBACK_EVENTS.length + i] as const),
]);

function compareCallbacks(x: FoundCallback, y: FoundCallback): number {
  const event = EVENT_RANK.get(x.name.event)! - EVENT_RANK.get(y.name.event)!;
  if (event !== 0) return event;
  const a = x.name.description, b = y.name.description;
  if (a !== b) {
    if (a === undefined) return -1;
    if (b === undefined) return 1;
    // Flyway's ResourceNameParser hands compareTo the description with `_` as a space; the raw
    // text then breaks its ties, so that the order stays total.
    const c = compareCodePoints(a.replaceAll("_", " "), b.replaceAll("_", " "));
    if (c !== 0) return c;
    return compareCodePoints(a, b);
  }
  return compareVersionPaths(x.file.path, y.file.path);
}
