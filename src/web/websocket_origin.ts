// Which browsers may open a WebSocket: a page of another site can open one to any server, with the
// visitor's cookies, and read what comes back (cross-site WebSocket hijacking), because the
// same-origin policy does not cover WebSockets. Browsers say where the page came from in `Origin`;
// a client that sends none is no browser, and has no visitor's cookies to abuse.

/**
 * Whether an upgrade whose `Origin` is `origin` may open a socket on `requestUrl`: no `Origin`
 * (not a browser), the same host as the request's, or one that `allowed` lists (`*`: any); with
 * no `requestUrl` (or one no URL parses), only a listed one.
 * Schemes are not compared: TLS usually ends at a proxy, so a page of `https://app.example.com`
 * upgrades a request that reaches the app as `http://app.example.com`; another site is another
 * host. A `Host` may name the default port a page's origin leaves out: `Host: app.example.com:443`
 * is a page of `https://app.example.com`'s host (not of `http://app.example.com`'s). An empty
 * `Origin` is no browser's, and is refused. `Origin: null` (a sandboxed page, a file) is only
 * allowed by `*` or a listed `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { originAllowed } from "./websocket_origin.ts";
 *
 * const url = "http://chat.example.com/ws";
 * assert.equal(originAllowed(null, url, []), true);
 * assert.equal(originAllowed("https://chat.example.com", url, []), true);
 * assert.equal(originAllowed("https://evil.example", url, []), false);
 * assert.equal(originAllowed("https://app.example.com", url, ["https://app.example.com"]), true);
 * assert.equal(originAllowed("http://app.example.com", url, ["https://app.example.com"]), false);
 * assert.equal(originAllowed("null", url, ["*"]), true);
 * assert.equal(originAllowed("https://chat.example.com", "http://chat.example.com:443/", []), true);
 * assert.equal(originAllowed("", url, []), false);
 * ```
 */
export function originAllowed(
  origin: string | null,
  requestUrl: string | undefined,
  allowed: readonly string[],
): boolean {
  if (origin === null) return true;
  if (allowed.includes("*")) return true;
  const serialized = serializedOrigin(origin);
  if (serialized === undefined) return false;
  if (allowed.includes(serialized)) return true;
  if (serialized === "null" || requestUrl === undefined) return false;
  return sameHost(serialized, requestUrl);
}

// Whether a page of `origin` is of the host and port `requestUrl` names. The request's scheme is
// not known (TLS may end at a proxy), so a `Host` without a port takes a page on its scheme's
// default port, whichever; a named port must be the page's own, its scheme's default included
// (`Host: x:443` is `https://x`'s, not `http://x`'s): one scheme's default is no other's.
// Not `URL.parse`: Node 20 has none.
function sameHost(origin: string, requestUrl: string): boolean {
  try {
    const page = new URL(origin);
    const { hostname } = new URL(requestUrl);
    if (page.hostname !== hostname) return false;
    // A scheme URL does not know keeps the port as written, even 80 or 443.
    const port = new URL(requestUrl.replace(/^[a-z][a-z\d+.-]*:/i, "thaw:")).port;
    if (port === "") return page.port === "";
    return (page.port === "" ? DEFAULT_PORTS[page.protocol] : page.port) === port;
  } catch {
    return false;
  }
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { "http:": "80", "https:": "443" };

/**
 * The URL `request` asked for as its `Host` header names it, for {@linkcode originAllowed}:
 * the request's URL may hold another host (Deno and Node's adapter take an absolute-form target's,
 * `GET http://evil.example/ws`; Node's adapter says `localhost` when there is no `Host`), which is
 * no page's. `undefined` without a `Host`.
 */
export function hostUrl(request: Request): string | undefined {
  const host = request.headers.get("host");
  return host === null ? undefined : `http://${host}/`;
}

/**
 * `origin` as browsers serialize one (`scheme://host[:port]`, lower case, no default port), or
 * `null`; `undefined` for anything else (a path, credentials, a scheme with no host).
 */
export function serializedOrigin(origin: string): string | undefined {
  if (origin === "null") return "null";
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  // `URL.origin` of a `blob:` or `file:` URL is opaque ("null"): a browser sends those as `null`.
  if (url.origin === "null" || url.host === "") return undefined;
  // Browsers send the origin alone: anything more is no browser's, and is not trusted.
  if (`${url.origin}` !== origin.toLowerCase() && `${url.origin}/` !== origin.toLowerCase()) {
    return undefined;
  }
  return url.origin;
}
