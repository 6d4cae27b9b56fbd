import type { Logger } from "../web/error_responder.ts";
import { unicodeEscape } from "../shown_value.ts";

// What Thaw hands a logger must not be able to break the log's lines. A client's text reaches an
// error message through more doors than Thaw's own messages: the runtimes quote an invalid header
// value in their `TypeError` (Deno and Node do, CR LF and all), a parser quotes its input, a
// handler puts a parameter in what it throws. Each line break or terminal escape in a message is
// written as `\uXXXX`, as JSON writes it, before the logger sees it; a stack keeps the line breaks
// between its frames and nothing else.

// C0 and C1 controls and DEL, the line and paragraph separators, the bidirectional overrides (which
// reorder what a viewer shows), and lone surrogates (which some viewers drop, text and all).
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

// A frame line of a V8 or Bun stack; JavaScriptCore's own `name@file:line` frames have no `at`.
const FRAME = /^\s+at /;

// How deep a chain of causes is kept: a cycle of causes ends here.
const MAX_DEPTH = 8;

/** A text with every character that could break or hide a log line written as `\uXXXX`. */
export function loggableText(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, unicodeEscape) : text;
}

/**
 * A value as a logger may print it: a string made safe, an error whose message, stack, causes,
 * `errors` (an `AggregateError`'s) or own properties hold an unsafe character replaced by a copy
 * of the same class that holds none (the error itself when it holds none, so that a logger that
 * inspects it sees what was thrown), anything else as it is. It never throws: an error that cannot
 * be read (a `Proxy`, a getter that throws) is logged as a note that says so.
 */
export function loggable(value: unknown): unknown {
  if (typeof value === "string") return loggableText(value);
  try {
    return value instanceof Error ? loggableError(value, 0) : value;
  } catch {
    return unreadable(); // `instanceof` asks a Proxy, which may throw
  }
}

// What a console prints of an error's own values, made safe: an error in them prints its stack,
// indented, and an array prints its items.
function loggableValue(value: unknown, depth: number): unknown {
  if (typeof value === "string") return loggableText(value);
  if (value instanceof Error) return loggableError(value, depth + 1);
  if (Array.isArray(value)) {
    const items = value.map((item) => loggableValue(item, depth));
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  return value;
}

function unreadable(): Error {
  const note = new Error("(an error that could not be read for the log)");
  Object.defineProperty(note, "stack", { value: `Error: ${note.message}`, configurable: true });
  return note;
}

function loggableError(error: Error, depth: number): Error {
  if (depth > MAX_DEPTH) return new Error("(further causes left out)");
  try {
    return copyIfUnsafe(error, depth);
  } catch {
    return unreadable();
  }
}

function copyIfUnsafe(error: Error, depth: number): Error {
  const message = String(error.message);
  const stack: unknown = error.stack;
  const name = String(error.name);
  // Own values a console prints beside the stack (`cause`, an `AggregateError`'s `errors`, a
  // `code` or a `detail` an app adds), and what they are once safe.
  // The message, name and stack are made safe below, each its own way: a client that defines them
  // enumerable (the Kafka client does) must not have its stack escaped into one line here.
  const own = [...new Set([...Object.keys(error), "cause", "errors"])].filter((key) =>
    Object.hasOwn(error, key) && key !== "stack" && key !== "message" && key !== "name"
  );
  const values = own.map((key) => (error as unknown as Record<string, unknown>)[key]);
  const safeValues = values.map((value) => loggableValue(value, depth));
  const lines = typeof stack === "string" ? stack.split("\n") : [];
  if (
    !UNSAFE.test(message) && !UNSAFE.test(name) && !own.some((key) => UNSAFE.test(key)) &&
    safeValues.every((value, i) => value === values[i]) &&
    lines.every((line, i) => !UNSAFE.test(line) && (i === 0 || FRAME.test(line)))
  ) return error;
  // A real `Error`, not an object made from its prototype: the runtimes' consoles print only a
  // real one as an error, stack and all.
  const copy = new Error(loggableText(message));
  Object.setPrototypeOf(copy, Object.getPrototypeOf(error));
  const header = `${loggableText(name)}: ${loggableText(message)}`;
  // The message in a stack may span lines; the frames are the lines that look like frames.
  const frames = lines.filter((line) => FRAME.test(line)).map(loggableText);
  const define = (key: string, value: unknown, enumerable = false) =>
    Object.defineProperty(copy, key, { value, writable: true, configurable: true, enumerable });
  define("stack", [header, ...frames].join("\n"));
  if (Object.hasOwn(error, "name")) define("name", loggableText(name));
  own.forEach((key, i) => {
    const descriptor = Object.getOwnPropertyDescriptor(error, key);
    define(loggableText(key), safeValues[i], descriptor?.enumerable === true);
  });
  return copy;
}

/**
 * The logger Thaw writes to: `logger`, with every message and detail made {@linkcode loggable}
 * first. Its methods are looked up at each call, since pino changes its level by replacing them,
 * and called on `logger` itself (pino and winston need their `this`); a level it lacks when
 * wrapped, it lacks here too.
 */
export function safeLogger(logger: Logger): Logger {
  const safe = (level: "error" | "info" | "warn") => (message: string, ...details: unknown[]) => {
    const write = logger[level] ?? logger.error;
    write.call(logger, loggableText(String(message)), ...details.map(loggable));
  };
  return {
    error: safe("error"),
    ...(typeof logger.info === "function" ? { info: safe("info") } : {}),
    ...(typeof logger.warn === "function" ? { warn: safe("warn") } : {}),
  };
}
