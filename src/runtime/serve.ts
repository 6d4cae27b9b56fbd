/** Options of `listen(app, options)`. */
export interface ListenOptions {
  /** The port; `0` picks a free one. Defaults to `server.port` of the config, else 8080. */
  readonly port?: number | undefined;
  /** The address to bind; defaults to `server.hostname` of the config, else `0.0.0.0`. */
  readonly hostname?: string | undefined;
  /**
   * Whether SIGTERM and SIGINT shut the server down gracefully and end the process (0 when
   * everything ended cleanly, else 1; a second signal ends it at once with 1). `true` by default.
   */
  readonly signals?: boolean | undefined;
  /**
   * Prints no start line. By default `listen` gives the app's logger (its `info`) one line once
   * it listens, naming the address bound: `Thaw listening on http://0.0.0.0:8080 (every IPv4
   * interface) — 3 controllers, 12 routes, started in 23 ms`.
   */
  readonly quiet?: boolean | undefined;
}

/** A running server. */
export interface Server {
  /** The bound address. */
  readonly hostname: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** `http://host:port`, with `localhost` for an address bound on every interface. */
  readonly url: string;
  /**
   * The actuator's own server, where `management.server.port` gives it one: its address, port
   * and URL. It closes with this one, once the requests in flight here have finished.
   */
  readonly management?: { readonly hostname: string; readonly port: number; readonly url: string };
  /**
   * Shuts down gracefully, as a signal does without ending the process: turns readiness DOWN
   * (answers from then on say `Connection: close`), serves on for `server.shutdown-delay`, stops
   * accepting connections, lets requests in flight finish within `server.shutdown-timeout`, cuts
   * and names those still running then, and runs the app's `close()`. Calling it again returns the
   * same promise.
   */
  close(): Promise<void>;
}

import type { BodyArrival } from "../http/body_arrival.ts";
import type { DenoHost } from "./deno_listener.ts";
import { checkEvery, DEFAULT_HEADER_TIMEOUT_MS } from "./header_timeout.ts";
import type { WebSocketServerLike } from "@hono/node-server";
import { importOptional } from "./optional_module.ts";
import type { Upgrade } from "./websocket_upgrade.ts";
import { isStreamed } from "./streamed_answers.ts";
import {
  closing,
  exitOnSignals,
  gracefulClose,
  InFlight,
  type ServerStop,
  type ShutdownLogger,
  type Waiting,
} from "./shutdown.ts";

type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

/** The sockets of an app that maps WebSockets, as its server takes them. */
export interface ServedSockets {
  readonly maxMessageSize: number;
  readonly maxBuffered: number;
  /**
   * Takes the upgrade of the server made for the app (on Bun and Node: Hono's adapter, whose
   * other half the server holds), for the app's upgrades alone: another app has its own server.
   */
  readonly useUpgrade: (upgrade: Upgrade) => void;
}

// How long Bun keeps a connection with nothing sent or received: a kept-alive one between requests,
// an answer's stream that pauses, a client silent mid-body while the app waits on it. Not while a
// handler works on its own (below). Bun's own default, set here so that it is one. A head has 10 s
// on Bun whatever this says (its own bound, `server.header-timeout`'s default).
const BUN_IDLE_SECONDS = 10;

/** What `serve` needs beside the handler. */
export interface ServeOptions {
  readonly port: number;
  readonly hostname: string;
  /** The largest body Node's listener reads before the handler runs. */
  readonly maxBodySize: number;
  /**
   * The largest body the app takes (an upload under `server.multipart.max-request-size`): Bun
   * refuses a larger declared length before any code runs, so its own cap is raised to it.
   */
  readonly largestBody?: number;
  /**
   * The answer, with no application code involved, to a request the server itself must refuse
   * (status 400-599), or to a handler that failed in a way the app could not answer (500).
   */
  readonly refuse: (status: number) => Response;
  /**
   * Whether the app bounds a request's time from its head (`server.request-timeout`): Node's
   * listener then reads first only a body that came with the head, and hands the app one still
   * arriving as it comes.
   */
  readonly requestTimeout?: boolean;
  /**
   * How long a client has to send a request's head, or the next one on a kept-alive connection,
   * in milliseconds (`server.header-timeout`), on Deno and Node; 10,000 by default, the bound
   * Bun keeps on its own.
   */
  readonly headerTimeoutMs?: number;
  /**
   * Where the app maps WebSockets: the server takes upgrades (Bun's socket handler, Node's `ws`
   * server), and refuses a message over `maxMessageSize` bytes with 1009 where it can.
   */
  readonly websocket?: ServedSockets | undefined;
  /** Whether SIGTERM and SIGINT shut down and end the process. */
  readonly signals: boolean;
  /** How long requests in flight may take once shutdown starts, in milliseconds. */
  readonly shutdownTimeoutMs: number;
  /**
   * How long the server keeps serving once shutdown starts (readiness DOWN) before it stops
   * accepting, in milliseconds; 0 by default.
   */
  readonly shutdownDelayMs?: number;
  /** Where shutdown names what it cut. */
  readonly logger: ShutdownLogger;
  // Either hook may be undefined: the management server spreads the app's options and unsets both.
  /** Runs as shutdown starts (readiness turns DOWN). */
  readonly shutdownStarting?: (() => void) | undefined;
  /** Runs once the server is stopped (the app's `close()`). */
  readonly closed?: (() => Promise<void>) | undefined;
}

