// The `loggers` endpoint: the levels of the app's loggers in Spring Boot's shapes, read and set
// through the app's `LoggingSystem` bean.
import { ConfigError } from "../config/config_error.ts";
import { unicodeEscape } from "../shown_value.ts";
import { endpointRoute } from "./endpoint_route.ts";
import { HttpRequest } from "../http/http_request.ts";
import {
  LOG_LEVELS,
  type LoggerLevels,
  LoggingSystem,
  type LogLevel,
  ROOT_LOGGER,
} from "../logging/logging_system.ts";
import { rawBodyOf } from "../runtime/node_incoming.ts";
import type { CompiledRoute } from "../web/compile.ts";

/** One logger's levels, as Spring answers them: `null` where none is configured. */
export interface LoggerLevelsReport {
  readonly configuredLevel: LogLevel | null;
  readonly effectiveLevel: LogLevel;
}

/** `GET {base}/loggers`: the levels, every logger by name, and Spring's groups (Thaw has none). */
export interface LoggersReport {
  readonly levels: readonly LogLevel[];
  readonly loggers: { readonly [name: string]: LoggerLevelsReport };
  readonly groups: { readonly [name: string]: never };
}

/** The body of `GET {base}/loggers`, the loggers in the logging system's order. */
export function loggersReport(loggers: readonly LoggerLevels[]): LoggersReport {
  // No prototype: a logger named `__proto__` is a key like any other.
  const byName: Record<string, LoggerLevelsReport> = Object.create(null);
  for (const logger of loggers) byName[logger.name] = levelsOf(logger);
  return { levels: LOG_LEVELS, loggers: byName, groups: {} };
}

function levelsOf(logger: LoggerLevels): LoggerLevelsReport {
  return { configuredLevel: logger.configuredLevel ?? null, effectiveLevel: logger.effectiveLevel };
}

/**
 * The app's `LoggingSystem` bean, or `undefined` where it has none; two are a `ConfigError`
 * naming both, since the endpoint could not tell which to change.
 */
export function loggingSystemOf(
  beans: readonly { name: string; instance: unknown }[],
): LoggingSystem | undefined {
  const found = beans.filter((b) => b.instance instanceof LoggingSystem);
  if (found.length > 1) {
    throw new ConfigError(
      `the loggers endpoint reads one LoggingSystem bean; the app has ${found.length}: ` +
        `${found.map((b) => b.name).join(", ")}`,
    );
  }
  return found[0]?.instance as LoggingSystem | undefined;
}

