// SQLite's own settings of a datasource's pool (`pool.sqlite`): the pragmas each connection gets
// as it opens. Read from the configuration, checked from code, and turned into pragmas here, in
// one place, so that what is SQLite's stays out of the other pools.
import { ConfigError } from "../config/config_error.ts";
import { shownValue } from "../shown_value.ts";
import { isMapping } from "../object_guards.ts";

/** How hard SQLite syncs a commit to the disk: `PRAGMA synchronous`. */
export type SqliteSynchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";
/**
 * Where SQLite keeps what a transaction undoes: `PRAGMA journal_mode`. Not `OFF`: the SQLite of
 * Deno, Bun and Node is built defensive (SQLITE_DBCONFIG_DEFENSIVE), which keeps the journal.
 */
export type SqliteJournalMode = "DELETE" | "TRUNCATE" | "PERSIST" | "MEMORY" | "WAL";

/** The `pool.sqlite` settings of a SQLite datasource; each applied on every connection opened. */
export interface SqliteSettings {
  /** `pool.sqlite.synchronous`; unset: SQLite's own (FULL). */
  readonly synchronous?: SqliteSynchronous;
  /** `pool.sqlite.journal-mode`; unset: WAL for a file, `memory` for `:memory:`. */
  readonly journalMode?: SqliteJournalMode;
  /** `pool.sqlite.foreign-keys`: SQLite enforces `REFERENCES` (default true). */
  readonly foreignKeys?: boolean;
}

const SYNCHRONOUS: readonly SqliteSynchronous[] = ["OFF", "NORMAL", "FULL", "EXTRA"];
const JOURNAL_MODES: readonly SqliteJournalMode[] = [
  "DELETE",
  "TRUNCATE",
  "PERSIST",
  "MEMORY",
  "WAL",
];
// The keys of `pool.sqlite`, and the setting each gives.
const KEYS: Readonly<Record<string, keyof SqliteSettings>> = {
  synchronous: "synchronous",
  "journal-mode": "journalMode",
  "foreign-keys": "foreignKeys",
};
const KEY_LIST = Object.keys(KEYS).join(", ");

/** The key a user writes for `setting` (`pool.sqlite.journal-mode`), as errors name it. */
function keyOf(setting: keyof SqliteSettings): string {
  return `pool.sqlite.${Object.keys(KEYS).find((k) => KEYS[k] === setting)}`;
}

// What a setting must be, as the message after its key says it; `undefined` when it is that.
function wrongValue(setting: keyof SqliteSettings, value: unknown): string | undefined {
  switch (setting) {
    case "synchronous":
      return SYNCHRONOUS.includes(value as SqliteSynchronous)
        ? undefined
        : `must be OFF, NORMAL, FULL or EXTRA, got ${shownValue(value)}`;
    case "journalMode":
      return JOURNAL_MODES.includes(value as SqliteJournalMode)
        ? undefined
        : value === "OFF"
        ? "cannot be OFF: the SQLite of Deno, Bun and Node is built defensive, which keeps a " +
          "journal (SQLite would say delete); MEMORY is the nearest, got OFF"
        : `must be DELETE, TRUNCATE, PERSIST, MEMORY or WAL, got ${shownValue(value)}`;
    case "foreignKeys":
      return typeof value === "boolean"
        ? undefined
        : `must be true or false, got ${shownValue(value)}`;
  }
}

/**
 * The settings a `pool.sqlite` mapping gives: the names in any letter case (`normal`), a boolean
 * also as text (`"true"`, as an environment variable gives it). A `ConfigError` naming the key,
 * where `at` places it, for an unknown key or a value out of range.
 */