interface DenoLike {
  serve(
    options: {
      port: number;
      hostname: string;
      onListen: () => void;
      onError: (error: unknown) => Response;
    },
    handler: FetchHandler,
  ): { addr: { port: number; hostname: string }; shutdown(): Promise<void> };
}
interface BunServerLike {
  /** The idle timeout of one request's connection, in seconds (0: none). */
  timeout(request: Request, seconds: number): void;
}
interface BunLike {
  serve(options: {
    port: number;
    hostname: string;
    fetch: FetchHandler;
    development: boolean;
    error: (error: unknown) => Response;
    maxRequestBodySize: number;
    idleTimeout: number;
    websocket?: object;
  }): {
    port: number;
    hostname: string;
    stop(closeActive?: boolean): Promise<void> | void;
    closeIdleConnections?(): void;
  } & BunServerLike;
}

function server(
  hostname: string,
  port: number,
  stop: ServerStop,
  inFlight: InFlight,
  options: ServeOptions,
): Server {
  const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
  let closing: Promise<boolean> | undefined;
  const shutdown = () =>
    closing ??= gracefulClose(stop, {
      timeoutMs: options.shutdownTimeoutMs,
      delayMs: options.shutdownDelayMs,
      inFlight,
      logger: options.logger,
      starting: options.shutdownStarting,
      closed: options.closed,
    });
  const unlisten = options.signals ? exitOnSignals(shutdown) : () => {};
  let closed: Promise<void> | undefined;
  return {
    hostname,
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () => {
      // Closed by code: a later signal ends the process as it would without a server.
      unlisten();
      return closed ??= shutdown().then(() => {});
    },
  };
}

/**
 * Serves `fetch` on the runtime it runs on: Deno's HTTP server on connections accepted here (see
 * deno_listener.ts), `Bun.serve`, or Node's `http` (where bodies up to `maxBodySize` are read
 * before the handler runs; see node_listener.ts). No server
 * answers with a page of its own: Bun's development error page (HTML with paths, stack and
 * source lines) is off, and a handler that fails anyway gets `refuse(500)` on every runtime.
 */
export async function serve(app: FetchHandler, options: ServeOptions): Promise<Server> {
  const inFlight = new InFlight();
  const g = globalThis as { Deno?: DenoLike; Bun?: BunLike };
  if (g.Deno !== undefined) return await serveOnDeno(g.Deno, app, options, inFlight);
  if (g.Bun !== undefined) return await serveOnBun(g.Bun, app, options, inFlight);
  return await serveOnNode(app, options, inFlight);
}

async function serveOnDeno(
  deno: DenoLike,
  app: FetchHandler,
  options: ServeOptions,
  inFlight: InFlight,
): Promise<Server> {
  const { port, hostname, refuse } = options;
  const headerTimeoutMs = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  const onError = () => refuse(500);
  // A WebSocket needs the server to outlive its connection's HTTP, which Deno's per-connection
  // server does not (see deno_listener.ts): an app that maps one is served by Deno.serve, whose
  // heads have no bound.
  const { serveWithHeaderTimeout } = await import("./deno_listener.ts");
  const bounded = options.websocket !== undefined
    ? undefined
    : serveWithHeaderTimeout(deno as unknown as DenoHost, inFlight.track(app), {
      port,
      hostname,
      headerTimeoutMs,
      onError,
    });
  if (bounded !== undefined) {
    return server(hostname, bounded.port, bounded.stop, inFlight, options);
  }
  // A Deno without the internals it serves a connection with: no bound on heads.
  // Deno.serve reads a body an answer left unread to its end before the connection goes on or
  // closes, and gives its handler no way to close it without losing the answer (see README).
  const s = deno.serve({ port, hostname, onListen: () => {}, onError }, inFlight.track(app));
  // `shutdown` waits for every request however long it runs: Deno has no way to cut one short
  // but the process's end, which a signal brings.
  return server(hostname, s.addr.port, { graceful: () => s.shutdown() }, inFlight, options);
}

