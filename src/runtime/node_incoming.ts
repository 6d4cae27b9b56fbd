// `@hono/node-server` passes `{ incoming, outgoing }` as the env: the Node request is there, with
// what Node parsed already. Reading it spares the adapter work it does lazily for the web
// `Request`: a `Headers` built from `rawHeaders` on first use, and a web stream to hand over bytes
// that are already in memory.
import type { ServerRequest } from "../http/server_request.ts";

interface Incoming {
  readonly rawHeaders: readonly string[];
  readonly rawBody?: unknown;
}

// Only a Node request qualifies: an edge runtime's env holds the user's bindings, which may be
// named anything, `incoming` included.
function incomingOf(env: unknown): Incoming | undefined {
  if (typeof env !== "object" || env === null) return undefined;
  const incoming = Object.hasOwn(env, "incoming")
    ? (env as { incoming?: unknown }).incoming
    : undefined;
  if (typeof incoming !== "object" || incoming === null) return undefined;
  const { headers, rawHeaders } = incoming as { headers?: unknown; rawHeaders?: unknown };
  return typeof headers === "object" && headers !== null && Array.isArray(rawHeaders)
    ? incoming as Incoming
    : undefined;
}

/**
 * The body a Node server read before the request reached Hono, `incoming.rawBody`: `listen(app)`
 * on Node reads it (node_listener.ts), as do hosts like Cloud Functions.
 */
export function rawBodyOf(env: unknown): Uint8Array | undefined {
  const body = incomingOf(env)?.rawBody;
  return body instanceof Uint8Array ? body : undefined;
}

/**
 * A request header, from Node's raw header list when the request came through Hono's Node adapter
 * (asking the web `Request` would make the adapter build a `Headers` for it), else from the
 * request. Every field of the name is joined by `, `, as `Headers.get` does: `incoming.headers`
 * keeps only the first `Content-Type`, which would hide a second one.
 */
export function requestHeader(request: Request, env: unknown, name: string): string | null {
  const incoming = incomingOf(env);
  if (incoming === undefined) return request.headers.get(name);
  const raw = incoming.rawHeaders;
  let value: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = raw[i];
    if (field.length === name.length && field.toLowerCase() === name) {
      value = value === null ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
    }
  }
  return value;
}

/** Node's parsed request where there is one, the web `Request` otherwise. */
export const nodeServerRequest: ServerRequest = { header: requestHeader, body: rawBodyOf };
