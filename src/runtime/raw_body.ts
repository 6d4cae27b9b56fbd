/**
 * The body a Node server read before the request reached Hono: `@hono/node-server` passes
 * `{ incoming, outgoing }` as the env, and `incoming.rawBody` holds the bytes when something read
 * them first (`app.listen` on Node does, as do hosts like Cloud Functions). Reading these bytes
 * spares the adapter from building a web `Request` and stream just to hand the same bytes over.
 */
export function rawBodyOf(env: unknown): Uint8Array | undefined {
  if (typeof env !== "object" || env === null) return undefined;
  const incoming = (env as { incoming?: { rawBody?: unknown } }).incoming;
  const body = typeof incoming === "object" && incoming !== null ? incoming.rawBody : undefined;
  return body instanceof Uint8Array ? body : undefined;
}
