// Control characters: C0 (U+0000 to U+001F), DEL and C1 (U+007F to U+009F), Unicode's Cc.
// deno-lint-ignore no-control-regex -- the control characters are what this drops
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A name fit for a file on the server, from the filename an upload was sent with: the
 * `File.name` of a `RequestPart` is what the client wrote, folders, `../` and control characters
 * included. This keeps what follows the last `/` or `\` (busboy's default, which multer inherits),
 * drops control characters (U+0000 to U+001F, U+007F to U+009F: a NUL ends a path in C, CR and LF
 * split a log line), and turns `.` and `..` into `""`. Anything else is kept: a name may still be
 * empty, long, or a device name on Windows, so a server that stores uploads under their names
 * checks for what its file system refuses, or names them itself.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeFilename } from "@thaw/thaw";
 *
 * assert.equal(safeFilename("C:\\Users\\ada\\photo.png"), "photo.png");
 * assert.equal(safeFilename("../../etc/passwd"), "passwd");
 * assert.equal(safeFilename("report\u0000.pdf\r\n"), "report.pdf");
 * assert.equal(safeFilename(".."), "");
 * assert.equal(safeFilename("naïve café.txt"), "naïve café.txt");
 * ```
 */
export function safeFilename(name: string): string {
  const clean = name.replace(CONTROL, "");
  const base = clean.slice(Math.max(clean.lastIndexOf("/"), clean.lastIndexOf("\\")) + 1);
  return base === "." || base === ".." ? "" : base;
}
