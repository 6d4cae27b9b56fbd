// One open socket of a `@WebSocketMapping`, between the runtime's adapter and the app's handlers:
// the same socket object at every event (Bun's adapter makes one per event), a message over the
// size bound closed with 1009 where the runtime does not bound it itself (Deno, workerd), and a
// handler that throws or rejects logged and its socket closed with 1011, as Spring's handler
// decorator does, rather than an uncaught error that ends the process (Deno) or is dropped.
import { type SendOptions, WSContext, type WSEvents, type WSMessageReceive } from "hono/ws";
import { utf8Length } from "../http/body_length.ts";
import { type CallContext, callContext } from "./call_context.ts";

/** The close codes Thaw sends (RFC 6455, 7.4.1). */
export const CLOSE = {
  /** The server goes down. */
  goingAway: 1001,
  /** The client reads too slowly: more than `server.websocket.max-buffered` waits to be sent. */
  policyViolation: 1008,
  /** A message larger than `server.websocket.max-message-size`. */
  tooBig: 1009,
  /** A handler failed. */
  serverError: 1011,
} as const;

/** What a session reports to, and is bounded by: one for all the sockets of a route. */
export interface SessionHost {
  /** The largest message taken, in bytes. */
  readonly maxMessageSize: number;
  /** The most bytes that may wait to be sent; past it the socket is closed with 1008. */
  readonly maxBuffered: number;
  /** Takes what a handler threw, with the event it was handling. */
  readonly failed: (event: string, error: unknown) => void;
  /** The socket passed `maxBuffered` with `buffered` bytes waiting: it is being closed. */
  readonly overflowed: (buffered: number) => void;
  /** The socket opened: from now on it is one of those a shutdown closes. */
  readonly opened: (session: Session) => void;
  /** The socket closed. */
  readonly closed: (session: Session) => void;
}

/** One open socket, as the app sees it, with what it carried. */
export interface Session {
  /** What the handlers are given: the same object at every event. */
  readonly socket: WSContext;
  /** The URL its upgrade asked for. */
  readonly url: string;
  /** Messages received and sent, and their bytes. */
  readonly received: { messages: number; bytes: number };
  readonly sent: { messages: number; bytes: number };
  /** Closes it with `code` and `reason`; a socket already closing is left to end. */
  end(code: number, reason: string): void;
  /** Ends it now, without the closing handshake, where the runtime can; else `end`. */
  terminate(): void;
}

function sizeOf(data: WSMessageReceive | Uint8Array): number {
  if (typeof data === "string") return utf8Length(data);
  if (data instanceof Blob) return data.size;
  return data.byteLength;
}

interface RawSocket {
  readonly readyState?: number;
  binaryType?: string;
  terminate?(): void;
  /** Deno's and Node's (`ws`). */
  readonly bufferedAmount?: number;
  /** Bun's. */
  getBufferedAmount?(): number;
}

// What waits to be sent on the socket, in bytes: written by the app and not yet taken by the
// kernel. workerd tells none: 0.
function bufferedOf(raw: RawSocket | undefined): number {
  if (typeof raw?.getBufferedAmount === "function") return raw.getBufferedAmount();
  return typeof raw?.bufferedAmount === "number" ? raw.bufferedAmount : 0;
}

/**
 * The events the adapter drives for one socket's `handlers`, through one {@linkcode Session} made
 * at its first event.
 */
export function sessionEvents(handlers: WSEvents, host: SessionHost, url: string): WSEvents {
  return new SocketSession(handlers, host, url);
}

// One socket: the events the adapter calls (as methods: `this` is the session), and the side of
// Hono's socket context the handlers use. A class, its methods shared: a server holds thousands.
class SocketSession implements WSEvents, Session {
  readonly received = { messages: 0, bytes: 0 };
  readonly sent = { messages: 0, bytes: 0 };
  readonly url: string;
  readonly #handlers: WSEvents;
  readonly #host: SessionHost;
  // The adapter's context of the socket, and the app's, from the first event on.
  #ws: WSContext | undefined;
  #socket: WSContext | undefined;
  #closing = false;
  #closed = false;
  // The request's own (its caller), for the events the server calls once the handler returned.
  readonly #within: CallContext = callContext();

  constructor(handlers: WSEvents, host: SessionHost, url: string) {
    this.#handlers = handlers;
    this.#host = host;
    this.url = url;
  }

