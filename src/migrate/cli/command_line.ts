import { parseArgs } from "node:util";
import type { Command } from "../command/command.ts";
import { COMMANDS, isCommand } from "../command/commands.ts";
import {
  checkRunRequest,
  DEFAULT_LOCK_TIMEOUT_SECONDS,
  DEFAULT_STOP_TIMEOUT_SECONDS,
  parseCommand,
  parseLockTimeout,
  parseMode,
  parseStopTimeout,
  type RunRequest,
  usageError,
} from "../run_request.ts";
import { definedFields } from "../../defined_fields.ts";

/** A parsed command line: the run it asks for, or `--help`. */
export interface CommandLine extends RunRequest {
  readonly help: boolean;
  /** `--json`: one JSON report on stdout, whatever the outcome. */
  readonly json: boolean;
}

export const USAGE =
  `Usage: thaw [migrate|undo|status|validate|baseline|repair|unlock] -c <config_dir> --migrations <migrations_root> [options]

Applies versioned migration files to the connections configured in <config_dir>.

Commands:
  migrate              apply new files (and, on search connections, changed ones): the default
  undo                 run the undo file (U<version>__) of the newest applied version, with
                       --count of the n newest, or with --target of every applied version above
                       it (under flyway_compatible, the target too), newest first; refused
                       whole, before anything runs, when one of them has no undo file, or is at
                       or below the baseline
  status               show each file as applied, pending, changed, missing, renamed, undone or
                       out of order (unknown when the records could not be read); sends only
                       reads
  validate             like status, but exits with 1 when a run-once file (SQL, a POST, DELETE or
                       PATCH request) was changed after it was applied, or under strict order when
                       a file is out of order or two files define one resource
  baseline             record every file as applied without running it (adopting a database or
                       cluster built by hand); refused where records exist, unless --force
  repair               record changed files at their current checksum, drop the records of
                       missing files and move those of renamed ones; runs no file
  unlock               remove a search connection's lock left by a runner that died (its
                       lease ran out, or its process is gone from this host)

  thaw manifest <dir>... --out <file>: writes the module that lists the bean classes under
  <dir>... for runtimes without a file system (thaw manifest --help)

Options:
  -m, --mode <type>    search: JSON files on OpenSearch connections (alias: opensearch)
                       sql: SQL files (the default)
  -c, --config <dir>   the folder of application.yml, search-config.yml or
                       datasource-config.yml (default: .)
  --migrations <dir>   the migrations root: one folder per connection (default: migrations)
  --sqlPath <dir>      an alias of --migrations (its old name)
  --connection <name>  only this connection (or datasource)
  --dry-run            migrate, undo, baseline, repair: print what would be done; sends only reads
  --force              baseline: record the files even where records exist; repair: also drop
                       missing records that sort after every file here; unlock: remove a lock
                       whose lease is still renewed (its runner looks alive)
  --target <version>   migrate: stop at this version; the files above it stay as they are;
                       undo: undo every applied version above it (flyway_compatible: and it)
  --count <n>          undo: undo the n newest applied versions
  --version <version>  baseline: record the files up to this version only; later ones stay
                       pending, for migrate to run
  --strict-order       refuse a pending file that sorts before an applied one (else: a warning)
  --no-strict-order    only warn, whatever migrations.strict_order says
  --drift              search: status, validate, migrate also compare each template, policy,
                       index and alias of the applied files with the cluster; validate fails
                       when one differs, migrate applies its file again
  --json               print one JSON report on stdout instead of the human output, whatever
                       the outcome (errors too)
  --lock-timeout <s>   seconds to wait while another runner holds the lock (default: ${DEFAULT_LOCK_TIMEOUT_SECONDS})
  --stop-timeout <s>   seconds a code migration or callback may run on after Ctrl-C or SIGTERM;
                       then it is abandoned, its file rolled back, and the run reported
                       interrupted (default: ${DEFAULT_STOP_TIMEOUT_SECONDS})
  -h, --help           this text

Exit codes: 0 success, 1 a migration failed, 2 usage or configuration error, 3 lock not acquired.`;

