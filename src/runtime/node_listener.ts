import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { HttpStatus } from "../http/http_status.ts";

type Fetch = (request: Request, env?: unknown) => Response | Promise<Response>;
type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/**
 * The node:http request listener of `listen(app)` on Node: Hono's adapter, with one change. A body
 * of declared length within the limit is read into `incoming.rawBody` before the request goes on,
 * as Node hosts such as Cloud Functions do; the adapter and Thaw's body binding then take the
 * bytes as they are, without asking the web `Request` for them. The adapter's 1.x read them back
 * through a web stream (about three times the cost per request with a small JSON body); 2.x reads
 * the socket itself, and a POST still costs about 15% more CPU that way than read here first.
 * Bodies without a length, or over the limit, are left to the stream, where the limit answers 413.
 * With `bodyCounts` (the app has a request timeout), so is a body that did not come with the head.
 *
 * Everything Node-only is imported dynamically: this file is bundled for workerd too.
 */
export async function nodeRequestListener(
  fetch: Fetch,
  hostname: string,
  maxBodySize: number,
  onError: (status: 400 | 500) => Response,
  bodyCounts = false,
): Promise<Listener> {
  const [{ getRequestListener, RequestError }, { Buffer }, { setImmediate }] = await Promise.all([
    import("@hono/node-server"),
    import("node:buffer"),
    import("node:timers"),
  ]);
  // The adapter's own refusals (an invalid Host, a `\` in the path) are client errors: 400.
  const options = {
    hostname,
    errorHandler: (error: unknown) => error instanceof RequestError ? onError(400) : onError(500),
  };
  const listener = getRequestListener(fetch, options);
  // Whatever escapes the adapter (Node's `writeHead` refusing a header, a socket gone) must not
  // become an unhandled rejection, which ends the process: the default 500 if nothing was sent,
  // else the connection is closed.
  const run = (serve: Listener, incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const answered = serve(incoming, outgoing) as unknown as Promise<void>;
    answered.catch(() => lastResort(outgoing, onError));
  };
  return (incoming, outgoing) => {
    if (incoming.method === "GET" || incoming.method === "HEAD") {
      if (declaresBody(incoming.rawHeaders)) boundUnreadBody(incoming, outgoing);
      return run(listener, incoming, outgoing);
    }
    // Node builds `incoming.headers` on first use (the adapter reads rawHeaders): only here.
    const declared = incoming.headers["content-length"];
    if (declared === undefined || !/^\d+$/.test(declared) || Number(declared) > maxBodySize) {
      boundUnreadBody(incoming, outgoing);
      return run(listener, incoming, outgoing);
    }
    if (!bodyCounts) return readFirst(incoming, outgoing);
    // Where the app bounds a request's time (`server.request-timeout`), a body still arriving
    // counts, as on Deno and Bun: read first only a body that came with the head (the parser is
    // done with that read by the next turn of the loop), else the app runs now and reads it as
    // it comes. One setImmediate, on bodies of declared length alone; the timeout costs a timer.
    setImmediate(() => {
      if (incoming.complete) return readFirst(incoming, outgoing);
      boundUnreadBody(incoming, outgoing);
      run(listener, incoming, outgoing);
    });
  };

  function readFirst(incoming: IncomingMessage, outgoing: ServerResponse): void {
    const chunks: Uint8Array[] = [];
    incoming.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    incoming.on("end", () => {
      (incoming as IncomingMessage & { rawBody?: Uint8Array }).rawBody = chunks.length === 1
        ? chunks[0]
        : Buffer.concat(chunks);
      run(listener, incoming, outgoing);
    });
    // The client went away before its body arrived: there is nobody to answer.
    incoming.on("error", () => outgoing.destroy());
  }
}

// Whether the head declares a body (RFC 9112, 6.3): a non-zero length, or any transfer coding.
// Read from the raw list: `incoming.headers` is built on first use, and a GET rarely needs it.
function declaresBody(raw: readonly string[]): boolean {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") return true;
    if (
      name.length === 14 && name.toLowerCase() === "content-length" &&
      !/^\s*0*\s*$/.test(raw[i + 1])
    ) {
      return true;
    }
  }
  return false;
}

