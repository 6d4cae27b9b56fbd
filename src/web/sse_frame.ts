// One server-sent event as the text that goes on the wire (the WHATWG HTML standard's
// `text/event-stream`). A field's value ends at a line break, so a value that could hold one is
// either split (`data`, into one `data:` line per line) or refused (`event`, `id`): a client's
// text echoed in an event name or id must not open a field or an event of its own.

/** An event as an `@SseMapping` method yields it: anything else it yields is sent as JSON data. */
export interface SseEvent {
  /** A string is sent as it is (a multi-line one as several `data:` lines), anything else as JSON. */
  readonly data: unknown;
  /** The event's type (`addEventListener(event, ...)` in a browser); `message` when left out. */
  readonly event?: string;
  /** What a client sends back as `Last-Event-ID` when it reconnects. */
  readonly id?: string | number;
  /** How long a client waits before it reconnects, in milliseconds. */
  readonly retry?: number;
}

const FIELDS: ReadonlySet<string> = /* @__PURE__ */ new Set(["data", "event", "id", "retry"]);

// What ends a line in the stream, and NUL, which makes a browser drop an `id`.
const BREAKS = /[\r\n\0]/;
// A lone surrogate: UTF-8 cannot carry it, and the encoder would send U+FFFD in its place.
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LINES = /\r\n|\r|\n/;

/** A comment line: nothing a client dispatches, but bytes that keep proxies from closing. */
export const HEARTBEAT = ":\n\n";

/**
 * Whether `item` is an event rather than a value: a plain object with a `data` key and no key
 * but `data`, `event`, `id` and `retry`.
 */
export function isSseEvent(item: unknown): item is SseEvent {
  if (typeof item !== "object" || item === null || !Object.hasOwn(item, "data")) return false;
  const proto = Object.getPrototypeOf(item);
  return (proto === Object.prototype || proto === null) &&
    Object.keys(item).every((key) => FIELDS.has(key));
}

/**
 * The frame of one yielded item, ending with the blank line that dispatches it. Throws a
 * `TypeError` for an `event` or `id` holding CR, LF or NUL, a `retry` that is not a whole number
 * of milliseconds, and data that has no JSON form.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sseFrame } from "./sse_frame.ts";
 *
 * assert.equal(sseFrame({ data: "a\nb", event: "tick", id: 7 }), "event: tick\nid: 7\ndata: a\ndata: b\n\n");
 * assert.equal(sseFrame({ n: 1 }), 'data: {"n":1}\n\n');
 * assert.throws(() => sseFrame({ data: "x", id: "1\n" }), /id must not hold/);
 * ```
 */
export function sseFrame(item: unknown): string {
  const event = isSseEvent(item) ? item : { data: item };
  let frame = "";
  if (event.event !== undefined) frame += `event: ${field("event", event.event, false)}\n`;
  if (event.id !== undefined) frame += `id: ${field("id", event.id, true)}\n`;
  if (event.retry !== undefined) {
    const retry = event.retry;
    if (!Number.isSafeInteger(retry) || retry < 0) {
      throw new TypeError(`an event's retry must be a whole number of milliseconds, got ${retry}`);
    }
    frame += `retry: ${retry}\n`;
  }
  const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
  if (typeof data !== "string") {
    throw new TypeError(`an event's data must be a string or have a JSON form, got ${typeof data}`);
  }
  if (LONE.test(data)) throw new TypeError(LONE_MESSAGE("data"));
  for (const line of data.split(LINES)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

function field(name: string, value: unknown, number: boolean): string {
  const text = number && typeof value === "number" && Number.isFinite(value)
    ? String(value)
    : value;
  if (typeof text !== "string") {
    throw new TypeError(
      `an event's ${name} must be ${number ? "a string or a number" : "a string"}, got ` +
        typeof value,
    );
  }
  if (LONE.test(text)) throw new TypeError(LONE_MESSAGE(name));
  if (BREAKS.test(text)) {
    throw new TypeError(
      `an event's ${name} must not hold CR, LF or NUL (it would end the field), got ` +
        JSON.stringify(text),
    );
  }
  return text;
}

function LONE_MESSAGE(name: string): string {
  return `an event's ${name} must not hold a lone surrogate: UTF-8 cannot carry it, and it would ` +
    "reach the client changed (U+FFFD)";
}
