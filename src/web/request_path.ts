import { getPath } from "hono/utils/url";
import { removeDotSegments } from "./path_pattern.ts";

/**
 * What {@linkcode requestPath} gives for a request whose URL cannot name a path safely: no route
 * matches it, and the not-found handler answers it with 400.
 */
export const INVALID_TARGET = "\u0000invalid-target";

// RFC 3986's authority characters (userinfo, reg-name or IP literal, port), as a table: checked on
// every request, so without a regular expression or a slice.
const AUTHORITY = new Uint8Array(128);
for (
  const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@%[]"
) {
  AUTHORITY[c.charCodeAt(0)] = 1;
}

function isAuthority(url: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = url.charCodeAt(i);
    if (c > 127 || AUTHORITY[c] === 0) return false;
  }
  return true;
}

/**
 * The path a request is routed by: Hono's decoded path, with `.` and `..` resolved, or
 * {@linkcode INVALID_TARGET}. Servers build `request.url` from the `Host` header and the request
 * target, and a hostile `Host` can move where the path seems to start:
 * - Bun hands over a relative URL (`/a/b`) when `Host` is missing or invalid; Hono's own reading
 *   would drop its first segment. It is read as the path it is.
 * - Deno pastes `Host` in front of the target as it is: a `Host` with `?` or `#` puts the real
 *   path into the query or the fragment, one with a space or other such character makes a URL
 *   that does not parse. A URL with a `?` before its path, any `#` (no client sends a fragment)
 *   or a character no authority holds is refused.
 * - A `\` in the path is refused (Node's adapter refuses it too; Bun turns it into `/` first).
 *
 * A `Host` with `/` in it cannot be told from the URL on Deno (see the README).
 */
export function requestPath(request: Request): string {
  const url = request.url;
  let path: string;
  if (url.charCodeAt(0) === 0x2f) {
    // Relative: the whole URL is the target. Bun gives one for a request without `Host` (HTTP/1.0
    // may omit it) and for one with an invalid `Host`, which is refused.
    if (request.headers.get("host") !== null) return INVALID_TARGET;
    const end = url.search(/[?#]/);
    path = end === -1 ? url : url.slice(0, end);
    if (path.includes("%")) path = getPath({ url: `http://invalid${path}` } as Request);
  } else {
    // A `?` or `#` before the path is no authority character, so this check covers both.
    const from = url.indexOf(":") + 3;
    const start = url.indexOf("/", from);
    if (start === -1 || !isAuthority(url, from, start) || url.includes("#", start)) {
      return INVALID_TARGET;
    }
    // Hono's reading of the same string: `request.url` is a getter that some servers (Bun,
    // Node's adapter) build anew on each call, so it is read once.
    path = getPath({ url } as Request);
  }
  if (path.includes("\\")) return INVALID_TARGET;
  return removeDotSegments(path);
}
