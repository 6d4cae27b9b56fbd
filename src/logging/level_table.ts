// The levels of an app's loggers, as the logging feature keeps them: the ones configured by name,
// and each logger's effective level, its own or its nearest configured dotted parent's or ROOT's.
import { loggerName } from "./configured_levels.ts";
import {
  LOG_LEVELS,
  type LoggerLevels,
  LoggingSystem,
  type LogLevel,
  ROOT_LOGGER,
} from "./logging_system.ts";
import { shownValue } from "../shown_value.ts";

/** The loggers' levels: the `LoggingSystem` bean of the logging feature. */
export class LevelTable extends LoggingSystem {
  readonly #configured: Map<string, LogLevel>;
  readonly #made = new Set<string>();
  // Each logger's effective level, looked up once; forgotten whenever a level changes.
  readonly #effective = new Map<string, LogLevel>();

  /** `configured`: the levels set by name (`logging.level`); ROOT is `INFO` unless it says. */
  constructor(configured: ReadonlyMap<string, LogLevel> = new Map()) {
    super();
    this.#configured = new Map([[ROOT_LOGGER, "INFO"]]);
    for (const [name, level] of configured) this.#configured.set(loggerName(name), level);
  }

  /** Notes that a logger of `name` exists, so that `loggers()` lists it. */
  made(name: string): void {
    this.#made.add(loggerName(name));
  }

  /** The level `name`'s lines are written at. */
  effectiveLevel(name: string): LogLevel {
    let level = this.#effective.get(name);
    if (level === undefined) {
      level = this.#lookup(loggerName(name));
      this.#effective.set(name, level);
    }
    return level;
  }

  /** Whether a line of `level` of the logger `name` is written. */
  enabled(name: string, level: LogLevel): boolean {
    // How many lines a level lets through is its place in LOG_LEVELS (OFF: none, TRACE: all).
    return level !== "OFF" &&
      LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(this.effectiveLevel(name));
  }

  loggers(): readonly LoggerLevels[] {
    const names = [...new Set([...this.#configured.keys(), ...this.#made])]
      .filter((name) => name !== ROOT_LOGGER)
      .sort();
    return [ROOT_LOGGER, ...names].map((name) => {
      const configuredLevel = this.#configured.get(name);
      return {
        name,
        ...(configuredLevel === undefined ? {} : { configuredLevel }),
        effectiveLevel: this.effectiveLevel(name),
      };
    });
  }

  setLevel(name: string, level: LogLevel | undefined): void {
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`setLevel: a logger's name is a non-empty text, got ${shownValue(name)}`);
    }
    if (level !== undefined && !LOG_LEVELS.includes(level)) {
      throw new TypeError(
        `setLevel(${shownValue(name)}): the levels are ${LOG_LEVELS.join(", ")}, got ${
          shownValue(level)
        }`,
      );
    }
    const logger = loggerName(name);
    // Named once, known from then on, as Logback makes a logger by its name: cleared, it is listed
    // with no level of its own rather than gone (Spring answers `configuredLevel: null`, not 404).
    this.#made.add(logger);
    if (level !== undefined) this.#configured.set(logger, level);
    else if (logger === ROOT_LOGGER) this.#configured.set(ROOT_LOGGER, "INFO");
    else this.#configured.delete(logger);
    this.#effective.clear();
  }

  // The logger's own level, else its nearest configured dotted parent's, else ROOT's.
  #lookup(name: string): LogLevel {
    for (let at = name; at !== "";) {
      const level = this.#configured.get(at);
      if (level !== undefined) return level;
      const dot = at.lastIndexOf(".");
      at = dot < 0 ? "" : at.slice(0, dot);
    }
    // ROOT is always configured (setLevel puts back its INFO): the default is never needed.
    return this.#configured.get(ROOT_LOGGER) ?? "INFO";
  }
}
