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
// left-most: a proxy appends what it saw to what the client sent, so every entry left of its own
// may be the client's invention, and only the last one is the trusted proxy's.
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

/**
 * The client's address by `strategy`: the socket's (`none`); else where the runtime has no socket,
 * Cloudflare's `CF-Connecting-IP` (`native`); or the right-most entry of `Forwarded` (its `for=`,
 * without brackets or port), else of `X-Forwarded-For` (`framework`). Cut at 256 characters.
 */
export function clientAddress(
  request: Request,
  env: unknown,
  strategy: ForwardHeadersStrategy | undefined,
): string | undefined {
  const header = (name: string) => requestHeader(request, env, name) ?? "";
  const last = (list: string) => list.slice(list.lastIndexOf(",") + 1).trim();
  // An empty or absent header, or a `Forwarded` without `for=`: the proxy said nothing.
  const found = strategy === "framework"
    ? /(?:^|;)\s*for\s*=\s*"?(?:\[([^\]]*)|([^:";]*))/i.exec(last(header("forwarded")))
    : null;
  const forwarded = strategy === "framework" &&
    ((found?.[1] ?? found?.[2])?.trim() || last(header("x-forwarded-for")));
  const address = forwarded || socketAddress(request, env) ||
    (strategy === "native" && header("cf-connecting-ip"));
  // A header the proxy in front did not replace is the client's to fill: cut, as the log's path is.
  return address ? address.length > 256 ? `${address.slice(0, 256)}…` : address : undefined;
}
