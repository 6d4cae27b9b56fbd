import type { Command } from "./command/command.ts";
import { COMMANDS, isCommand } from "./command/commands.ts";
import { BUILT_IN_CAPABILITIES } from "./built_in_capabilities.ts";
import type { DriverCapabilities, MigrationMode } from "./driver.ts";
import { MigrationError } from "./migration_error.ts";
import { isVersion } from "./plan/migration_name.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "./option_names.ts";
import {
  DEFAULT_STOP_TIMEOUT_SECONDS,
  MAX_STOP_TIMEOUT_SECONDS,
} from "./code/run_until_stopped.ts";

export { DEFAULT_STOP_TIMEOUT_SECONDS, MAX_STOP_TIMEOUT_SECONDS };

/**
 * One run, as both the command line and `migrate()` ask for it: which kind of migration, which
 * command, where, and its options.
 */
export interface RunRequest {
  /** `sql` (the default) or `search`. */
  readonly mode: MigrationMode;
  readonly command: Command;
  /** The folder of `application.yml` (`-c`). */
  readonly configDir: string;
  /** The migrations root: one folder per connection (`--migrations`). */
  readonly migrations: string;
  /** Only this connection (or datasource). */
  readonly connection?: string;
  /** Work out what would be done; send only reads. */
  readonly dryRun: boolean;
  /**
   * `--strict-order` (true) or `--no-strict-order` (false): whether a pending file that sorts
   * before an applied one is an error, over each connection's `migrations.strict_order`.
   */
  readonly strictOrder?: boolean;
  /**
   * `baseline --force`: record the current files even where records exist; `repair --force`:
   * also drop missing records that sort after every file of this checkout; `unlock --force`:
   * remove a lock whose lease is still renewed.
   */
  readonly force: boolean;
  /**
   * `--drift` (search; `status`, `validate`, `migrate`): compare the resources of applied files
   * with the cluster; `validate` fails on a difference, `migrate` applies the files again.
   * Absent when not given.
   */
  readonly drift?: true;
  /**
   * `migrate --target <version>`, `baseline --version <version>`: the files above this version
   * (Flyway's `1.2`, `9_4`) are left as they are. Absent when not given.
   */
  readonly target?: string;
  /**
   * `undo --count <n>`: the `n` newest applied versions are undone (golang-migrate's `down N`).
   * Absent when not given; never with `target`.
   */
  readonly count?: number;
  /** How long to wait while another runner holds the lock. */
  readonly lockTimeoutMs: number;
  /**
   * How long a code file (or callback) may run on after Ctrl-C or SIGTERM before it is abandoned,
   * its file rolled back and the run reported interrupted; {@linkcode DEFAULT_STOP_TIMEOUT_SECONDS}
   * when absent.
   */
  readonly stopTimeoutMs?: number;
}

/** The command line, or the options of `migrate()`, are wrong: nothing was read or sent. */
export function usageError(message: string): MigrationError {
  return new MigrationError("usage", message);
}

/** The longest lock wait a run accepts: a day. */
export const MAX_LOCK_TIMEOUT_SECONDS = 86_400;

/** Seconds to wait for another runner's lock, unless the run says otherwise. */
export const DEFAULT_LOCK_TIMEOUT_SECONDS = 60;

const names = (commands: readonly string[], last = ", ") =>
  commands.length > 1
    ? `${commands.slice(0, -1).join(", ")}${last}${commands.at(-1)}`
    : commands.join("");
const ALL = Object.values(COMMANDS);

/** The command `name` names, or a `usage` error listing the commands. */
export function parseCommand(name: string): Command {
  if (!isCommand(name)) {
    throw usageError(`unknown command "${name}" (${Object.keys(COMMANDS).join(", ")})`);
  }
  return name;
}

/** The mode `name` names (`-m`), in any case; `opensearch` is `search`. */
export function parseMode(
  name: string,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): MigrationMode {
  const lower = name.toLowerCase();
  if (lower === "search" || lower === "opensearch") return "search";
  if (lower === "sql") return "sql";
  throw usageError(`${optionNames.mode(name)}: expected search, opensearch or sql`);
}

/** `--lock-timeout`: a decimal number of seconds, to a day, as whole milliseconds. */
export function parseLockTimeout(seconds: string): number {
  return parseSeconds("--lock-timeout", seconds, MAX_LOCK_TIMEOUT_SECONDS);
}