  get socket(): WSContext {
    if (this.#socket === undefined) throw new Error("WebSocket session: no event has come yet");
    return this.#socket;
  }

  // What Hono's context reads of its side once, as it is made.
  get raw(): unknown {
    return this.#ws?.raw;
  }

  get protocol(): string | null {
    return this.#ws?.protocol ?? null;
  }

  // Read from the socket itself: Bun's adapter gives a state read once, at the event.
  get readyState(): 0 | 1 | 2 | 3 {
    const raw = this.#ws?.raw as RawSocket | undefined;
    return (raw?.readyState ?? this.#ws?.readyState ?? 3) as 0 | 1 | 2 | 3;
  }

  onOpen(_evt: Event, ws: WSContext): void {
    this.#bind(ws);
    this.#host.opened(this);
    // Binary messages arrive as ArrayBuffers everywhere (Deno's socket starts with Blobs).
    const raw = ws.raw as RawSocket | undefined;
    if (raw !== undefined && raw.binaryType === "blob") raw.binaryType = "arraybuffer";
    const onOpen = this.#handlers.onOpen;
    if (onOpen !== undefined) this.#run("onOpen", () => onOpen(new Event("open"), this.socket));
  }

  onMessage(evt: MessageEvent<WSMessageReceive>, ws: WSContext): void {
    this.#bind(ws);
    const size = sizeOf(evt.data);
    if (size > this.#host.maxMessageSize) {
      this.end(CLOSE.tooBig, "Message too big");
      return;
    }
    this.received.messages++;
    this.received.bytes += size;
    const onMessage = this.#handlers.onMessage;
    if (onMessage !== undefined) this.#run("onMessage", () => onMessage(evt, this.socket));
  }

  onClose(evt: CloseEvent, ws: WSContext): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#bind(ws);
    this.#host.closed(this);
    const onClose = this.#handlers.onClose;
    if (onClose !== undefined) this.#run("onClose", () => onClose(abnormal(evt), this.socket));
  }

  onError(evt: Event, ws: WSContext): void {
    this.#bind(ws);
    const onError = this.#handlers.onError;
    if (onError !== undefined) this.#run("onError", () => onError(evt, this.socket));
  }

  /**
   * The handlers' `send`: counted, and dropped once the socket is closing (each runtime does
   * otherwise: Node's and Bun's drop it, an older Deno throws). A client that does not read what
   * is sent leaves it waiting in the server's memory: past `maxBuffered` the socket is closed with
   * 1008, and what waits is all it holds.
   */
  send(data: string | ArrayBuffer | Uint8Array<ArrayBuffer>, options: SendOptions): void {
    if (this.#closing) return;
    this.sent.messages++;
    this.sent.bytes += sizeOf(data);
    const ws = this.#ws;
    if (ws === undefined) throw new Error("WebSocket session: send before the socket opened");
    ws.send(data, options);
    const buffered = bufferedOf(ws.raw as RawSocket | undefined);
    if (buffered > this.#host.maxBuffered) {
      this.#host.overflowed(buffered);
      this.end(CLOSE.policyViolation, "Send buffer full");
      // Ended for the app now: the runtime's close event waits for the client to read what waits
      // and answer the close (Node's `ws` cuts it after 30 s, Deno never), and a client that
      // reads nothing would hold the session, its onClose and the open count until then.
      this.onClose(closeEvent(CLOSE.policyViolation, "Send buffer full"), ws);
    }
  }

  /** The handlers' `close`: what the protocol forbids is refused alike on every runtime. */
  close(code?: number, reason?: string): void {
    const problem = closeProblem(code, reason);
    if (problem !== undefined) throw new RangeError(`WebSocket close: ${problem}`);
    if (code === undefined) this.#close((ws) => ws.close());
    else this.end(code, reason ?? "");
  }

  end(code: number, reason: string): void {
    this.#close((ws) => ws.close(code, reason));
  }

  terminate(): void {
    const raw = this.#ws?.raw as RawSocket | undefined;
    if (typeof raw?.terminate === "function") raw.terminate();
    else this.end(CLOSE.goingAway, "Server shutting down");
  }

  #close(close: (ws: WSContext) => void): void {
    const ws = this.#ws;
    if (this.#closing || ws === undefined) return;
    this.#closing = true;
    try {
      close(ws);
    } catch {
      // Already closed under us: nothing to close.
    }
  }

  // The adapter's context, at the first event (Bun's makes one per event, on one socket).
  #bind(ws: WSContext): void {
    if (this.#ws !== undefined) return;
    this.#ws = ws;
    this.#socket = new WSContext(this);
    // The adapter's URL, shared: Hono's context would parse a copy of its own, a URL per socket.
    this.#socket.url = ws.url;
  }

  // What a handler threw or its promise rejected with: logged, and the socket closed with 1011.
  #run(event: string, call: () => unknown): void {
    const fail = (error: unknown) => {
      this.#host.failed(event, error);
      this.end(CLOSE.serverError, "Internal error");
    };
    try {
      const result = this.#within(call);
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  }
}

// A socket that ended without a closing handshake has code 1006 (RFC 6455, 7.1.5), where Deno
// says 0.
function abnormal(evt: CloseEvent): CloseEvent {
  if (evt.code !== 0 && evt.code !== undefined) return evt;
  return closeEvent(1006, evt.reason ?? "");
}

/**
 * A close event with `code` and `reason`, not clean: made from an `Event`, as Node 20 has no
 * `CloseEvent` (Hono's Node adapter makes its own the same way).
 */
export function closeEvent(code: number, reason: string): CloseEvent {
  const event = new Event("close");
  Object.defineProperties(event, {
    code: { value: code },
    reason: { value: reason },
    wasClean: { value: false },
  });
  return event as CloseEvent;
}

// What a handler may close with: the codes RFC 6455 (7.4.1) and its registry let an endpoint send,
// and a reason that fits a control frame's 125 bytes with its code. The runtimes disagree on the
// rest (Deno and Bun send a forbidden code as it is, Node's `ws` and Deno throw, Bun cuts a long
// reason): refused here alike, as a browser's `close` does, rather than a socket silently left
// open or a peer told what the protocol forbids.
function closeProblem(code: number | undefined, reason: string | undefined): string | undefined {
  if (code === undefined) {
    return reason === undefined || reason === "" ? undefined : "a reason needs a code";
  }
  const sendable = Number.isInteger(code) &&
    (code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999);
  if (!sendable) {
    return `${code} is no close code an endpoint may send (1000-1003, 1007-1014, 3000-4999)`;
  }
  const bytes = utf8Length(reason ?? "");
  return bytes > 123
    ? `a close reason is at most 123 bytes of UTF-8, this one has ${bytes}`
    : undefined;
}
