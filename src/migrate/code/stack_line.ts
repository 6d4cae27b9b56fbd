import { fileURLToPath } from "node:url";
import { withoutColours } from "./terminal_colours.ts";

/**
 * The line of the migration file at `file` (an absolute path) that `error` points at: the first
 * location in its `stack`, then in its `message`, that is that file. `undefined` when none is.
 *
 * Locations are read as the three runtimes write them: V8's `at default (file:///…?thaw=…:12:9)`,
 * `at async default (…)` and `at file:///…:12:9`; Bun's `at default (/abs/V3__x.ts:12:9)` with a
 * plain path; JavaScriptCore's `default@/abs/V3__x.ts:12:9`; Node's `/abs/V3.ts:4` header of a
 * `SyntaxError`, and Deno's `at file:///…:4:5` inside the message of one. Bun reports a file that
 * does not parse with a `BuildMessage` that has no stack, only a `position`: it is read last.
 */
export function lineIn(error: unknown, file: string): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  return lineAt(text(read(error, "stack")), file) ??
    lineAt(text(read(error, "message")), file) ??
    positionLine(read(error, "position"), file);
}

/**
 * The line of the first location in `whole` (a stack, or a message) that is the file at `file`,
 * skipping locations in other files: given a `new Error().stack` captured inside a helper, it is
 * the line of the migration file that called it. `undefined` when no location is the file. Of a
 * text longer than 64 KiB, the first and the last 32 KiB are read.
 */
export function lineAt(whole: string | undefined, file: string): number | undefined {
  if (whole === undefined || file === "") return undefined;
  // A message of megabytes (a response body quoted whole) puts its stack's frames at the end:
  // its start and its end are read. The NUL between them ends no location and starts none.
  const stack = whole.length <= 2 * READ ? whole : `${whole.slice(0, READ)}\0${whole.slice(-READ)}`;
  const urls = urlStarts(stack);
  const url = urlMatcher(stack, file);
  // The longest URL of the file: each UTF-16 unit percent-encoded as up to 9 characters, and a
  // query (`?thaw=…`, a loader's own). Only the `file:`s that near a colon are tried.
  const longest = 7 + 9 * file.length + 256;
  let first = 0;
  // A path may hold spaces, parentheses and colons (Bun writes it as it is), so no pattern can
  // tell where it begins: each `:<line>` is taken as the end of a location, and the text before it
  // is asked whether it ends with this file.
  for (let colon = stack.indexOf(":"); colon !== -1; colon = stack.indexOf(":", colon + 1)) {
    const line = lineAfter(stack, colon);
    if (line === undefined) continue;
    if (endsWithPath(stack, colon, file)) return line;
    while (first < urls.length && urls[first] < colon - longest) first++;
    for (let i = first; i < urls.length && urls[i] < colon; i++) {
      if (url(urls[i], colon)) return line;
    }
  }
  return undefined;
}

/**
 * Whether the text from a `file:` at `start` to a colon at `colon` is a URL of `file`, whatever
 * its `?query` or `#hash`. Node writes the URL encoded, Deno writes its stack frames decoded
 * (`file:///a b/x?y/V1.ts?thaw=…`, where only the last `?` starts the query): each `?` and `#` is
 * tried as the end of the path, against both forms. Each end is parsed once per start, whatever
 * the colons after it, and only where the text ends as the file's name does: a text of `file:`s,
 * `?`s and line numbers costs each pair once.
 */
function urlMatcher(text: string, file: string): (start: number, colon: number) => boolean {
  // Decoding never lengthens a URL (a UNC path's `file://host/…` drops two of its characters).
  const shortest = 5 + file.length;
  // A name of characters no encoder escapes ends every URL of the file as it is.
  const name = file.slice(file.lastIndexOf("/") + 1);
  const suffix = /^[\w.~-]+$/.test(name) ? `/${name}` : "";
  const tried = new Map<number, number>();
  return (start, colon) => {
    const from = tried.get(start) ?? start;
    tried.set(start, colon);
    for (let end = colon; end > from && end - start >= shortest; end = lastCut(text, start, end)) {
      if (suffix !== "" && !text.startsWith(suffix, end - suffix.length)) continue;
      const path = text.slice(start, end);
      if (path === `file://${file}`) return true;
      try {
        if (fileURLToPath(path) === file) return true;
      } catch {
        // Not a file URL this platform reads (a host, an encoded `/`): not the file.
      }
    }
    return false;
  };
}

/** The last `?` or `#` of `text` after `start` and before `end`, or -1. */
function lastCut(text: string, start: number, end: number): number {
  // Not lastIndexOf: it would look on past `start`, to the beginning of the text.
  for (let at = end - 1; at > start; at--) {
    if (text[at] === "?" || text[at] === "#") return at;
  }
  return -1;
}

// How much of the start, and of the end, of a long stack or message is read.
const READ = 32 * 1024;

/** `:<line>` or `:<line>:<column>` at `colon`, ending where a location ends; its line. */
function lineAfter(text: string, colon: number): number | undefined {
  const match = /^:(\d+)(?::\d+)?(?=$|[\s):,\]])/.exec(text.slice(colon, colon + 32));
  return match === null ? undefined : Number(match[1]);
}

/**
 * Whether `file` ends just before `end`, and begins where a location may: at the start of a line,
 * after a space, `(` or JavaScriptCore's `@`. The start rules out `/b/a/V1.ts` for `/a/V1.ts`.
 */
function endsWithPath(text: string, end: number, file: string): boolean {
  const start = end - file.length;
  if (start < 0 || !text.startsWith(file, start)) return false;
  return start === 0 || /[\s(@]/.test(text[start - 1]!);
}

/** Where each `file:` URL in `text` begins, in order. */
function urlStarts(text: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf("file:"); at !== -1; at = text.indexOf("file:", at + 1)) {
    if (at === 0 || /[\s(@]/.test(text[at - 1]!)) starts.push(at);
  }
  return starts;
}

/** Bun's `BuildMessage.position` (`{ file, line }`, the line counted from 1), if it is `file`. */
function positionLine(position: unknown, file: string): number | undefined {
  if (typeof position !== "object" || position === null) return undefined;
  const at = position as { readonly file?: unknown; readonly line?: unknown };
  return at.file === file && typeof at.line === "number" ? at.line : undefined;
}

/** `value[key]`; a getter that throws leaves nothing to read. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

// A location Deno coloured for a terminal is read as the text it shows.
function text(value: unknown): string | undefined {
  return typeof value === "string" ? withoutColours(value) : undefined;
}