/** `--stop-timeout`: a decimal number of seconds, to an hour, as whole milliseconds. */
export function parseStopTimeout(seconds: string): number {
  return parseSeconds("--stop-timeout", seconds, MAX_STOP_TIMEOUT_SECONDS);
}

// A flag's decimal number of seconds from 0 to `max`, as whole milliseconds.
function parseSeconds(flag: string, seconds: string, max: number): number {
  const value = /^\d+(\.\d+)?$/.test(seconds) ? Number(seconds) : NaN;
  if (!(value <= max)) {
    throw usageError(`${flag} ${seconds}: expected a number of seconds from 0 to ${max}`);
  }
  return Math.round(value * 1000);
}

/**
 * Checks a run request as a whole, whoever built it: a command that exists, and options that
 * apply to it (each command states which it takes) and to the driver of its mode (as
 * `capabilities` state what each can do: the built-in drivers' by default). Throws a `usage`
 * MigrationError naming the option as `optionNames` spell it (the command line's by default).
 */
export function checkRunRequest(
  request: RunRequest,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
  capabilities: Readonly<Record<MigrationMode, DriverCapabilities>> = BUILT_IN_CAPABILITIES,
): RunRequest {
  const command = parseCommand(request.command);
  const rules = COMMANDS[command];
  if (request.connection === "") throw usageError(`${optionNames.connection} needs a value`);
  if (request.dryRun && !rules.writes) {
    throw usageError(
      `${optionNames.dryRun} applies to ${
        names(ALL.filter((c) => c.writes).map((c) => c.name))
      }, not to ` +
        command,
    );
  }
  checkCapabilities(request, command, optionNames, capabilities);
  if (request.drift && !rules.drift) {
    // The commands that only read first: they are what --drift is mostly for.
    const takers = ALL.filter((c) => c.drift).sort((a, b) => Number(a.writes) - Number(b.writes));
    throw usageError(
      `${optionNames.drift} applies to ${names(takers.map((c) => c.name))}, not to ${command}`,
    );
  }
  checkVersions(request, command, optionNames);
  if (request.force && !rules.force) {
    throw usageError(
      `${optionNames.force} applies to ${
        names(ALL.filter((c) => c.force).map((c) => c.name), " and ")
      }, not to ${command}`,
    );
  }
  return request;
}

// The options that need a driver able to honour them: undo, --drift.
function checkCapabilities(
  request: RunRequest,
  command: Command,
  optionNames: OptionNames,
  capabilities: Readonly<Record<MigrationMode, DriverCapabilities>>,
): void {
  const able = (what: "undo" | "drift") =>
    (Object.keys(capabilities) as MigrationMode[]).filter((m) => capabilities[m][what] === true);
  const modes = (found: readonly MigrationMode[]) =>
    `${names(found, " and ")} connections (${found.map((m) => optionNames.mode(m)).join(", ")})`;
  if (command === "undo" && capabilities[request.mode].undo !== true) {
    throw usageError(
      `undo applies to ${modes(able("undo"))}, not yet to ${optionNames.mode(request.mode)}`,
    );
  }
  if (request.drift && !capabilities[request.mode].drift) {
    throw usageError(
      `${optionNames.drift} applies to ${modes(able("drift"))}, not to ${
        optionNames.mode(request.mode)
      }`,
    );
  }
}

// The target version and the count: each to a command that takes it, well formed, not both.
function checkVersions(request: RunRequest, command: Command, optionNames: OptionNames): void {
  const rules = COMMANDS[command];
  if (request.target !== undefined) {
    const takers = ALL.filter((c) => c.target !== undefined);
    if (rules.target === undefined) {
      throw usageError(`${optionNames.targetTakers(takers)}, not to ${command}`);
    }
    if (!isVersion(request.target)) {
      throw usageError(
        `${
          optionNames.targetValue(rules, request.target)
        }: expected a version, numbers joined by dots or ` +
          "underscores (1, 1.2, 1_2)",
      );
    }
  }
  if (request.count === undefined) return;
  if (command !== "undo") {
    throw usageError(`${optionNames.count} applies to undo, not to ${command}`);
  }
  if (!Number.isSafeInteger(request.count) || request.count < 1) {
    throw usageError(
      `${optionNames.count} ${request.count}: expected a whole number of versions, 1 or more`,
    );
  }
  if (request.target !== undefined) {
    throw usageError(
      `${optionNames.count} and ${
        optionNames.targetValue(rules, request.target)
      }: give one (the number of versions to undo, or the version to undo down to)`,
    );
  }
}