async function serveOnBun(
  bun: BunLike,
  app: FetchHandler,
  options: ServeOptions,
  inFlight: InFlight,
): Promise<Server> {
  const { port, hostname, refuse } = options;
  const onError = () => refuse(500);
  const [{ BUN_MAX_BODY, unboundedBodyLeft }, bodies, websocket] = await Promise.all([
    import("./unread_body.ts"),
    import("../http/body_arrival.ts"),
    bunSockets(options.websocket),
  ]);
  // Raised for uploads, but a body left unread is still judged by the 128 MiB: past it Bun
  // would read an unread body (a refused JSON body of 150 MB) to its end before closing.
  const cap = Math.max(BUN_MAX_BODY, options.largestBody ?? 0);
  // Told only while the handler runs (watched from `started` to `settled`).
  const arrival: BodyArrival = {
    waiting: (request) => s.timeout(request, BUN_IDLE_SECONDS),
    ended: (request) => s.timeout(request, 0),
  };
  // Bun reads a body left unread to its end, unless the answer says it closes: a chunked one,
  // or a GET's of any declared length (a larger one on other methods it refuses itself). A
  // client still sending may then get the reset before it reads the answer, which is better
  // than a core busy for as long as it sends.
  // Checked where the tracking settles the answer: one promise per answer, not two.
  const handler = inFlight.track(
    app,
    (request, response) => unboundedBodyLeft(request) ? closing(response) : response,
    bunIdleTimer(bodies, arrival),
  );
  bodies.watchBodyArrivals();
  const s = bun.serve({
    port,
    hostname,
    fetch: handler,
    development: false,
    error: onError,
    maxRequestBodySize: cap,
    idleTimeout: BUN_IDLE_SECONDS,
    ...websocket === undefined ? {} : { websocket },
  });
  return server(hostname, s.port, bunStop(s), inFlight, options);
}

// Bun's idle timer runs while a handler does (nothing is sent or received), and at its end
// the answer is dropped for an empty close, though the handler, the access log and the
// metrics saw a 200: held while the handler runs (`server.request-timeout` bounds that),
// set again for the kept-alive connection once it answers. But Bun runs the handler once
// the head is in, so the app may wait on a body still arriving: the timer runs while it
// does (what Thaw's body readers tell body_arrival.ts), or a client silent mid-body would
// hold its connection for good. GET and HEAD are not watched (no lookup on them), nor a
// body a middleware reads through `c.req`: those wait as on Deno, within
// `server.request-timeout`. A body the app never reads Bun reads after the answer, timed.
function bunIdleTimer(
  bodies: typeof import("../http/body_arrival.ts"),
  arrival: BodyArrival,
): Waiting {
  const { unwatchBodyArrival, watchBodyArrival } = bodies;
  return {
    started: (request, env) => {
      const method = request.method;
      const waits = method !== "GET" && method !== "HEAD" &&
        watchBodyArrival(request, arrival);
      (env as BunServerLike).timeout(request, waits ? BUN_IDLE_SECONDS : 0);
    },
    // An event stream's silences are its heartbeats' to bound: none while it runs, and the
    // kept-alive connection's timeout back once it ends.
    settled: (request, env) => {
      const method = request.method;
      if (method !== "GET" && method !== "HEAD") unwatchBodyArrival(request);
      const server = env as BunServerLike;
      const streaming = isStreamed(request, () => server.timeout(request, BUN_IDLE_SECONDS));
      server.timeout(request, streaming ? 0 : BUN_IDLE_SECONDS);
    },
  };
}

function bunStop(s: ReturnType<BunLike["serve"]>): ServerStop {
  return {
    graceful: async () => {
      const stopped = s.stop(false);
      // Closed unanswered, as Deno and Node close them: a request a client sends on a kept-alive
      // connection just as it closes never ran, and clients retry such a request (idempotent
      // ones by themselves: RFC 9112 9.3.1, RFC 9110 9.2.2), where any answer would be final.
      // stop(false) closes the idle ones itself in the Bun the suite runs on; older ones left
      // them open until their idle timeout.
      s.closeIdleConnections?.();
      await stopped;
    },
    cut: () => void s.stop(true),
  };
}

// Hono's handler of the sockets `upgradeWebSocket` opens on Bun, where the app maps any: Bun
// closes a message over the bound with 1009 itself.
async function bunSockets(
  websocket: ServeOptions["websocket"],
): Promise<object | undefined> {
  if (websocket === undefined) return undefined;
  const [{ websocket: handler }, { bunUpgrade }] = await Promise
    .all([import("hono/bun"), import("./websocket_upgrade.ts")]);
  websocket.useUpgrade(bunUpgrade);
  // Bun drops what is sent past its own bound (16 MiB unless told): never before Thaw's closes.
  return {
    ...handler,
    maxPayloadLength: websocket.maxMessageSize,
    backpressureLimit: websocket.maxBuffered,
  };
}

