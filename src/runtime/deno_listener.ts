// Deno's server with a bound on request heads. `Deno.serve` reads a head for as long as a client
// sends it (a byte a second holds a connection for good, and 400 such clients hold 400) and has no
// option against it; Node has `headersTimeout`, and Bun a 10 s bound of its own. So on Deno
// `listen` accepts the connections itself and serves each one through Deno's own HTTP server
// (`serveHttpOnConnection`, the per-connection form of what `Deno.serve` runs): the same server,
// with the connection in hand. A sweep closes those that had no new request within the bound of
// their opening or of their last answer's end.
// The price: each connection waits for its requests on its own, where one server takes several
// that are ready at once, about 2 µs more CPU per request at 64 busy kept-alive connections.
// And no upgrade: a 101 ends a connection's server, and Deno closes the upgraded socket with it
// (a `Deno.upgradeWebSocket` socket closes at once, seen on Deno 2.9.5). Thaw answers no upgrade
// today; one that does must serve those requests another way.
import { checkEvery } from "./header_timeout.ts";
import type { ServerStop } from "./shutdown.ts";

type Handler = (request: Request, info: unknown) => Response | Promise<Response>;

interface Conn {
  close(): void;
}
interface Listener {
  readonly addr: { readonly port: number; readonly hostname: string };
  accept(): Promise<Conn>;
  close(): void;
}
interface ConnectionServer {
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}
type ServeOnConnection = (
  conn: Conn,
  signal: AbortSignal,
  handler: Handler,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => ConnectionServer;

/** What of Deno this needs: `Deno.listen`, and its internals where `Deno.serve` keeps them. */
export interface DenoHost {
  listen(options: { port: number; hostname: string; transport: "tcp" }): Listener;
  readonly internal?: symbol;
  unrefTimer?(id: number): void;
}

/** One accepted connection, as the sweep sees it. */
interface Connection {
  /** Requests whose head arrived, counted by the handler. */
  requests: number;
  /** Requests whose answer is not sent yet: while there are some, the client waits, not the bound. */
  answering: number;
  /**
   * When (`Date.now()`) it opened, or its last answer was sent. Not `performance.now()`: on Deno
   * that is a call into the runtime, 0.3 µs of every answer. A wall clock stepped forward by more
   * than the bound closes what is open as if the bound had passed: a kept-alive connection at
   * rest (which a client must expect anyway), and one whose first head is still arriving (reset;
   * its client sends again). One stepped back is counted from the sweep that sees it.
   */
  since: number;
  readonly abort: AbortController;
  server?: ConnectionServer;
  /** The graceful close, once asked for. */
  closing?: Promise<void>;
}

// An accept that fails (too many open files) is tried again after this, as Deno.serve does.
const ACCEPT_RETRY_MS = 1000;

/**
 * Serves `handler` on `port` and `hostname` through Deno's HTTP server, closing a connection on
 * which no request head arrived within `headerTimeoutMs`: the first one since it opened, or the
 * next one since the last answer was sent (a request being answered holds it open, however long).
 * One with no request yet is closed at once; one that had requests is closed gracefully (a request
 * whose head came just then is answered first). `undefined` where this Deno lacks the internals
 * (then `Deno.serve`).
 */
export function serveWithHeaderTimeout(
  deno: DenoHost,
  handler: Handler,
  options: {
    readonly port: number;
    readonly hostname: string;
    readonly headerTimeoutMs: number;
    readonly onError: (error: unknown) => Response;
  },
): { readonly port: number; readonly stop: ServerStop } | undefined {
  const serveOnConnection = httpOnConnection(deno);
  if (serveOnConnection === undefined) return undefined;
  const listener = deno.listen({
    port: options.port,
    hostname: options.hostname,
    transport: "tcp",
  });
  const open = new Set<Connection>();
  let stopped = false;
  const accept = acceptor(serveOnConnection, handler, options.onError, open);

  const accepting = (async () => {
    while (!stopped) {
      let conn: Conn;
      try {
        conn = await listener.accept();
      } catch {
        if (stopped) return;
        await new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS));
        continue;
      }
      // Accepted as the server stopped: the stop no longer sees it, so it is not served.
      if (stopped) return conn.close();
      accept(conn);
    }
  })();

  const sweep = sweepHeadless(deno, open, options.headerTimeoutMs);
  const stop: ServerStop = {
    graceful: async () => {
      stopped = true;
      listener.close();
      // The port is free once the accept it waits in has ended, not when close() returns.
      await accepting;
      // Each connection's server closes its idle connection at once and lets an answer finish.
      await Promise.all([...open].map(close));
      clearInterval(sweep);
    },
  };
  return { port: listener.addr.port, stop };
}

