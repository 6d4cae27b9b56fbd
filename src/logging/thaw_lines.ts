// Thaw's own lines (an error no client should see, a warning of the configuration, the start
// line, the access log) through the logging feature: the logger `thaw`, and `thaw.access` for the
// access log, levelled and structured as the app's are.
import type { Logger } from "../web/error_responder.ts";
import type { LogLevel } from "./logging_system.ts";
import { ACCESS_LOGGER, type LogWriter, THAW_LOGGER } from "./log_writer.ts";

// The access log's line, as accessLogLine writes it: JSON whose first field is the time. No other
// line of Thaw's begins so.
const ACCESS_LINE = '{"time":"';

/**
 * Replaces the methods of `logger`, the object Thaw's code writes its lines to (the app's logger
 * as `safeLogger` wrapped it, Thaw's own), so that its lines go through `writer`; `writer` was
 * made with a copy of the methods as they were. A method the app's logger lacked stays absent:
 * such a logger took no such lines before.
 */
export function routeThawLines(logger: Logger, writer: LogWriter): void {
  const line = (level: LogLevel) => (message: string, ...details: unknown[]): void => {
    if (level === "INFO" && details.length === 0 && String(message).startsWith(ACCESS_LINE)) {
      writeAccess(writer, String(message));
    } else {
      writer.write(THAW_LOGGER, level, message, details);
    }
  };
  logger.error = line("ERROR");
  if (logger.warn !== undefined) logger.warn = line("WARN");
  if (logger.info !== undefined) logger.info = line("INFO");
}

// The access log's line: as it is when lines are plain, its fields in the line when structured.
function writeAccess(writer: LogWriter, text: string): void {
  let entry: Record<string, unknown> | undefined;
  if (writer.structured) {
    try {
      entry = JSON.parse(text);
    } catch {
      // Not the access log's after all: written as it is.
    }
  }
  if (entry === undefined) writer.write(ACCESS_LOGGER, "INFO", text, []);
  else {
    const { method, path, status } = entry;
    writer.write(ACCESS_LOGGER, "INFO", `${method} ${path} ${status}`, [entry]);
  }
}
