// `@hono/node-server` passes `{ incoming, outgoing }` as the env: the Node request is there, with
// what Node parsed already. Reading it spares the adapter work it does lazily for the web
// `Request`: a `Headers` built from `rawHeaders` on first use, and a web stream to hand over bytes
// that are already in memory.

interface Incoming {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody?: unknown;
}

// Only a Node request qualifies: an edge runtime's env holds the user's bindings, which may be
// named anything, `incoming` included.
function incomingOf(env: unknown): Incoming | undefined {
  if (typeof env !== "object" || env === null) return undefined;
  const incoming = (env as { incoming?: unknown }).incoming;
  if (typeof incoming !== "object" || incoming === null) return undefined;
  const { headers, rawHeaders } = incoming as { headers?: unknown; rawHeaders?: unknown };
  return typeof headers === "object" && headers !== null && Array.isArray(rawHeaders)
    ? incoming as Incoming
    : undefined;
}

/**
 * The body a Node server read before the request reached Hono, `incoming.rawBody`: `app.listen`
 * on Node reads it (node_listener.ts), as do hosts like Cloud Functions.
 */
export function rawBodyOf(env: unknown): Uint8Array | undefined {
  const body = incomingOf(env)?.rawBody;
  return body instanceof Uint8Array ? body : undefined;
}

/**
 * A request header, from Node's parsed headers when the request came through Hono's Node adapter
 * (asking the web `Request` would make the adapter build a `Headers` for it), else from the
 * request. Node joins repeated headers with `, ` as `Headers.get` does, except for the few it
 * keeps the first of (`content-type`, `content-length`, ...), which have one value anyway.
 */
export function requestHeader(request: Request, env: unknown, name: string): string | null {
  const incoming = incomingOf(env);
  if (incoming === undefined) return request.headers.get(name);
  const value = incoming.headers[name];
  if (value === undefined) return null;
  return typeof value === "string" ? value : value.join(", ");
}
