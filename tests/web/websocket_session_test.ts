// One socket between the adapter and the app's handlers, driven by hand: the size bound, a
// handler's failure, the close code of an abrupt end, and the one socket object the app sees.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { WSContext, type WSEvents, type WSMessageReceive } from "hono/ws";
import { closeEvent, type Session, sessionEvents } from "../../src/web/websocket_session.ts";
import { propertyOptions } from "../property.ts";

interface Fake {
  readonly raw: { readyState: number; closed?: [number, string] };
  readonly sent: unknown[];
  context(): WSContext;
}

// A socket as an adapter hands it: Bun's makes a new context at each event, on one raw socket.
function fakeSocket(): Fake {
  const raw: Fake["raw"] = { readyState: 1 };
  const sent: unknown[] = [];
  return {
    raw,
    sent,
    context: () =>
      new WSContext({
        send: (data) => void sent.push(data),
        close: (code = 1005, reason = "") => {
          raw.closed ??= [code, reason];
          raw.readyState = 3;
        },
        raw,
        readyState: 1,
      }),
  };
}

function host(maxMessageSize = 100, maxBuffered = 1000) {
  const failures: [string, unknown][] = [];
  const overflows: number[] = [];
  const open = new Set<Session>();
  const ended: Session[] = [];
  return {
    failures,
    overflows,
    open,
    ended,
    maxMessageSize,
    maxBuffered,
    failed: (event: string, error: unknown) => void failures.push([event, error]),
    overflowed: (buffered: number) => void overflows.push(buffered),
    opened: (session: Session) => void open.add(session),
    closed: (session: Session) => {
      open.delete(session);
      ended.push(session);
    },
  };
}

const message = (data: WSMessageReceive) => new MessageEvent<WSMessageReceive>("message", { data });

