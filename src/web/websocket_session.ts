// One open socket of a `@WebSocketMapping`, between the runtime's adapter and the app's handlers:
// the same socket object at every event (Bun's adapter makes one per event), a message over the
// size bound closed with 1009 where the runtime does not bound it itself (Deno, workerd), and a
// handler that throws or rejects logged and its socket closed with 1011, as Spring's handler
// decorator does, rather than an uncaught error that ends the process (Deno) or is dropped.
import { WSContext, type WSEvents, type WSMessageReceive } from "hono/ws";
import { utf8Length } from "../http/body_length.ts";

/** The close codes Thaw sends (RFC 6455, 7.4.1). */
export const CLOSE = {
  /** The server goes down. */
  goingAway: 1001,
  /** A message larger than `server.websocket.max-message-size`. */
  tooBig: 1009,
  /** A handler failed. */
  serverError: 1011,
} as const;

/** What a session reports to, and is bounded by. */
export interface SessionHost {
  /** The largest message taken, in bytes. */
  readonly maxMessageSize: number;
  /** Takes what a handler threw, with the event it was handling. */
  readonly failed: (event: string, error: unknown) => void;
  /** The socket opened: from now on it is one of those a shutdown closes. */
  readonly opened: (session: Session) => void;
  /** The socket closed. */
  readonly closed: (session: Session) => void;
}

/** One open socket, as the app sees it, with what it carried. */
export interface Session {
  /** What the handlers are given: the same object at every event. */
  readonly socket: WSContext;
  /** Messages received and sent, and their bytes. */
  readonly received: { messages: number; bytes: number };
  readonly sent: { messages: number; bytes: number };
  /** When (`performance.now()`) it opened. */
  readonly since: number;
  /** Closes it with `code` and `reason`; a socket already closing is left to end. */
  close(code: number, reason: string): void;
  /** Ends it now, without the closing handshake, where the runtime can; else `close`. */
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
}

/**
 * The events the adapter drives for one socket's `handlers`, through one {@linkcode Session} made
 * at its first event.
 */
export function sessionEvents(
  handlers: WSEvents,
  host: SessionHost,
): WSEvents {
  // One socket per upgrade, so one session: made at its first event.
  let made: Session | undefined;
  let closed = false;
  const sessionOf = (ws: WSContext): Session =>
    made ??= newSession(ws, (ws.raw ?? {}) as RawSocket);
  // What a handler threw or its promise rejected with: logged, and the socket closed with 1011.
  const run = (
    event: string,
    session: Session,
    call: () => unknown,
  ): void => {
    const fail = (error: unknown) => {
      host.failed(event, error);
      session.close(CLOSE.serverError, "Internal error");
    };
    try {
      const result = call();
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
  const open = (ws: WSContext): void => {
    const session = sessionOf(ws);
    host.opened(session);
    // Binary messages arrive as ArrayBuffers everywhere (Deno's socket starts with Blobs).
    const raw = ws.raw as RawSocket | undefined;
    if (raw !== undefined && raw.binaryType === "blob") raw.binaryType = "arraybuffer";
    const onOpen = handlers.onOpen;
    if (onOpen !== undefined) {
      run("onOpen", session, () => onOpen(new Event("open"), session.socket));
    }
  };
  return {
    onOpen: (_evt, ws) => open(ws),
    onMessage: (evt, ws) => {
      const session = sessionOf(ws);
      const size = sizeOf(evt.data);
      if (size > host.maxMessageSize) {
        session.close(CLOSE.tooBig, "Message too big");
        return;
      }
      session.received.messages++;
      session.received.bytes += size;
      const onMessage = handlers.onMessage;
      if (onMessage !== undefined) run("onMessage", session, () => onMessage(evt, session.socket));
    },
    onClose: (evt, ws) => {
      if (closed) return;
      closed = true;
      const session = sessionOf(ws);
      host.closed(session);
      const onClose = handlers.onClose;
      if (onClose !== undefined) {
        run("onClose", session, () => onClose(abnormal(evt), session.socket));
      }
    },
    onError: (evt, ws) => {
      const session = sessionOf(ws);
      const onError = handlers.onError;
      if (onError !== undefined) run("onError", session, () => onError(evt, session.socket));
    },
  };
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

function newSession(ws: WSContext, raw: RawSocket): Session {
  const received = { messages: 0, bytes: 0 };
  const sent = { messages: 0, bytes: 0 };
  let closing = false;
  const close = (code: number, reason: string) => {
    if (closing) return;
    closing = true;
    try {
      ws.close(code, reason);
    } catch {
      // Already closed under us: nothing to close.
    }
  };
  const socket = new WSContext({
    send: (data, options) => {
      sent.messages++;
      sent.bytes += sizeOf(data);
      ws.send(data, options);
    },
    close: (code, reason) => {
      const problem = closeProblem(code, reason);
      if (problem !== undefined) throw new RangeError(`WebSocket close: ${problem}`);
      if (code === undefined) {
        if (closing) return;
        closing = true;
        try {
          ws.close();
        } catch {
          // Already closed under us: nothing to close.
        }
      } else close(code, reason ?? "");
    },
    raw: ws.raw,
    // Read from the socket itself: Bun's adapter gives a state read once, at the event.
    get readyState() {
      return (raw.readyState ?? ws.readyState) as 0 | 1 | 2 | 3;
    },
    url: ws.url,
    protocol: ws.protocol,
  });
  return {
    socket,
    received,
    sent,
    since: performance.now(),
    close,
    terminate: () => {
      if (typeof raw.terminate === "function") raw.terminate();
      else close(CLOSE.goingAway, "Server shutting down");
    },
  };
}
