// `logging.level`: a mapping of logger names to levels, as Spring Boot reads it. A name may be
// written dotted (`org.example.web: DEBUG`) or nested (`org: { example: { web: DEBUG } }`): both
// are the logger `org.example.web`.
import { shownValue } from "../shown_value.ts";
import { ConfigError } from "../config/config_error.ts";
import { isMapping } from "../object_guards.ts";
import { LOG_LEVELS, type LogLevel, ROOT_LOGGER } from "./logging_system.ts";

/** A level as written, in any case (`debug`, `DEBUG`); `undefined` when it is none. */
export function parseLevel(value: unknown): LogLevel | undefined {
  // YAML 1.1 reads a bare `off` as false, which Spring Boot takes for OFF too.
  if (value === false) return "OFF";
  if (typeof value !== "string") return undefined;
  const level = value.trim().toUpperCase();
  return (LOG_LEVELS as readonly string[]).includes(level) ? level as LogLevel : undefined;
}

/** A logger's name as the levels keep it: `root` in any case is `ROOT`. */
export function loggerName(name: string): string {
  return name.toLowerCase() === "root" ? ROOT_LOGGER : name;
}

/**
 * The levels `logging.level` sets, by logger name; a value that is no level is a `ConfigError`
 * saying where it is (`where` gives `file:line: key`).
 */
export function configuredLevels(
  value: unknown,
  where: (key: string) => string,
): Map<string, LogLevel> {
  const levels = new Map<string, LogLevel>();
  if (value === undefined || value === null) return levels;
  const walk = (node: unknown, name: string): void => {
    if (isMapping(node)) {
      for (const [child, inner] of Object.entries(node)) {
        walk(inner, name === "" ? child : `${name}.${child}`);
      }
      return;
    }
    if (name === "") {
      throw new ConfigError(
        `${where("logging.level")} must be a mapping of logger names to levels (root: INFO), ` +
          `got ${shownValue(node)}`,
      );
    }
    const level = parseLevel(node);
    if (level === undefined) {
      throw new ConfigError(
        `${where(`logging.level.${name}`)} must be TRACE, DEBUG, INFO, WARN, ERROR or OFF, ` +
          `got ${shownValue(node)}`,
      );
    }
    levels.set(loggerName(name), level);
  };
  walk(value, "");
  return levels;
}
