import { getPath } from "hono/utils/url";
import { isAuthority } from "../http/authority.ts";
import { removeDotSegments } from "./path_pattern.ts";

/**
 * What {@linkcode requestPath} gives for a request whose URL cannot name a path safely: no route
 * matches it, and the not-found handler answers it with 400.
 */
export const INVALID_TARGET = "\u0000invalid-target";

/**
 * The paths {@linkcode requestPath} gives instead of one it refuses, each with the message of the
 * 400 the not-found handler answers: none is a path a request can have (they start with NUL).
 */
export const REFUSED_PATHS: ReadonlyMap<string, string> = new Map([
  [INVALID_TARGET, "Invalid request target or Host header"],
  ["\u0000not-utf8", "Request path is not valid UTF-8 (its percent-encoded bytes)"],
  [
    "\u0000encoded-slash",
    "Request path holds an encoded '/' (%2F); see server.allow-encoded-slash",
  ],
  ["\u0000encoded-control", "Request path holds an encoded control character"],
]);

const ENCODED_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const ENCODED_SLASH = /%2f/i;
// C0 and C1 controls, DEL, and the line and paragraph separators: each can break or forge a log
// line or a terminal's output.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

// Spring's firewall refuses the same: a path variable must not hold a `/` the router did not see
// (`..%2F` would reach a file path as `../`), nor a NUL, line break or terminal escape that would
// reach a log or a file name; and bytes that are not UTF-8 would reach the handler still encoded
// (Hono keeps them).
function refusedEncoding(path: string, allowEncodedSlash: boolean): string | undefined {
  for (const run of path.match(ENCODED_RUN) ?? []) {
    if (!allowEncodedSlash && ENCODED_SLASH.test(run)) return "\u0000encoded-slash";
    let decoded: string;
    try {
      decoded = decodeURIComponent(run);
    } catch {
      return "\u0000not-utf8";
    }
    if (CONTROL.test(decoded)) return "\u0000encoded-control";
  }
  return undefined;
}

// The last authority found valid, so that the requests of one host skip the check: module-level
// as the servers of a process see the same hosts, and one string costs nothing to keep.
let lastAuthority = "\u0000"; // no URL holds it

/**
 * The path a request is routed by: Hono's decoded path, with `.` and `..` resolved, or
 * {@linkcode INVALID_TARGET}. Servers build `request.url` from the `Host` header and the request
 * target, and a hostile `Host` can move where the path seems to start:
 * - Bun hands over a relative URL (`/a/b`) when `Host` is missing or invalid; Hono's own reading
 *   would drop its first segment. It is read as the path it is.
 * - Deno pastes `Host` in front of the target as it is: a `Host` with `?` or `#` puts the real
 *   path into the query or the fragment, one with a space, a second `:` or a port over 65535
 *   makes a URL that does not parse. A URL that is not http(s), whose authority is not one
 *   ({@linkcode isAuthority}), or with any `#` (no client sends a fragment) is refused.
 * - A `\` in the path is refused (Node's adapter refuses it too; Bun turns it into `/` first).
 *
 * A `Host` with `/` in it cannot be told from the URL on Deno (see the README).
 */
export function requestPath(request: Request): string {
  return readPath(request, false);
}

/** {@linkcode requestPath}, but a `%2F` in the path is taken (a path variable then holds `/`). */
export function requestPathAllowingEncodedSlash(request: Request): string {
  return readPath(request, true);
}

function readPath(request: Request, allowEncodedSlash: boolean): string {
  const url = request.url;
  let path: string;
  if (url.charCodeAt(0) === 0x2f) {
    // Relative: the whole URL is the target. Bun gives one for a request without `Host` (HTTP/1.0
    // may omit it) and for one with an invalid `Host`, which is refused.
    if (request.headers.get("host") !== null) return INVALID_TARGET;
    const end = url.search(/[?#]/);
    path = end === -1 ? url : url.slice(0, end);
    if (path.includes("%")) {
      const refused = refusedEncoding(path, allowEncodedSlash);
      if (refused !== undefined) return refused;
      path = getPath({ url: `http://invalid${path}` } as Request);
    }
  } else {
    // Only http(s): Deno passes an absolute-form target (`ftp://e/x`, `*`) through as it is. A `?`
    // or `#` before the path is no authority character, so the authority check covers both.
    const from = url.startsWith("http://") ? 7 : url.startsWith("https://") ? 8 : -1;
    const start = from === -1 ? -1 : url.indexOf("/", from);
    if (start === -1 || url.includes("#", start)) return INVALID_TARGET;
    // Requests to one server name it the same way: the last authority that passed is taken again
    // without the full check (a hostile client that varies it only pays the check each time).
    if (start - from !== lastAuthority.length || !url.startsWith(lastAuthority, from)) {
      if (!isAuthority(url, from, start)) return INVALID_TARGET;
      lastAuthority = url.slice(from, start);
    }
    const percent = url.indexOf("%", start);
    if (percent !== -1) {
      const query = url.indexOf("?", start);
      if (query === -1 || percent < query) {
        const refused = refusedEncoding(
          url.slice(start, query === -1 ? undefined : query),
          allowEncodedSlash,
        );
        if (refused !== undefined) return refused;
      }
    }
    // Hono's reading of the same string: `request.url` is a getter that some servers (Bun,
    // Node's adapter) build anew on each call, so it is read once.
    path = getPath({ url } as Request);
  }
  if (path.includes("\\")) return INVALID_TARGET;
  return removeDotSegments(path);
}
