// Thaw's own lines (an error no client should see, a warning of the configuration, the start
// line) through the logging feature: the logger `thaw`, levelled and structured as the app's are.
// The access log writes to the feature's writer itself (`access_log_feature.ts`).
import type { Logger } from "../web/error_responder.ts";
import type { LogLevel } from "./logging_system.ts";
import { type LogWriter, THAW_LOGGER } from "./log_writer.ts";

/**
 * Replaces the methods of `logger`, the object Thaw's code writes its lines to (the app's logger
 * as `safeLogger` wrapped it, Thaw's own), so that its lines go through `writer`; `writer` was
 * made with a copy of the methods as they were. A method the app's logger lacked stays absent:
 * such a logger took no such lines before.
 */
export function routeThawLines(logger: Logger, writer: LogWriter): void {
  const line = (level: LogLevel) => (message: string, ...details: unknown[]): void =>
    writer.write(THAW_LOGGER, level, message, details);
  logger.error = line("ERROR");
  if (logger.warn !== undefined) logger.warn = line("WARN");
  if (logger.info !== undefined) logger.info = line("INFO");
}