// Escaped as `\uXXXX` though JSON.stringify leaves them as they are: each breaks a line, or hides
// or reorders text, in some terminal or log viewer a client's answer may reach (DEL, C1 controls,
// U+2028 and U+2029, the bidirectional marks). Lone surrogates JSON.stringify escapes itself.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// What a logger's name may not hold: it would reach log lines and consoles as it is.
const UNSAFE_NAME =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function answer(status: number, body?: object): Response {
  return body === undefined
    ? new Response(null, { status, headers: { "cache-control": "no-store" } })
    : new Response(JSON.stringify(body).replace(UNSAFE_IN_JSON, unicodeEscape), {
      status,
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
}

// Spring's media types for a body: JSON, and its own `application/vnd.spring-boot.actuator.v3+json`.
const JSON_TYPE = /^application\/(?:[^;\s]*\+)?json\s*(?:;|$)/i;
// A body a level fits in many times: a larger one is no request of this endpoint's.
const MAX_BODY = 4096;

// Longer than any class or dotted name: what only reaches the log tables to fill them.
const MAX_NAME = 256;
// The loggers a POST may leave the app with; a known one is set whatever their count.
const MAX_LOGGERS = 1000;

const LEVELS_HINT = `the levels are ${LOG_LEVELS.join(", ")} (in any case), or null to clear it`;

// The level a POST's body asks for (`undefined`: clear it), or the 4xx that says why none.
function requestedLevel(text: string, type: string | null): LogLevel | undefined | Response {
  // JSON alone, as Spring takes: no cross-site form can send it without the browser asking first.
  // The type comes before the empty body: a form with no fields sends one, without a preflight.
  const json = type !== null && JSON_TYPE.test(type);
  // No body (and no type, or JSON's) clears the level, as Spring's optional body does.
  if (text.trim() === "" && (json || type === null)) return undefined;
  if (!json) {
    return answer(415, {
      error: 'send the level as application/json: { "configuredLevel": "DEBUG" }',
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // The parser's message quotes the body: not echoed.
    return answer(400, { error: 'the body is not JSON: send { "configuredLevel": "DEBUG" }' });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return answer(400, {
      error: 'the body must be a JSON object like { "configuredLevel": "DEBUG" }',
    });
  }
  const level: unknown = (body as { configuredLevel?: unknown }).configuredLevel;
  if (level === undefined || level === null) return undefined;
  if (typeof level !== "string") {
    return answer(400, {
      error: `configuredLevel must be a level's name or null, got ${
        Array.isArray(level)
          ? "an array"
          : `a${typeof level === "object" ? "n" : ""} ${typeof level}`
      }; ${LEVELS_HINT}`,
    });
  }
  // ASCII alone: `toUpperCase` makes `INFO` of a dotless `ınfo`.
  const upper = /^[A-Za-z]+$/.test(level) ? level.toUpperCase() : "";
  if ((LOG_LEVELS as readonly string[]).includes(upper)) return upper as LogLevel;
  // Echoed only when short and printable: a client's text must not reach a log unescaped.
  const shown = /^[\x20-\x7e]{1,32}$/.test(level) ? ` ${JSON.stringify(level)}` : " of that name";
  return answer(400, { error: `configuredLevel: no level${shown}; ${LEVELS_HINT}` });
}

// `ROOT` in any case, as Logback takes it (`logging.level.root` is the key's spelling).
const loggerName = (name: string) => /^root$/i.test(name) ? ROOT_LOGGER : name;

/**
 * `GET {base}/loggers`, `GET {base}/loggers/{name}` (404 for a logger the system does not know, as
 * Spring answers) and `POST {base}/loggers/{name}` with `{ "configuredLevel": "DEBUG" }` (204), as
 * Spring serves them.
 */
export function loggersRoutes(base: string, system: LoggingSystem): CompiledRoute[] {
  return [
    endpointRoute("GET", `${base}/loggers`, () => answer(200, loggersReport(system.loggers()))),
    endpointRoute("GET", `${base}/loggers/{name}`, (c) => {
      const name = loggerName(c.req.param("name") ?? "");
      const found = system.loggers().find((l) => l.name === name);
      return found === undefined ? answer(404) : answer(200, levelsOf(found));
    }),
    endpointRoute("POST", `${base}/loggers/{name}`, async (c) => {
      const name = loggerName(c.req.param("name") ?? "");
      // Thaw's router refuses these encoded in a path; an app that mounts Thaw's may not.
      if (UNSAFE_NAME.test(name)) {
        return answer(400, {
          error: "a logger's name holds no control character, line or paragraph separator, " +
            "bidirectional mark or lone surrogate",
        });
      }
      if (name.length > MAX_NAME) {
        return answer(400, { error: `a logger's name is at most ${MAX_NAME} characters` });
      }
      const request = new HttpRequest(c.req.raw, {
        maxBodySize: MAX_BODY,
        rawBody: rawBodyOf(c.env),
      });
      const level = requestedLevel(await request.text(), c.req.header("content-type") ?? null);
      if (level instanceof Response) return level;
      // Each new name stays, as in Spring: past MAX_LOGGERS, a client could only fill memory.
      const known = system.loggers();
      if (known.length >= MAX_LOGGERS && !known.some((l) => l.name === name)) {
        return answer(400, {
          error: `the app has ${known.length} loggers, and takes no new one past ${MAX_LOGGERS}: ` +
            "set the level of one it has, or of a dotted parent",
        });
      }
      system.setLevel(name, level);
      return answer(204);
    }),
  ];
}
