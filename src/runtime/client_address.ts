// Where a request came from, for the access log and the server span. The runtime that took it says
// who is at the other end of its connection, in what it hands the fetch beside the request: Deno
// (`Deno.serve`, `deno serve`, `listen`) its `info.remoteAddr`, Bun the server, whose
// `requestIP(request)` answers, Node (through `@hono/node-server`) `env.incoming.socket`. workerd
// has no socket to tell: there, `CF-Connecting-IP` is what Cloudflare's network sets, overwriting a
// client's, but a workerd not behind it passes a client's on, so it counts only when the app says
// so (`native`).
//
// Behind a proxy the socket's peer is the proxy; `server.forward-headers-strategy: framework` (the
// key and values are Spring Boot's) takes the address that proxy says it saw instead: the
// right-most entry of `Forwarded` (its `for=`), else of `X-Forwarded-For`. The right-most, not the
// left-most Spring's filter takes: a proxy appends what it saw to what the client sent, so every
// entry left of its own may be the client's invention, and only the last one is the trusted
// proxy's. That text is the client's to shape, so `Forwarded` is read by RFC 7239's grammar, a
// quoted-string whole: a `,` or `;` quoted by the client (or in a `host=` the proxy quotes for it)
// does not end an element, and a header that breaks the grammar (an unbalanced quote the client
// sent, a control character) names no one rather than what a looser reading would find. What is
// taken is checked to be an address (or RFC 7239's `unknown` or `_obfuscated` name), so nothing
// else reaches a log line or a span.
// Declares the key, so that what reads the address has it checked with the others.
import "../config/forward_headers_keys.ts";
import { requestHeader } from "./node_incoming.ts";

/** `server.forward-headers-strategy`: which address stands for the client. */
export type ForwardHeadersStrategy = "none" | "native" | "framework";

/**
 * The peer of the connection `request` came on, where the runtime tells it through `env` (the
 * fetch's second argument); `undefined` on workerd and wherever it does not.
 */
export function socketAddress(request: Request, env: unknown): string | undefined {
  const host = env as {
    incoming?: { socket?: { remoteAddress?: unknown } };
    remoteAddr?: { transport?: unknown; hostname?: unknown };
    requestIP?(request: Request): { address?: unknown } | null;
  } | undefined;
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  let address: unknown;
  try {
    // Deno's and Bun's asked only of the runtime that hands them: an edge runtime's env holds the
    // app's bindings, which may be named anything.
    address = host?.incoming?.socket?.remoteAddress ??
      (g.Deno && host?.remoteAddr?.transport === "tcp"
        ? host.remoteAddr.hostname
        : g.Bun && host?.requestIP?.(request)?.address);
  } catch {
    // Not Bun's server after all.
  }
  return typeof address === "string" ? address : undefined;
}

// RFC 7239's element list, a step at a time: an optional `token=value` pair (the value a token or
// a quoted-string), then the `,` or `;` after it, or the end. Empty elements and pairs are the
// grammar's (`#` and `[ ]`); optional whitespace is taken around separators, as the list rule does.
// The whitespace after a pair is inside its group: two optional runs side by side would be tried at
// every split of a long run of spaces, seconds of one thread for a 50 KB header.
const TOKEN = "[!#$%&'*+.^_`|~\\w-]+";
const PAIR = new RegExp(
  `[\\t ]*(?:(${TOKEN})=(${TOKEN}|"(?:[\\t !#-[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*")[\\t ]*)?(,|;|$)`,
  "y",
);

// A node as RFC 7239 writes it (an IPv4 address, a bracketed IPv6 one, `unknown` or an obfuscated
// `_name`, each with an optional port), or a bare IPv6 address, as `X-Forwarded-For` writes it:
// the address without brackets or port, or `undefined`. The URL parser holds each address to its
// syntax (an IPv4 one written as it would write it: no `01`, no `1.2.3`); the pattern first, as it
// drops tabs and newlines before it parses.
function nodeAddress(node: string): string | undefined {
  const match =
    /^(?:\[([\da-f:.]+)\]|([\d.]+)|(unknown|_[\w.-]{1,255}))(?::(?:\d{1,5}|_[\w.-]+))?$|^([\da-f.]*:[\da-f:.]*)$/i
      .exec(node);
  if (match === null) return undefined;
  const [, bracketed, v4, name, bare] = match;
  if (name !== undefined) return name;
  const v6 = bracketed ?? bare;
  try {
    const host = new URL(`http://${v4 ?? `[${v6}]`}/`).hostname;
    return v4 === undefined ? v6 : host === v4 ? v4 : undefined;
  } catch {
    return undefined; // Not an address.
  }
}

/**
 * The `for=` of the last element of `Forwarded` (every field of it, joined by `, `): its address;
 * `""` where that element has no `for=` (or there is no header); `undefined` where the header
 * breaks the grammar, names `for` twice in the element, or gives a node that is not one.
 */
function forwardedFor(header: string): string | undefined {
  let node = "";
  let next = false;
  PAIR.lastIndex = 0;
  while (PAIR.lastIndex < header.length) {
    const step = PAIR.exec(header);
    if (step === null) return undefined;
    const [, name, value, separator] = step;
    if (name !== undefined) {
      // A pair after a `,`: the element before was not the last.
      if (next) [node, next] = ["", false];
      if (name.toLowerCase() === "for") {
        if (node !== "") return undefined;
        node = value[0] === '"' ? value.slice(1, -1).replace(/\\(.)/g, "$1") : value;
        // `for=""`: a node that is not one.
        if (node === "") return undefined;
      }
    }
    if (separator === ",") next = true;
  }
  return node && nodeAddress(node);
}

/**
 * The client's address by `strategy`: the socket's (`none`); else where the runtime has no socket,
 * Cloudflare's `CF-Connecting-IP` (`native`); or the right-most entry of `Forwarded` (its `for=`,
 * without brackets or port), else (no `Forwarded`, or no `for=` in its last element) of
 * `X-Forwarded-For` (`framework`). A header value that is not an address names no one: the
 * socket's peer stands for the client then.
 */
export function clientAddress(
  request: Request,
  env: unknown,
  strategy: ForwardHeadersStrategy | undefined,
): string | undefined {
  const header = (name: string) => requestHeader(request, env, name) ?? "";
  let forwarded: string | undefined;
  if (strategy === "framework") {
    forwarded = forwardedFor(header("forwarded"));
    if (forwarded === "") {
      const list = header("x-forwarded-for");
      forwarded = nodeAddress(list.slice(list.lastIndexOf(",") + 1).trim());
    }
  }
  return forwarded || socketAddress(request, env) ||
    (strategy === "native" ? nodeAddress(header("cf-connecting-ip").trim()) : undefined);
}