const OPTIONS = {
  mode: { type: "string", short: "m" },
  config: { type: "string", short: "c" },
  migrations: { type: "string" },
  // The old name of --migrations, kept as its alias.
  sqlPath: { type: "string" },
  connection: { type: "string" },
  "dry-run": { type: "boolean" },
  "strict-order": { type: "boolean" },
  "no-strict-order": { type: "boolean" },
  drift: { type: "boolean" },
  force: { type: "boolean" },
  json: { type: "boolean" },
  "lock-timeout": { type: "string" },
  "stop-timeout": { type: "string" },
  target: { type: "string" },
  version: { type: "string" },
  count: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * Whether `--json` was asked for, read from the raw arguments (up to `--`): a command line that
 * {@linkcode parseCommandLine} refuses still gets its report as JSON. Where the parser accepts the
 * line, this is its `json`.
 */
export function jsonRequested(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--json" || arg.startsWith("--json=")) return true;
  }
  return false;
}

/**
 * The command a refused command line was about, for its report: its one positional when that
 * names a command, `migrate` when there is none, else `undefined`.
 */
export function commandNamed(args: readonly string[]): Command | undefined {
  const { positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: false,
    options: OPTIONS,
  });
  if (positionals.length === 0) return "migrate";
  const [command] = positionals;
  return positionals.length === 1 && isCommand(command) ? command : undefined;
}

// `--count`: digits only, so that `--count 2.5` or `--count 1e3` is refused rather than read.
function parseCount(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  throw usageError(`--count ${text}: expected a whole number of versions, 1 or more`);
}

/** Parses the arguments (without the runtime and script), or throws a `usage` MigrationError. */
export function parseCommandLine(args: readonly string[]): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) {
    throw usageError(`one command expected, got: ${positionals.join(" ")}`);
  }
  const command = parseCommand(positionals[0] ?? "migrate");
  const mode = parseMode(values.mode ?? "sql");
  const lockTimeoutMs = parseLockTimeout(
    values["lock-timeout"] ?? String(DEFAULT_LOCK_TIMEOUT_SECONDS),
  );
  for (const key of ["config", "migrations", "sqlPath", "connection"] as const) {
    if (values[key] === "") throw usageError(`--${key} needs a value`);
  }
  if (values.migrations !== undefined && values.sqlPath !== undefined) {
    throw usageError("--migrations and --sqlPath (its old name): give one");
  }
  // One version option per command, each spelt as the command's own (Flyway's `target`,
  // `baselineVersion`): the other spelling is a mistake worth naming.
  const spelt = values.target !== undefined
    ? "--target"
    : values.version !== undefined
    ? "--version"
    : undefined;
  if (values.target !== undefined && values.version !== undefined) {
    throw usageError(
      "--target and --version: give one (migrate takes --target, baseline --version)",
    );
  }
  const takes = COMMANDS[command].target;
  if (spelt !== undefined && takes !== undefined && spelt !== takes) {
    throw usageError(`${spelt} does not apply to ${command}: ${command} takes ${takes}`);
  }
  if (values["strict-order"] && values["no-strict-order"]) {
    throw usageError("--strict-order and --no-strict-order contradict each other");
  }
  const line: CommandLine = {
    help: values.help ?? false,
    mode,
    command,
    configDir: values.config ?? ".",
    migrations: values.migrations ?? values.sqlPath ?? "migrations",
    ...definedFields({ connection: values.connection }),
    dryRun: values["dry-run"] ?? false,
    ...(values["strict-order"] || values["no-strict-order"]
      ? { strictOrder: values["strict-order"] === true }
      : {}),
    force: values.force ?? false,
    ...(values.drift ? { drift: true as const } : {}),
    ...(values.target ?? values.version) === undefined
      ? {}
      : { target: (values.target ?? values.version)! },
    ...(values.count === undefined ? {} : { count: parseCount(values.count) }),
    json: values.json ?? false,
    lockTimeoutMs,
    ...(values["stop-timeout"] === undefined
      ? {}
      : { stopTimeoutMs: parseStopTimeout(values["stop-timeout"]) }),
  };
  // Which options apply to which command, and to which mode: the same rules as `migrate()`'s.
  checkRunRequest(line);
  return line;
}
