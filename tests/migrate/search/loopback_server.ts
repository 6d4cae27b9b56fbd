// The life cycle both loopback test servers in front of the real node share (fault_server.ts,
// auth_server.ts): listen on a free port of 127.0.0.1, read each request's whole body before the
// handler decides, and on close drop the connections a test left open (a hung request included).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Buffer } from "node:buffer";

/** A running loopback server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `127.0.0.1:<port>`, as a client signs it. */
  readonly host: string;
  /** Destroys every open connection, then stops listening. */
  close(): Promise<void>;
}

/** What a loopback server does with one request, its body read already. */
export type LoopbackHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
) => Promise<void>;

/** Starts a server whose handler failing destroys the connection, as a crashed host would. */
export async function serveLoopback(handle: LoopbackHandler): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    (async () => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of req) chunks.push(chunk as Uint8Array);
      await handle(req, res, Buffer.concat(chunks));
    })().catch(() => req.socket.destroy());
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: `http://${host}`,
    host,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Sends a request the server received on to `upstream` (the node) with only `headers`, and returns
 * the node's status and body text.
 */
export async function forward(
  upstream: string,
  req: IncomingMessage,
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  path: string = req.url ?? "/",
): Promise<{ status: number; text: string }> {
  const answer = await fetch(upstream + path, {
    method: req.method ?? "GET",
    headers,
    body: body.length === 0 ? null : new Uint8Array(body),
  });
  return { status: answer.status, text: await answer.text() };
}
