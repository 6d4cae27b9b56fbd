// One line of a structured log, in Spring Boot's shapes (3.4): Elastic Common Schema's (`ecs`) or
// Logstash's (`logstash`). A line is one JSON object, whatever the message holds: JSON escapes
// every control character and lone surrogate, and the rest of what a viewer may take for a line
// break is escaped too, so no message can end a line or forge another.
import type { Mask } from "../config/secrets_mask.ts";
import { loggableText } from "../observe/loggable.ts";
import type { LogLevel } from "./logging_system.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";

/** The shapes of `logging.structured.format.console`. */
export type StructuredFormat = "ecs" | "logstash";

/** What one line says. */
export interface LogRecord {
  readonly time: Date;
  readonly level: LogLevel;
  /** The logger's name. */
  readonly logger: string;
  readonly message: string;
  /** What the call passed after the message: an error, objects of fields, other values. */
  readonly details: readonly unknown[];
}

// Logback's values of its levels, which Logstash's shape writes as `level_value`.
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = {
  OFF: 2147483647,
  ERROR: 40000,
  WARN: 30000,
  INFO: 20000,
  DEBUG: 10000,
  TRACE: 5000,
};

// How deep a chain of causes is written: a cycle of causes ends here.
const MAX_CAUSES = 8;

// workerd's `process` (with nodejs_compat) says 1: the pid of no process of the machine.
const pid: number | undefined = (() => {
  if (onWorkerd()) return undefined;
  const global = globalThis as { process?: { pid?: unknown }; Deno?: { pid?: unknown } };
  const value = global.process?.pid ?? global.Deno?.pid;
  return typeof value === "number" ? value : undefined;
})();

/** `record` as one line of `format`, every text in it through `mask`. */
export function structuredLine(format: StructuredFormat, record: LogRecord, mask: Mask): string {
  const { error, fields, texts } = sorted(record.details);
  const message = mask([record.message, ...texts].join(" "));
  const time = record.time.toISOString();
  // Built without a prototype: a field named `__proto__` is a field like any other.
  const line: Record<string, unknown> = Object.create(null);
  if (format === "ecs") {
    line["@timestamp"] = time;
    line["log.level"] = record.level;
    if (pid !== undefined) line["process.pid"] = pid;
    line["log.logger"] = record.logger;
    line.message = message;
    if (error !== undefined) {
      line["error.type"] = mask(error.type);
      line["error.message"] = mask(error.message);
      if (error.stack !== undefined) line["error.stack_trace"] = mask(error.stack);
    }
    line["ecs.version"] = "8.11";
  } else {
    line["@timestamp"] = time;
    line["@version"] = "1";
    line.message = message;
    line.logger_name = record.logger;
    line.level = record.level;
    line.level_value = LEVEL_VALUES[record.level];
    if (error !== undefined) {
      line.stack_trace = mask(error.stack ?? `${error.type}: ${error.message}`);
    }
  }
  // The call's own fields, after the fixed ones and never over them.
  for (const [key, value] of fields) {
    if (!(key in line)) line[key] = jsonValue(value, mask);
  }
  // JSON leaves DEL, the C1 controls, U+2028, U+2029 and the bidirectional overrides as they are:
  // each breaks a line, or hides text, in some viewer. Escaped as JSON would, in the strings.
  return loggableText(JSON.stringify(line));
}

interface ErrorFields {
  readonly type: string;
  readonly message: string;
  readonly stack?: string;
}

// The first error of the details, the fields of their plain objects (the first wins), and the rest
// as text, as a console would print it after the message.
function sorted(details: readonly unknown[]): {
  error?: ErrorFields;
  fields: Map<string, unknown>;
  texts: string[];
} {
  let error: ErrorFields | undefined;
  const fields = new Map<string, unknown>();
  const texts: string[] = [];
  for (const detail of details) {
    try {
      if (detail instanceof Error) {
        if (error === undefined) error = errorFields(detail);
        else texts.push(errorFields(detail).message);
      } else if (isFieldObject(detail)) {
        for (const [key, value] of Object.entries(detail)) {
          if (!fields.has(key)) fields.set(key, value);
        }
      } else {
        texts.push(textOf(detail));
      }
    } catch {
      // A Proxy, a getter that throws: the line is still written, saying so.
      texts.push("(a value that could not be read for the log)");
    }
  }
  return { ...(error === undefined ? {} : { error }), fields, texts };
}

function isFieldObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function errorFields(error: Error, depth = 0): ErrorFields {
  const type = String(error.name);
  const message = String(error.message);
  const own = typeof error.stack === "string" ? error.stack : undefined;
  const cause: unknown = error.cause;
  let stack = own;
  if (cause instanceof Error && depth < MAX_CAUSES) {
    const inner = errorFields(cause, depth + 1);
    stack = `${own ?? `${type}: ${message}`}\nCaused by: ${
      inner.stack ?? `${inner.type}: ${inner.message}`
    }`;
  }
  return { type, message, ...(stack === undefined ? {} : { stack }) };
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    try {
      const json = JSON.stringify(value);
      if (json !== undefined) return json;
    } catch {
      // A cycle, a BigInt: the value's own text instead.
    }
  }
  return String(value);
}

// A field's value as JSON can hold it, texts masked: a value JSON cannot write (a cycle, a BigInt,
// a function) becomes its text.
function jsonValue(value: unknown, mask: Mask): unknown {
  if (typeof value === "string") return mask(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return JSON.parse(mask(json));
  } catch {
    // Not JSON's, or its masked text no longer parses: its text, masked.
  }
  return mask(textOf(value));
}