const LINGER_MS = 500;
const LINGER_BYTES = 64 * 1024 * 1024;

// What an answer left unread is read for at most 500 ms or 64 MiB more, then the connection
// closes: a lingering close, so that a client still sending reads its answer before it goes. The
// adapter means to do so for a body it streams, and reads none of a GET or HEAD; but both it and
// Node's own listener, which dumps a body nobody reads, run on `finish` after this one, and a
// dumped body never reaches `data`: the 500 ms alone let half a gigabyte through on loopback.
function boundUnreadBody(incoming: IncomingMessage, outgoing: ServerResponse): void {
  outgoing.prependOnceListener("finish", () => {
    if (incoming.complete) return;
    let read = 0;
    // Chunks already parsed keep coming after the close is asked for: it is asked once.
    const count = (chunk: Uint8Array) => {
      read += chunk.byteLength;
      if (read > LINGER_BYTES) close();
    };
    const close = () => {
      clearTimeout(timer);
      incoming.off("data", count);
      incoming.socket?.destroySoon();
    };
    const timer = setTimeout(close, LINGER_MS);
    incoming.on("data", count);
    incoming.once("end", () => clearTimeout(timer));
    incoming.resume();
  });
}

function lastResort(outgoing: ServerResponse, onError: (status: 500) => Response): void {
  if (outgoing.headersSent) return void outgoing.destroy();
  onError(500).text().then((body) => {
    // The reason phrase is given: a writeHead that failed may have left the app's own.
    outgoing.writeHead(500, "Internal Server Error", {
      "content-type": "application/json",
      "content-length": new TextEncoder().encode(body).byteLength,
      connection: "close",
    });
    outgoing.end(body);
  }).catch(() => outgoing.destroy());
}

/**
 * Gives the requests Node's HTTP parser refuses before any listener runs the answers the other
 * runtimes give: a method Node does not know is 501 (as Thaw answers it on Deno), `CONNECT` is 501
 * (Node would close the connection without a word), an oversized head 431, a timed-out one 408,
 * anything else malformed 400; each with the default error body, then the connection closes.
 */
export function refuseOnNode(server: Server, refuse: (status: number) => Response): void {
  // `pending`: whether an answer to an earlier request on this connection may still be written,
  // in which case a refusal written now would be taken for it: only the close is left.
  const answer = (socket: Duplex, status: number, pending: boolean): void => {
    // Node takes its own listener off a socket it hands over (`connect`): a reset while the
    // answer is written must not become an uncaught error that ends the process.
    socket.on("error", () => socket.destroy());
    if (!socket.writable || pending) {
      socket.destroy();
      return;
    }
    // A client that never reads its answer, or trickles bytes to keep an idle timer young, must
    // not keep the socket, nor the server's close() waiting: a deadline, not an idle timeout.
    const deadline = setTimeout(() => socket.destroy(), 10_000);
    socket.once("close", () => clearTimeout(deadline));
    void refuse(status).text().then((body) => {
      socket.end(
        `HTTP/1.1 ${status} ${HttpStatus.valueOf(status).getReasonPhrase()}\r\n` +
          "content-type: application/json\r\n" +
          `content-length: ${new TextEncoder().encode(body).byteLength}\r\n` +
          `connection: close\r\n\r\n${body}`,
      );
    }, () => socket.destroy());
  };
  const current = (socket: Duplex) =>
    (socket as Duplex & { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
  server.on("clientError", (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === "ECONNRESET") return void socket.destroy();
    // As Node's own handler: no answer once a response has begun.
    const pending = current(socket)?._headerSent === true;
    answer(
      socket,
      error.code === "HPE_INVALID_METHOD"
        ? 501
        : error.code === "HPE_HEADER_OVERFLOW"
        ? 431
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? 408
        : 400,
      pending,
    );
  });
  // A CONNECT pipelined behind a request whose answer is not out yet: no answer of its own.
  server.on(
    "connect",
    (_request: IncomingMessage, socket: Duplex) =>
      answer(socket, 501, current(socket) !== undefined),
  );
}

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Uint8Array) => void;

/**
 * Whether `request` asks for a WebSocket: the upgrades `@hono/node-server`'s listener takes, read
 * as it reads them.
 */
