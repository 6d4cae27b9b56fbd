// The WebSocket upgrade of the runtime the app runs on, through Hono's socket context: Deno's
// `Deno.upgradeWebSocket` and workerd's `WebSocketPair` here, each as Hono's adapter for it does it
// (workerd's with the open event Hono's leaves out), since both serve an app's `fetch` without
// `listen` (`deno serve`, `export default app`); on Bun and Node, Hono's adapter that the app's own
// server chose (each `listen` hands it to the app it serves, not to every app of the process), as
// the server's own part of the upgrade (Bun's socket handler, Node's `ws` server) must go with it. Nothing here imports an adapter: a worker's bundle holds none of those it cannot use.
import type { Context } from "hono";
import { WSContext, type WSEvents } from "hono/ws";

/** Upgrades the request of `c` to a socket driven by `events`; `undefined` if it could not. */
export type Upgrade = (c: Context, events: WSEvents) => Promise<Response | undefined>;

/**
 * The upgrade of the runtime this code runs on. On Bun and Node it is the one the app's own server
 * handed over (`serverUpgrade`, read at each upgrade: the app is made before it listens); without
 * one, `undefined`.
 */
export function runtimeUpgrade(serverUpgrade: () => Upgrade | undefined): Upgrade {
  const g = globalThis as { Deno?: DenoLike; WebSocketPair?: unknown };
  if (typeof g.WebSocketPair === "function") return workerdUpgrade;
  if (g.Deno !== undefined) return denoUpgrade(g.Deno);
  return (c, events) => serverUpgrade()?.(c, events) ?? Promise.resolve(undefined);
}

/**
 * Hono's helper as an {@linkcode Upgrade}: it throws when its adapter did not upgrade (a request
 * it does not take for one, an env without the server's part).
 */
export function guarded(helper: (c: Context, events: WSEvents) => Promise<Response>): Upgrade {
  return async (c, events) => {
    try {
      return await helper(c, events);
    } catch (error) {
      if (error instanceof Error && error.message === "Failed to upgrade WebSocket") {
        return undefined;
      }
      throw error;
    }
  };
}

/** What Deno's and workerd's sockets have alike: the web's `WebSocket`. */
interface WebSocketLike {
  readonly protocol: string;
  readonly readyState: number;
  readonly url: string | null;
  send(data: string | ArrayBuffer | Uint8Array<ArrayBuffer>): void;
  close(code?: number, reason?: string): void;
}

// Hono's context of a socket of the web's kind, as its Deno and workerd adapters make it.
function contextOf(socket: WebSocketLike): WSContext {
  return new WSContext({
    close: (code, reason) => socket.close(code, reason),
    get protocol() {
      return socket.protocol;
    },
    raw: socket,
    get readyState() {
      return socket.readyState as 0 | 1 | 2 | 3;
    },
    url: socket.url ? new URL(socket.url) : null,
    send: (source) => socket.send(source),
  });
}

interface DenoLike {
  upgradeWebSocket(request: Request, options?: { protocol?: string }): {
    response: Response;
    socket: WebSocket;
  };
}

// Hono's Deno adapter (hono/deno's `upgradeWebSocket`), but with no subprotocol chosen: Hono's
// answers the first one a client offers, which tells the client the app speaks one it never
// declared. An app declares none, so none is answered, on every runtime.
function denoUpgrade(deno: DenoLike): Upgrade {
  return (c, events) => {
    const { response, socket } = deno.upgradeWebSocket(c.req.raw);
    const ws = contextOf(socket);
    socket.onopen = (evt) => events.onOpen?.(evt, ws);
    socket.onmessage = (evt) => events.onMessage?.(evt, ws);
    socket.onclose = (evt) => events.onClose?.(evt, ws);
    socket.onerror = (evt) => events.onError?.(evt, ws);
    return Promise.resolve(response);
  };
}

interface BunServerLike {
  upgrade(request: Request, options: { data: unknown; headers: Record<string, string> }): boolean;
}

/**
 * Hono's Bun adapter (hono/bun's `upgradeWebSocket`, whose `websocket` handler drives the socket
 * from `data`), but with no subprotocol: Bun answers the first one offered unless the answer's
 * headers name one, and an empty one sends none.
 */
export const bunUpgrade: Upgrade = (c, events) => {
  const env = c.env as ({ server?: BunServerLike } & Partial<BunServerLike>) | undefined;
  const server = env !== undefined && "server" in env ? env.server : env;
  if (typeof server?.upgrade !== "function") return Promise.resolve(undefined);
  const data = { events, url: new URL(c.req.url), protocol: "" };
  const upgraded = server.upgrade(c.req.raw, { data, headers: { "sec-websocket-protocol": "" } });
  // Bun's server writes the 101 itself; the app's answer is not sent.
  return Promise.resolve(upgraded ? new Response(null) : undefined);
};

interface WorkerdSocket extends WebSocketLike {
  accept(): void;
  addEventListener(type: string, listener: (event: Event) => void): void;
}

// Hono's workerd adapter (hono/cloudflare-workers'), with the open event it does not tell:
// workerd's server half is open once accepted, so `onOpen` runs then, and may already send.
const workerdUpgrade: Upgrade = (_c, events) => {
  const Pair = (globalThis as unknown as { WebSocketPair: new () => WorkerdSocket[] })
    .WebSocketPair;
  const [client, server] = new Pair();
  const ws = contextOf(server);
  server.addEventListener("message", (evt) => events.onMessage?.(evt as MessageEvent, ws));
  server.addEventListener("close", (evt) => events.onClose?.(evt as CloseEvent, ws));
  server.addEventListener("error", (evt) => events.onError?.(evt, ws));
  server.accept();
  events.onOpen?.(new Event("open"), ws);
  return Promise.resolve(new Response(null, { status: 101, webSocket: client } as ResponseInit));
};
