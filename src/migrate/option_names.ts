import type { Command } from "./command/command_name.ts";

/** What the names need of a command that takes a target version: its name and its option. */
export interface TargetTaker {
  readonly name: Command;
  /** As the command line spells it: `--target`, `--version`. */
  readonly target?: string;
}

/**
 * How a message names the runner's options: as whoever started the run spells them, so that a
 * message never sends `migrate()`'s caller looking for a command-line flag, nor the reverse.
 */
export interface OptionNames {
  readonly connection: string;
  readonly dryRun: string;
  readonly drift: string;
  readonly force: string;
  /** The folder of `application.yml`: `-c`, `config`. */
  readonly config: string;
  /** The migrations root: `--migrations`, `migrations`. */
  readonly migrations: string;
  /** How long a run waits for another runner's lock: `--lock-timeout`, `lockTimeoutMs`. */
  readonly lockTimeout: string;
  /** How long code may run on after an interruption: `--stop-timeout`, `stopTimeoutMs`. */
  readonly stopTimeout: string;
  /** What stops a run at a version: `--target/--version`, `target`. */
  readonly target: string;
  /** How many versions `undo` undoes: `--count`, `count`. */
  readonly count: string;
  /** The strict order option set one way: `--no-strict-order`, `strictOrder: false`. */
  strictOrder(on: boolean): string;
  /** The mode option with a value: `-m sql`, `mode "sql"`. */
  mode(mode: string): string;
  /** The connection option with a value: `--connection main`, `connection "main"`. */
  connectionValue(name: string): string;
  /**
   * A run to start, with options, quoted where the message needs it: `"unlock --force"`,
   * `migrate({ command: "unlock", force: true })`.
   */
  invocation(command: Command, options?: readonly ("force" | "drift")[]): string;
  /** Who takes a target version: `a target version applies to migrate --target, ...`. */
  targetTakers(takers: readonly TargetTaker[]): string;
  /** That option with a value: `--target v1`, `target "v1"`. */
  targetValue(command: TargetTaker, version: string): string;
}

/** The options as the command line spells them. */
export const COMMAND_LINE_NAMES: OptionNames = {
  connection: "--connection",
  dryRun: "--dry-run",
  drift: "--drift",
  force: "--force",
  config: "-c",
  migrations: "--migrations",
  lockTimeout: "--lock-timeout",
  stopTimeout: "--stop-timeout",
  target: "--target/--version",
  count: "--count",
  strictOrder: (on) => on ? "--strict-order" : "--no-strict-order",
  mode: (mode) => `-m ${mode}`,
  connectionValue: (name) => `--connection ${name}`,
  invocation: (command, options = []) =>
    `"${[command, ...options.map((option) => `--${option}`)].join(" ")}"`,
  targetTakers: (takers) =>
    `a target version applies to ${takers.map((c) => `${c.name} ${c.target}`).join(", ")}`,
  targetValue: (command, version) => `${command.target} ${version}`,
};

/** The options as `migrate()` and `readDatasource()` spell them. */
export const MIGRATE_API_NAMES: OptionNames = {
  connection: "connection",
  dryRun: "dryRun",
  drift: "drift",
  force: "force",
  config: "config",
  migrations: "migrations",
  lockTimeout: "lockTimeoutMs",
  stopTimeout: "stopTimeoutMs",
  target: "target",
  count: "count",
  strictOrder: (on) => `strictOrder: ${on}`,
  mode: (mode) => `mode ${JSON.stringify(mode)}`,
  connectionValue: (name) => `connection ${JSON.stringify(name)}`,
  invocation: (command, options = []) =>
    `migrate({ command: ${JSON.stringify(command)}${
      options.map((option) => `, ${option}: true`).join("")
    } })`,
  targetTakers: (takers) => `target applies to ${takers.map((c) => c.name).join(", ")}`,
  targetValue: (_command, version) => `target ${JSON.stringify(version)}`,
};