async function serveOnNode(
  app: FetchHandler,
  options: ServeOptions,
  inFlight: InFlight,
): Promise<Server> {
  const { port, hostname, maxBodySize, refuse } = options;
  const headerTimeoutMs = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  // Loaded only here, so other runtimes never import node:http or Hono's adapter for it.
  const [
    { createServer },
    { nodeRequestListener, refuseOnNode, serveOtherUpgrades, upgradeOffers },
  ] = await Promise.all([import("node:http"), import("./node_listener.ts")]);
  const listener = await nodeRequestListener(
    inFlight.track(app),
    hostname,
    maxBodySize,
    refuse,
    options.requestTimeout === true,
  );
  // Node checks heads every 30 s by default, so a bound of 60 s held up to 90 s.
  const serverOptions = {
    headersTimeout: headerTimeoutMs,
    connectionsCheckingInterval: checkEvery(headerTimeoutMs),
  };
  let s: import("node:http").Server;
  if (options.websocket === undefined) s = createServer(serverOptions, listener);
  else {
    // Upgrades other than a WebSocket's are served as requests: by Node where it knows the
    // option, else by the listener serveOtherUpgrades adds.
    const offers = upgradeOffers(listener);
    const upgrading = { ...serverOptions, shouldUpgradeCallback: offers.shouldUpgradeCallback };
    s = await nodeSocketServer(
      inFlight.track(app),
      options.websocket,
      () => createServer(upgrading, offers.listener),
    );
    await serveOtherUpgrades(s);
  }
  refuseOnNode(s, refuse);
  const closeIdle = idleCloser(s);
  await new Promise<void>((resolve, reject) => {
    s.once("listening", () => resolve());
    s.once("error", (error) => reject(error));
    s.listen(port, hostname);
  });
  const address = s.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  const stop: ServerStop = {
    graceful: () =>
      new Promise<void>((resolve, reject) => {
        // close() closes the kept-alive connections idle now, not those that go idle later: an
        // answer whose head went out before the drain (a stream) leaves its connection open, and
        // close() would wait for the client to hang up. So again, until the server is closed.
        const idle = setInterval(closeIdle, 100);
        s.close((e) => {
          clearInterval(idle);
          if (e) reject(e);
          else resolve();
        });
        closeIdle();
      }),
    cut: () => s.closeAllConnections(),
  };
  return server(hostname, bound, stop, inFlight, options);
}

// What closes the server's idle connections. Node 20 counts a connection on which no request came
// yet as busy: close() and closeIdleConnections() leave it open, and a request sent on it once the
// drain started was answered, where an idle connection must close unanswered (Node 22 on closes
// it itself).
function idleCloser(s: import("node:http").Server): () => void {
  const unused = new Set<import("node:net").Socket>();
  s.on("connection", (socket: import("node:net").Socket) => {
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  s.on("request", (request: import("node:http").IncomingMessage) => unused.delete(request.socket));
  // Not told by an `upgrade` listener of its own: the adapter answers a refused WebSocket upgrade
  // only while it has the only one. An upgraded connection has no HTTP parser any more (Node
  // frees it): the socket's now, not an idle connection's.
  return () => {
    s.closeIdleConnections();
    for (const socket of unused) {
      if ((socket as { parser?: unknown }).parser != null) socket.destroy();
    }
  };
}

// Node's server with the upgrades of `upgradeWebSocket` wired to a `ws` server, as
// `@hono/node-server` wires them (its `createAdaptorServer`, given the server made here so that
// requests keep Thaw's listener): `ws` closes a message over the bound with 1009 itself.
async function nodeSocketServer(
  fetch: FetchHandler,
  websocket: NonNullable<ServeOptions["websocket"]>,
  create: () => import("node:http").Server,
): Promise<import("node:http").Server> {
  const [{ createAdaptorServer, upgradeWebSocket }, { WebSocketServer }, upgrades] = await Promise
    .all([
      import("@hono/node-server"),
      importOptional(() => import("ws"), {
        packages: ["ws"],
        neededBy: "a @WebSocketMapping on Node",
        what: "the ws package",
      }),
      import("./websocket_upgrade.ts"),
    ]);
  websocket.useUpgrade(upgrades.guarded(upgradeWebSocket));
  // No subprotocol is answered (`ws` takes the first one offered unless told): an app declares none.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: websocket.maxMessageSize,
    handleProtocols: () => false,
  });
  return createAdaptorServer({
    fetch,
    createServer: create as unknown as typeof import("node:http").createServer,
    // The adapter types the `ws` server it takes by a shape of its own, which `ws`'s overloaded
    // types do not meet though the server is the one it is written for.
    websocket: { server: wss as unknown as WebSocketServerLike },
  }) as import("node:http").Server;
}
