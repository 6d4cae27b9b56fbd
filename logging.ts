/**
 * Levelled, named and structured logs for `bootstrap({ logging: logging() })`, as Spring Boot
 * has them:
 *
 * - `logging.level`: each logger's level by name (`root`, a bean's class name, a dotted name
 *   whose loggers below it take it), changed live through the `LoggingSystem` bean (the
 *   actuator's `loggers` endpoint);
 * - a logger per bean: `@Autowired(Log) log!: Log`, named after the bean's class;
 * - `logging.structured.format.console`: each line one JSON object, Elastic's (`ecs`) or
 *   Logstash's (`logstash`) shape;
 * - Thaw's own lines (the logger `thaw`, the access log's `thaw.access`) levelled and shaped
 *   alike; every line masked of the configuration's secrets.
 *
 * Lines are written to the app's logger (`bootstrap({ logger })`, `console` by default). Apart
 * from the default entry point, so that an app that needs none of it does not carry it.
 *
 * A bean asks for its logger with `@Autowired(Log)`, as the docs show.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { Log, logging } from "@thaw/thaw/logging";
 *
 * const lines: string[] = [];
 * const app = await bootstrap({
 *   logger: { error: (line: string) => lines.push(line), info: (line: string) => lines.push(line) },
 *   logging: logging(),
 *   config: { logging: { level: { root: "WARN" }, structured: { format: { console: "ecs" } } } },
 * });
 * const log = app.getBean(Log); // ROOT
 * log.info("not written: ROOT is at WARN");
 * log.warn("written", { user: 7 });
 * assert.equal(lines.length, 1);
 * const line = JSON.parse(lines[0]);
 * assert.equal(line["log.level"], "WARN");
 * assert.equal(line.user, 7);
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/observability.md#levelled-and-structured-logs
 *
 * @module
 */
// First: the feature's keys are declared before the app's configuration can be read.
import "./src/config/logging_keys.ts";
import { ConfigError } from "./src/config/config_error.ts";
import { type LoggingFeature, loggingFeature } from "./src/logging/logging_feature.ts";
import { loggingSetup } from "./src/logging/logging_setup.ts";

export type { LoggingFeature } from "./src/logging/logging_feature.ts";
export { Log, type LogSink } from "./src/logging/log.ts";
export {
  LOG_LEVELS,
  type LoggerLevels,
  LoggingSystem,
  type LogLevel,
  ROOT_LOGGER,
} from "./src/logging/logging_system.ts";

/**
 * The logging feature, for `bootstrap({ logging: logging() })`: levels by logger name, a logger
 * per bean, structured lines, as the `logging.*` keys say. It takes no options.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { LoggingSystem, logging } from "@thaw/thaw/logging";
 *
 * const app = await bootstrap({ logging: logging(), config: { logging: { level: { root: "warn" } } } });
 * const system = app.getBean(LoggingSystem);
 * assert.equal(system.loggers()[0].effectiveLevel, "WARN");
 * system.setLevel("ROOT", "DEBUG");
 * assert.equal(system.loggers()[0].effectiveLevel, "DEBUG");
 * ```
 */
export function logging(): LoggingFeature {
  // Called from JavaScript with options it would ignore.
  if (arguments.length > 0 && arguments[0] !== undefined) {
    throw new ConfigError(
      "logging() takes no options: the logging.level and logging.structured keys configure it",
    );
  }
  return loggingFeature(loggingSetup);
}
