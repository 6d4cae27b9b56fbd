// Where every logger's lines go, with the logging feature: filtered by the loggers' levels, then
// written to the app's logger (`bootstrap({ logger })`, `console`), plain or as one JSON object a
// line, masked. Its lines reach that logger through Thaw's safe logger, which escapes what a
// message must not carry (a line break, a terminal escape) in plain lines too.
import type { Mask } from "../config/secrets_mask.ts";
import type { Logger } from "../web/error_responder.ts";
import type { LevelTable } from "./level_table.ts";
import type { LogSink } from "./log.ts";
import type { LogLevel } from "./logging_system.ts";
import { type StructuredFormat, structuredLine } from "./structured_line.ts";

/** The names of Thaw's own loggers, whose plain lines stay as Thaw writes them without the feature. */
export const THAW_LOGGER = "thaw";
/** The access log's logger. */
export const ACCESS_LOGGER = "thaw.access";

/** The feature's writer: what each `Log` and Thaw's own lines write to. */
export class LogWriter implements LogSink {
  readonly #out: Logger;
  readonly #levels: LevelTable;
  readonly #format: StructuredFormat | undefined;
  readonly #mask: Mask;
  readonly #now: () => Date;

  /**
   * `out`: the methods of the app's logger (as Thaw wrapped it) that the lines are written with;
   * `format`: a structured shape, or plain lines.
   */
  constructor(
    out: Logger,
    levels: LevelTable,
    format: StructuredFormat | undefined,
    mask: Mask,
    now: () => Date = () => new Date(),
  ) {
    this.#out = out;
    this.#levels = levels;
    this.#format = format;
    this.#mask = mask;
    this.#now = now;
  }

  /** What every line is masked with. */
  get mask(): Mask {
    return this.#mask;
  }

  /** The shape of the lines when they are JSON objects; `undefined` when they are plain. */
  get format(): StructuredFormat | undefined {
    return this.#format;
  }

  enabled(name: string, level: LogLevel): boolean {
    this.#levels.made(name);
    return this.#levels.enabled(name, level);
  }

  write(name: string, level: LogLevel, message: string, details: readonly unknown[]): void {
    if (!this.enabled(name, level)) return;
    const out = this.#out;
    const write = level === "ERROR"
      ? out.error
      : level === "WARN"
      ? out.warn ?? out.error
      : out.info ?? out.error;
    const mask = this.#mask;
    if (this.#format !== undefined) {
      // `[thaw] ` says whose a plain line is; a structured line names its logger.
      const text = name === THAW_LOGGER
        ? String(message).replace(/^\[thaw\] /, "")
        : String(message);
      const record = { time: this.#now(), level, logger: name, message: text, details };
      write(structuredLine(this.#format, record, mask));
    } else if (name === ACCESS_LOGGER) {
      // Its JSON line comes masked field by field: a mask over the line could take a field's
      // quote with a secret, and break the JSON.
      write(String(message));
    } else if (name === THAW_LOGGER) {
      write(mask(String(message)), ...details.map((detail) => masked(detail, mask)));
    } else {
      write(
        `${level} ${name}: ${mask(String(message))}`,
        ...details.map((detail) => masked(detail, mask)),
      );
    }
  }
}

// A detail of a plain line, its texts masked: a string, or an error (a copy, when the mask
// changes its message or stack: the thrown one is not ours to change).
function masked(detail: unknown, mask: Mask): unknown {
  if (typeof detail === "string") return mask(detail);
  try {
    if (!(detail instanceof Error)) return detail;
    const message = String(detail.message);
    const stack = typeof detail.stack === "string" ? detail.stack : undefined;
    if (mask(message) === message && (stack === undefined || mask(stack) === stack)) return detail;
    const copy = new Error(mask(message));
    Object.setPrototypeOf(copy, Object.getPrototypeOf(detail));
    Object.defineProperty(copy, "stack", {
      value: mask(stack ?? ""),
      writable: true,
      configurable: true,
    });
    return copy;
  } catch {
    return detail;
  }
}