export function sqliteSettingsFrom(raw: unknown, at: (key: string) => string): SqliteSettings {
  if (!isMapping(raw)) {
    throw new ConfigError(
      `${at("pool.sqlite")} must be a mapping (${KEY_LIST}), got ${shownValue(raw)}`,
    );
  }
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (field === undefined) {
      throw new ConfigError(`${at(`pool.sqlite.${key}`)} is not a SQLite setting (${KEY_LIST})`);
    }
    const read = field === "foreignKeys"
      ? (value === "true" ? true : value === "false" ? false : value)
      : typeof value === "string"
      ? value.toUpperCase()
      : value;
    const wrong = wrongValue(field, read);
    if (wrong !== undefined) {
      throw new ConfigError(
        `${at(`pool.sqlite.${key}`)} ${wrong.replace(/got .*$/, "")}got ${shownValue(value)}`,
      );
    }
    settings[field] = read;
  }
  return settings as SqliteSettings;
}

/**
 * `settings` checked as code gives them (names in capitals), foreign keys on unless turned off;
 * a RangeError names the datasource and the key.
 */
export function resolveSqliteSettings(
  datasource: string,
  settings: SqliteSettings | undefined,
): SqliteSettings {
  const resolved: Record<string, unknown> = { foreignKeys: true };
  for (const field of Object.values(KEYS)) {
    const value = settings?.[field];
    if (value === undefined) continue;
    const wrong = wrongValue(field, value);
    if (wrong !== undefined) {
      throw new RangeError(`datasource "${datasource}": ${keyOf(field)} ${wrong}`);
    }
    resolved[field] = value;
  }
  // As given, the defaults after them: a deepEqual of what was asked reads in the same order.
  const { foreignKeys, ...rest } = resolved;
  return { ...rest, foreignKeys } as SqliteSettings;
}

/**
 * Why `settings` cannot apply to a datasource of `kind` at `location` (the key, and what to say
 * after it), or `undefined`: SQLite's settings on another database (refused rather than ignored,
 * as a key that does nothing is a mistake to show), and a journal `:memory:` cannot have.
 */
export function sqliteMisfit(
  kind: string,
  location: string,
  settings: SqliteSettings | undefined,
): { key: string; message: string } | undefined {
  if (settings === undefined) return undefined;
  const given = (Object.keys(settings) as (keyof SqliteSettings)[]).filter((k) =>
    settings[k] !== undefined
  );
  if (given.length === 0) return undefined;
  if (kind !== "sqlite") {
    const database = kind === "postgres" ? "PostgreSQL" : "MariaDB or MySQL";
    return {
      key: keyOf(given[0]),
      message: `is a SQLite setting, and this datasource is ${database}: remove pool.sqlite`,
    };
  }
  const mode = settings.journalMode;
  if (location === ":memory:" && mode !== undefined && mode !== "MEMORY") {
    return {
      key: keyOf("journalMode"),
      message: `${mode} is not possible on sqlite::memory:, whose journal is in memory: MEMORY, ` +
        "or leave the key out (SQLite would keep memory)",
    };
  }
  return undefined;
}

/** One pragma to run on a connection as it opens, and what SQLite must answer to it. */
export interface SqlitePragma {
  readonly text: string;
  /** The `journal_mode` SQLite must say it took, lower case; a mismatch names `key`. */
  readonly expect?: string;
  readonly key?: string;
  /** Tried, its failure left alone: the default WAL on a file SQLite cannot switch. */
  readonly optional?: boolean;
}

/**
 * The pragmas of `settings` for a connection of `location`, in the order they run: foreign keys,
 * then the journal (WAL for a file unless another is asked, tried but not required), then
 * synchronous, whose meaning depends on the journal.
 */
export function sqlitePragmas(settings: SqliteSettings, location: string): SqlitePragma[] {
  const pragmas: SqlitePragma[] = [
    { text: `PRAGMA foreign_keys = ${settings.foreignKeys === false ? "OFF" : "ON"}` },
  ];
  if (settings.journalMode !== undefined) {
    pragmas.push({
      text: `PRAGMA journal_mode = ${settings.journalMode}`,
      expect: settings.journalMode.toLowerCase(),
      key: keyOf("journalMode"),
    });
  } else if (location !== ":memory:") {
    pragmas.push({ text: "PRAGMA journal_mode = WAL", optional: true });
  }
  if (settings.synchronous !== undefined) {
    pragmas.push({ text: `PRAGMA synchronous = ${settings.synchronous}` });
  }
  return pragmas;
}