// Deno's per-connection HTTP server, where this Deno keeps it in its internals.
function httpOnConnection(deno: DenoHost): ServeOnConnection | undefined {
  const internals = deno.internal === undefined
    ? undefined
    : (deno as unknown as Record<symbol, { serveHttpOnConnection?: unknown } | undefined>)[
      deno.internal
    ];
  const serveOn = internals?.serveHttpOnConnection;
  return typeof serveOn === "function" ? serveOn as ServeOnConnection : undefined;
}

// Serves each accepted connection on its own server, counting its requests and answers for the
// sweep, and keeps it in `open` until its server ends.
function acceptor(
  serveOnConnection: ServeOnConnection,
  handler: Handler,
  onError: (error: unknown) => Response,
  open: Set<Connection>,
): (conn: Conn) => void {
  return (conn) => {
    const connection: Connection = {
      requests: 0,
      answering: 0,
      since: Date.now(),
      abort: new AbortController(),
    };
    // The bound runs again from an answer's end, not its request's start: an answer that took
    // longer than the bound must not close the connection under the client's next request.
    const answered = () => {
      connection.answering--;
      connection.since = Date.now();
    };
    try {
      connection.server = serveOnConnection(
        conn,
        connection.abort.signal,
        (request, info) => {
          connection.requests++;
          connection.answering++;
          // Settles once the answer is sent, its body included, or the client went away.
          const completed = (info as { readonly completed?: unknown } | undefined)?.completed;
          if (completed instanceof Promise) {
            completed.then(answered, answered);
            return handler(request, info);
          }
          // A Deno without `completed`: the handler's answer, its body perhaps still going out.
          try {
            const answer = handler(request, info);
            if (answer instanceof Promise) answer.then(answered, answered);
            else answered();
            return answer;
          } catch (error) {
            answered();
            throw error;
          }
        },
        onError,
        () => {},
      );
    } catch {
      // Reset before it could be served: nobody to answer.
      conn.close();
      return;
    }
    open.add(connection);
    // A connection reset or cut ends its server with an error: nothing to report, it is gone.
    const forget = () => void open.delete(connection);
    connection.server.finished.then(forget, forget);
  };
}

// Closes, every so often, the open connections on which no head arrived within the bound.
function sweepHeadless(
  deno: DenoHost,
  open: ReadonlySet<Connection>,
  headerTimeoutMs: number,
): ReturnType<typeof setInterval> {
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const connection of open) {
      // The wall clock stepped back: counted from now, so that the bound holds from here on.
      if (connection.since > now) connection.since = now;
      if (connection.answering === 0 && now - connection.since >= headerTimeoutMs) {
        // No request yet: nothing of the client's is running, and a head half sent is dropped.
        if (connection.requests === 0) connection.abort.abort();
        else void close(connection);
      }
    }
  }, checkEvery(headerTimeoutMs));
  // The sweep alone keeps no process alive: the listener does, while it is open.
  deno.unrefTimer?.(sweep as unknown as number);
  return sweep;
}

// Asked once; a server already ended refuses, which changes nothing.
function close(connection: Connection): Promise<void> {
  return connection.closing ??= Promise.resolve().then(() => connection.server?.shutdown()).catch(
    () => {},
  );
}