export function asksForWebSocket(request: IncomingMessage): boolean {
  return request.headers.upgrade?.toLowerCase() === "websocket";
}

/**
 * Node's `shouldUpgradeCallback` (Node 22.21 and 24.9 on; earlier ones ignore the option), with
 * the request listener that goes with it. A WebSocket's upgrade, and an offer of another protocol
 * without a body, go to the `upgrade` listeners ({@linkcode serveOtherUpgrades} serves the
 * latter as a request, with what follows it). An offer with a body Node serves itself, having
 * read part of it: but it drops what came after the offer in its packet (a pipelined request)
 * and would serve those after it, each answer then taken for the one before. `listener` closes
 * the connection once such an offer is answered, and the client sends the rest on a new one.
 */
export function upgradeOffers(listener: Listener): {
  readonly shouldUpgradeCallback: (request: IncomingMessage) => boolean;
  readonly listener: Listener;
} {
  const served = new WeakSet<IncomingMessage>();
  return {
    shouldUpgradeCallback: (request) => {
      if (asksForWebSocket(request) || !declaresBody(request.rawHeaders)) return true;
      served.add(request);
      return false;
    },
    listener: (incoming, outgoing) => {
      if (served.has(incoming)) outgoing.shouldKeepAlive = false;
      listener(incoming, outgoing);
    },
  };
}

/**
 * Serves as plain HTTP/1.1 a request that asks to upgrade to anything but a WebSocket (the h2c
 * upgrade Java's HttpClient and `curl --http2` offer on `http://`), where the app maps a socket.
 * Node hands such a request to the `upgrade` listeners, which then own the connection, and the
 * adapter's returns without a word: the client waited for ever on every route. Where Node knows
 * `shouldUpgradeCallback` it serves those requests itself; elsewhere the request's head is given
 * back to the server as a new connection's first bytes, with the `upgrade` token taken out of
 * `Connection` so that the parser does not take it for an upgrade again: the route answers it, and
 * the connection goes on as any other, under the server's timeouts. WebSocket upgrades go to the
 * listeners there were.
 */
export async function serveOtherUpgrades(server: Server): Promise<void> {
  const { Buffer } = await import("node:buffer");
  const taken = server.listeners("upgrade") as UpgradeListener[];
  // One listener: the adapter answers a refused WebSocket upgrade only when it is the only one.
  server.removeAllListeners("upgrade");
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Uint8Array) => {
    if (asksForWebSocket(request)) {
      for (const listener of taken) listener.call(server, request, socket, head);
      return;
    }
    if (socket.destroyed) return;
    // Node 20 stops at the head: the body, and what follows it, are in `head` and on the socket.
    // A Node that read part of the body into the request first (22.0 to 22.20: later ones and
    // 24.9 on serve such a request themselves) cannot give it back as it came: the connection
    // closes.
    if (!request.complete || request.readableLength > 0) return void socket.destroy();
    // Past a bound Node drops headers without a word: given back without them (a
    // `Content-Length` among them), the body would be read as a request of its own. The bound
    // is on names and values (`maxHeadersCount` of each, 1,000 headers unless set), and Node
    // takes them in batches: once it has dropped some, it holds at least that many.
    const most = typeof server.maxHeadersCount === "number" ? server.maxHeadersCount * 2 : 2000;
    if (most > 0 && request.rawHeaders.length >= most) return void socket.destroy();
    socket.unshift(Buffer.concat([headOf(request), head]));
    server.emit("connection", socket);
  });

  // The request's head as it came, but for the `upgrade` token of `Connection`. Node's parser
  // took the head: its values hold no line breaks.
  function headOf(request: IncomingMessage): Uint8Array {
    let text = `${request.method} ${request.url} HTTP/${request.httpVersion}\r\n`;
    const raw = request.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      let value = raw[i + 1];
      if (name === "connection") {
        value = value.split(",").map((token) => token.trim())
          .filter((token) => token !== "" && token.toLowerCase() !== "upgrade").join(", ");
        if (value === "") continue;
      }
      text += `${raw[i]}: ${value}\r\n`;
    }
    return Buffer.from(`${text}\r\n`, "latin1");
  }
}
