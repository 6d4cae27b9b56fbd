// The streaming controllers on real workerd, which serves `app.fetch` itself: the same WebSocket
// and event stream that `listen(app)` serves (tests/runtime/websocket_sockets_test.ts), through
// workerd's own sockets.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { REFUSAL, TOKEN } from "../fixtures/streaming_controllers.ts";
import { Opcode, openAccepted, openSocket, type WsClient } from "../runtime/ws_raw_client.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/streaming_worker.ts", import.meta.url));
const AUTH = { [TOKEN.name]: TOKEN.value };

describe("WebSockets and event streams on workerd", () => {
  let worker: ServedWorker;
  let port: number;

  before(async () => {
    worker = await serveWorker(FIXTURE, "streaming_worker");
    port = Number(new URL(worker.origin).port);
  });

  after(() => worker?.close());

  const open = (room: string, headers: Record<string, string> = {}): Promise<WsClient> =>
    openAccepted(port, `/live/echo/${room}`, { ...AUTH, ...headers });

  it("echoes text and binary on a socket, its open told first", async () => {
    const ws = await open("tea");
    assert.deepEqual(await ws.next(), { type: "text", data: "joined tea" });
    await ws.sendText("grüne 🍵");
    assert.deepEqual(await ws.next(), { type: "text", data: "tea: grüne 🍵" });
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    await ws.sendBinary(bytes);
    assert.deepEqual(await ws.next(), { type: "binary", data: bytes });
    await ws.close(1000, "bye");
    assert.equal((await ws.closed).code, 1000);
  });

  it("lets the controller's guard refuse the upgrade with its own status and body", async () => {
    const answer = await openSocket(port, "/live/echo/tea");
    assert.equal(answer.refused, true);
    if (!answer.refused) return;
    assert.equal(answer.status, REFUSAL.status);
    assert.deepEqual(JSON.parse(answer.body), REFUSAL.body);
  });

  it("refuses a browser from an unlisted origin with 403, and takes a listed one", async () => {
    const refused = await openSocket(port, "/live/echo/tea", {
      ...AUTH,
      Origin: "https://evil.example",
    });
    assert.equal(refused.refused && refused.status, 403);
    const ws = await open("origins", { Origin: "https://app.example" });
    assert.deepEqual(await ws.next(), { type: "text", data: "joined origins" });
    ws.destroy();
  });

  // workerd drops an empty header before the app sees it: there an empty Origin is none.
  it("takes its own host named with a default port", async () => {
    const ws = await open("ports", { Host: "app.test:443", Origin: "https://app.test" });
    assert.deepEqual(await ws.next(), { type: "text", data: "joined ports" });
    ws.destroy();
  });

  it("answers no subprotocol, whichever a client offers", async () => {
    const ws = await open("protocols", { "Sec-WebSocket-Protocol": "chat, superchat" });
    assert.equal(ws.headers["sec-websocket-protocol"], undefined, ws.head);
    ws.destroy();
  });

  it("closes with 1009 a message over server.websocket.max-message-size", async () => {
    const ws = await open("big");
    await ws.next();
    await ws.sendText("x".repeat(1025));
    assert.equal((await ws.closed).code, 1009);
  });

  it("assembles a fragmented message", async () => {
    const ws = await open("frag");
    await ws.next();
    await ws.sendFrame({ fin: false, opcode: Opcode.text, payload: "frag" });
    await ws.sendFrame({ fin: false, opcode: Opcode.continuation, payload: "men" });
    await ws.sendFrame({ fin: true, opcode: Opcode.continuation, payload: "ted" });
    assert.deepEqual(await ws.next(), { type: "text", data: "frag: fragmented" });
    ws.destroy();
  });

  it("hands on a text message that is not UTF-8 with U+FFFD in place of its bad bytes", async () => {
    // workerd decodes the message before any code of the worker sees it: unlike Deno, Bun and Node,
    // which end such a socket, it replaces what is not UTF-8, as docs/streaming.md says.
    const ws = await open("utf8");
    await ws.next();
    await ws.sendFrame({
      fin: true,
      opcode: Opcode.text,
      payload: Uint8Array.of(0x61, 0xc3, 0x28),
    });
    assert.deepEqual(await ws.next(), { type: "text", data: "utf8: a\ufffd(" });
    ws.destroy();
  });

  it("streams the events of the same controller behind its guard", async () => {
    const res = await fetch(`${worker.origin}/live/ticks`, {
      headers: { ...AUTH, "Last-Event-ID": "7" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const frame = (n: number) => `event: tick\nid: ${n}\ndata: line ${n}\ndata: second line\n\n`;
    assert.equal(await res.text(), frame(8) + frame(9) + frame(10));
    assert.equal((await fetch(`${worker.origin}/live/ticks`)).status, REFUSAL.status);
  });
});
