// What the actuator's `loggers` endpoint reads and changes of an app's loggers, apart from the
// logging feature that keeps them: a bean of this class, as Spring Boot's `LoggingSystem` is.

/** A logger's level, Spring's: from none (`OFF`) to every line (`TRACE`). */
export type LogLevel = "OFF" | "ERROR" | "WARN" | "INFO" | "DEBUG" | "TRACE";

/** The levels, from the fewest lines to the most, as the `loggers` endpoint lists them. */
export const LOG_LEVELS: readonly LogLevel[] = Object.freeze([
  "OFF",
  "ERROR",
  "WARN",
  "INFO",
  "DEBUG",
  "TRACE",
]);

/** The name of the root logger, whose level every logger without its own takes. */
export const ROOT_LOGGER = "ROOT";

/** One logger's levels. */
export interface LoggerLevels {
  /** Its name: `ROOT`, a bean's class name, a dotted name (`thaw.access`). */
  readonly name: string;
  /** The level set for it by name, in the configuration or since; none: it takes its parent's. */
  readonly configuredLevel?: LogLevel;
  /** The level its lines are written at: its own, or its nearest configured parent's, or ROOT's. */
  readonly effectiveLevel: LogLevel;
}

/**
 * The loggers of an app and their levels: registered as a bean by the logging feature, found by
 * this class by whatever reads or changes them (the actuator's `loggers` endpoint).
 */
export abstract class LoggingSystem {
  /**
   * Every logger known: `ROOT`, each one configured, each one made so far, and each one
   * `setLevel` named (cleared, it stays, with no level of its own); sorted, ROOT first.
   */
  abstract loggers(): readonly LoggerLevels[];
  /**
   * Sets a logger's level, or clears it (`undefined`), effective from its next line; the logger
   * need not exist yet. ROOT cannot be cleared: it is set to its default, `INFO`.
   */
  abstract setLevel(name: string, level: LogLevel | undefined): void;
}
