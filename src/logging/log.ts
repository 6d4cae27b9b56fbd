// The logger an app's bean writes with: `@Autowired(Log) log!: Log` gives each bean one named
// after its class, through the container's per-class injection (FOR_CLASS).
import { FOR_CLASS } from "../context/field_injection.ts";
import type { LogLevel } from "./logging_system.ts";

/** Where a {@linkcode Log}'s lines go: the logging feature's writer. */
export interface LogSink {
  /** Whether a line of `level` of the logger `name` is written, at this moment. */
  enabled(name: string, level: LogLevel): boolean;
  /** Writes one line, if its level is enabled. */
  write(name: string, level: LogLevel, message: string, details: readonly unknown[]): void;
}

/**
 * A named logger, levelled by `logging.level` and the `loggers` endpoint: a line below its
 * logger's level is not written. `@Autowired(Log)` gives a bean the logger named after its class;
 * the bean found by `getBean(Log)` is `ROOT`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Log } from "./log.ts";
 *
 * // The logging feature makes them over its writer; any sink will do to see what a Log does.
 * const written: string[] = [];
 * const enabled = (_name: string, level: string) => level !== "DEBUG" && level !== "TRACE";
 * const log = new Log("Billing", {
 *   enabled,
 *   write: (name, level, message) => {
 *     if (enabled(name, level)) written.push(`${level} ${name}: ${message}`);
 *   },
 * });
 * log.debug("not written");
 * log.info("invoice sent");
 * assert.equal(log.isEnabled("DEBUG"), false);
 * assert.deepEqual(written, ["INFO Billing: invoice sent"]);
 * ```
 */
export class Log {
  /** The logger's name: a bean's class name, `ROOT`. */
  readonly name: string;
  readonly #sink: LogSink;

  /** The logger `name`, writing to `sink`: the logging feature makes them. */
  constructor(name: string, sink: LogSink) {
    this.name = name;
    this.#sink = sink;
  }

  /** Whether a line of `level` is written, at this moment (to skip making an expensive one). */
  isEnabled(level: LogLevel): boolean {
    return this.#sink.enabled(this.name, level);
  }

  /** A failure; `details` are the error and fields (objects) or values. */
  error(message: string, ...details: unknown[]): void {
    this.#write("ERROR", message, details);
  }

  /** Something that may need attention. */
  warn(message: string, ...details: unknown[]): void {
    this.#write("WARN", message, details);
  }

  /** What the app does, as an operator follows it. */
  info(message: string, ...details: unknown[]): void {
    this.#write("INFO", message, details);
  }

  /** What a developer follows. */
  debug(message: string, ...details: unknown[]): void {
    this.#write("DEBUG", message, details);
  }

  /** Every step. */
  trace(message: string, ...details: unknown[]): void {
    this.#write("TRACE", message, details);
  }

  /** The logger named after `cls`, for a field of a bean of that class (the container asks). */
  [FOR_CLASS](cls: { readonly name: string }): Log {
    return new Log(cls.name || "(anonymous)", this.#sink);
  }

  #write(level: LogLevel, message: string, details: unknown[]): void {
    try {
      this.#sink.write(this.name, level, message, details);
    } catch {
      // A line that cannot be written does not fail what the app was doing.
    }
  }
}