describe("sessionEvents", () => {
  it("closes with 1008 a socket past maxBuffered, told once, and drops what is sent after", () => {
    // Deno's and Node's sockets say `bufferedAmount`, Bun's `getBufferedAmount()`.
    for (const kind of ["bufferedAmount", "getBufferedAmount"] as const) {
      const socket = fakeSocket();
      let waiting = 0;
      const raw = socket.raw as Record<string, unknown>;
      if (kind === "bufferedAmount") {
        Object.defineProperty(raw, "bufferedAmount", { get: () => waiting });
      } else raw.getBufferedAmount = () => waiting;
      const h = host(100, 1000);
      const events = sessionEvents(
        {
          onOpen: (_e, ws) => {
            // Waiting as the runtime's send would leave it, read once the send returns.
            for (let i = 0; i < 20; i++) {
              waiting += 100;
              ws.send("x".repeat(100));
            }
          },
        },
        h,
        "ws://localhost/ws",
      );
      events.onOpen!(new Event("open"), socket.context());
      assert.deepEqual(h.overflows, [1100], kind);
      assert.deepEqual(socket.raw.closed, [1008, "Send buffer full"], kind);
      assert.equal(socket.sent.length, 11, kind);
      // Closed for the app at once, not when the client that reads nothing answers the close.
      assert.equal(h.open.size, 0, kind);
      const [session] = h.ended;
      assert.deepEqual(session.sent, { messages: 11, bytes: 1100 }, kind);
    }
  });

  it("gives the handlers one socket object at every event, and counts what it carried", () => {
    const socket = fakeSocket();
    const seen = new Set<WSContext>();
    const h = host();
    const events = sessionEvents(
      {
        onOpen: (_e, ws) => void seen.add(ws),
        onMessage: (e, ws) => {
          seen.add(ws);
          ws.send(`got ${e.data}`);
        },
        onClose: (_e, ws) => void seen.add(ws),
      },
      h,
      "ws://localhost/ws",
    );
    events.onOpen!(new Event("open"), socket.context());
    assert.equal(h.open.size, 1);
    const [session] = h.open;
    events.onMessage!(message("hé"), socket.context());
    events.onMessage!(message(new Uint8Array(5).buffer), socket.context());
    assert.equal(socket.sent.length, 2);
    assert.deepEqual(session.received, { messages: 2, bytes: 3 + 5 });
    const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
    assert.deepEqual(session.sent, {
      messages: 2,
      bytes: bytes("got hé") + bytes("got [object ArrayBuffer]"),
    });
    events.onClose!(closeEvent(1000, ""), socket.context());
    assert.equal(h.open.size, 0);
    assert.equal(seen.size, 1);
    // Read from the raw socket, not the state an adapter's context took once (Bun's does).
    socket.raw.readyState = 3;
    assert.equal([...seen][0].readyState, 3);
  });

  it("closes with 1009 a message over the bound, counted in UTF-8 bytes, before the handler sees it", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
        const size = new TextEncoder().encode(text).byteLength;
        const seen: unknown[] = [];
        const at = (max: number) => {
          const socket = fakeSocket();
          const events = sessionEvents(
            { onMessage: (e) => void seen.push(e.data) },
            host(max),
            "ws://localhost/ws",
          );
          events.onOpen!(new Event("open"), socket.context());
          events.onMessage!(message(text), socket.context());
          return socket.raw.closed;
        };
        assert.equal(at(Math.max(size, 1)), undefined);
        if (size > 0) assert.deepEqual(at(size - 1), [1009, "Message too big"]);
        return seen.length === 1;
      }),
      propertyOptions(),
    );
  });

  it("logs a handler that throws or rejects, and closes its socket with 1011", async () => {
    for (
      const fail of [
        () => {
          throw new Error("sync");
        },
        () => Promise.reject(new Error("async")),
      ]
    ) {
      const socket = fakeSocket();
      const h = host();
      const events = sessionEvents({ onMessage: fail } as WSEvents, h, "ws://localhost/ws");
      events.onOpen!(new Event("open"), socket.context());
      events.onMessage!(message("x"), socket.context());
      await Promise.resolve();
      assert.deepEqual(socket.raw.closed, [1011, "Internal error"]);
      assert.equal(h.failures[0][0], "onMessage");
      assert.ok(h.failures[0][1] instanceof Error);
    }
  });

  it("refuses a close code or reason RFC 6455 forbids: the handler fails, and the socket closes with 1011", () => {
    const forbidden: [number | undefined, string | undefined][] = [
      [999, undefined],
      [1004, ""],
      [1005, ""],
      [1006, ""],
      [1015, ""],
      [5000, ""],
      [1000.5, ""],
      [1000, "é".repeat(62)],
      [undefined, "a reason without a code"],
    ];
    for (const [code, reason] of forbidden) {
      const socket = fakeSocket();
      const h = host();
      const events = sessionEvents(
        { onMessage: (_e, ws) => ws.close(code, reason) },
        h,
        "ws://localhost/ws",
      );
      events.onOpen!(new Event("open"), socket.context());
      events.onMessage!(message("x"), socket.context());
      assert.deepEqual(socket.raw.closed, [1011, "Internal error"], `${code} ${reason}`);
      assert.ok(h.failures[0][1] instanceof RangeError);
    }
    const allowed: [number | undefined, string | undefined][] = [
      [1000, "é".repeat(61) + "x"],
      [4999, ""],
      [undefined, undefined],
    ];
    for (const [code, reason] of allowed) {
      const socket = fakeSocket();
      const events = sessionEvents(
        { onMessage: (_e, ws) => ws.close(code, reason) },
        host(),
        "ws://localhost/ws",
      );
      events.onOpen!(new Event("open"), socket.context());
      events.onMessage!(message("x"), socket.context());
      assert.deepEqual(socket.raw.closed, [code ?? 1005, reason ?? ""]);
    }
  });

  it("tells the handler 1006 for an end without a handshake, and a close only once", () => {
    const socket = fakeSocket();
    const codes: number[] = [];
    const events = sessionEvents(
      { onClose: (e) => void codes.push(e.code) },
      host(),
      "ws://localhost/ws",
    );
    events.onOpen!(new Event("open"), socket.context());
    events.onClose!(closeEvent(0, ""), socket.context());
    events.onClose!(closeEvent(1000, ""), socket.context());
    assert.deepEqual(codes, [1006]);
  });
});
