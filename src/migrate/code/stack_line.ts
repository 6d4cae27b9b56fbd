import { fileURLToPath } from "node:url";

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
  // its start and its end are read, and the pairs below stay few.
  const stack = whole.length <= 2 * READ ? whole : `${whole.slice(0, READ)}\n${whole.slice(-READ)}`;
  const urls = urlStarts(stack);
  // The longest URL of the file: each UTF-16 unit percent-encoded as up to 9 characters, and a
  // query (`?thaw=…`, a loader's own). Only `file:`s that near a colon are tried, so a message of
  // megabytes full of both is read in one pass.
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
      if (isUrlOf(stack.slice(urls[i], colon), file)) return line;
    }
  }
  return undefined;
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

/**
 * Whether `url` names `file`, whatever its `?query` or `#hash`. Node writes the URL encoded, Deno
 * writes its stack frames decoded (`file:///a b/x?y/V1.ts?thaw=…`, where only the last `?` starts
 * the query): each `?` and `#` is tried as the end of the path, against both forms.
 */
function isUrlOf(url: string, file: string): boolean {
  // Decoding never lengthens a URL, and leaves an unreserved last character as it is: anything
  // else is no URL of the file, and needs no parse.
  const shortest = 7 + file.length;
  const last = /[\w.~-]$/.test(file) ? file.at(-1) : undefined;
  for (let end = url.length; end >= shortest; end = lastCut(url, end)) {
    if (last !== undefined && url[end - 1] !== last) continue;
    const path = url.slice(0, end);
    if (path === `file://${file}`) return true;
    try {
      if (fileURLToPath(path) === file) return true;
    } catch {
      // Not a file URL this platform reads (a host, an encoded `/`): not the file.
    }
  }
  return false;
}

/** The last `?` or `#` of `url` before `end`, or -1. */
function lastCut(url: string, end: number): number {
  return Math.max(url.lastIndexOf("?", end - 1), url.lastIndexOf("#", end - 1));
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

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
