// `@WebSocketMapping` and `@SseMapping` over real sockets to `listen(app)`, on whichever runtime
// runs the suite: the same controller as on workerd (tests/edge/workerd_websocket_test.ts), its
// guard, the origin check, the message bound, the protocol's failures, what an operator sees of
// the open ones (the access log, the gauge), and a shutdown with sockets and streams open (in a
// process of its own, ended by SIGTERM).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { bootstrap, RestController, type WebSocketHandlers, WebSocketMapping } from "../../mod.ts";
import { logging } from "../../logging.ts";
import { actuator } from "../../actuator.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME, scriptCommand } from "../runtime.ts";
import { watchChild } from "../child_output.ts";
import { Live, REFUSAL, seen, TOKEN } from "../fixtures/streaming_controllers.ts";
import { Opcode, openAccepted, openSocket, type WsClient } from "./ws_raw_client.ts";

const AUTH = { [TOKEN.name]: TOKEN.value };
const MAX = 1024;
const config = {
  server: { websocket: { "max-message-size": MAX, "allowed-origins": ["https://app.example"] } },
  logging: { access: { enabled: true } },
};

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe(`@WebSocketMapping over sockets on ${RUNTIME}`, () => {
  let server: Server;
  const logger = memoryLogger();

  before(async () => {
    const app = await bootstrap({ controllers: [Live], logger, config, logging: logging() });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
  });
  after(() => server.close());

  const open = (room: string, headers: Record<string, string> = {}): Promise<WsClient> =>
    openAccepted(server.port, `/live/echo/${room}`, { ...AUTH, ...headers });

  it("echoes text and binary, with the path variable bound and one socket object throughout", async () => {
    const ws = await open("tea");
    assert.deepEqual(await ws.next(), { type: "text", data: "joined tea" });
    await ws.sendText("grüne 🍵");
    assert.deepEqual(await ws.next(), { type: "text", data: "tea: grüne 🍵" });
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    await ws.sendBinary(bytes);
    assert.deepEqual(await ws.next(), { type: "binary", data: bytes });
    await ws.close(1000, "bye");
    assert.equal((await ws.closed).code, 1000);
    await until(() => seen.closed.some((c) => c.room === "tea"));
    assert.deepEqual(seen.closed.find((c) => c.room === "tea"), { room: "tea", code: 1000 });
    assert.equal(seen.sameSocket, true);
  });

  it("writes one access-log line at a socket's end, with what it carried", async () => {
    const ws = await open("logged");
    await ws.next();
    await ws.sendText("ab");
    await ws.next();
    await ws.close(1000);
    await ws.closed;
    const streamLine = () =>
      logger.lines.map((l) => String(l[0])).filter((l) => l.includes('"stream":"websocket"'))
        .map((l) => JSON.parse(l)).find((l) => l.path === "/live/echo/logged");
    await until(() => streamLine() !== undefined);
    const line = streamLine();
    assert.deepEqual(
      [line.route, line.status, line.sent, line.received, line.bytes_received, line.bytes],
      ["/live/echo/{room}", 101, 2, 1, 2, "joined logged".length + "logged: ab".length],
    );
  });

  it("writes one access-log line at an event stream's end, with what it sent", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/live/ticks`, { headers: AUTH });
    const text = await res.text();
    const streamLine = () =>
      logger.lines.map((l) => String(l[0])).filter((l) => l.includes('"stream":"sse"'))
        .map((l) => JSON.parse(l)).find((l) => l.route === "/live/ticks");
    await until(() => streamLine() !== undefined);
    const line = streamLine();
    assert.deepEqual(
      [line.path, line.status, line.sent, line.bytes, line.received],
      ["/live/ticks", 200, 3, new TextEncoder().encode(text).byteLength, undefined],
    );
  });

  it("logs the upgrade's own request line with the 101 it was answered, on every runtime", async () => {
    const ws = await open("head");
    await ws.next();
    const headLine = () =>
      logger.lines.map((l) => String(l[0])).filter((l) => l.includes('"path":"/live/echo/head"'))
        .map((l) => JSON.parse(l)).find((l) => l.stream === undefined);
    await until(() => headLine() !== undefined);
    // Bun's and Node's adapters answer the app with a 200 once the server took the upgrade.
    assert.equal(headLine().status, 101);
    ws.destroy();
  });

  it("lets the controller's guard refuse the upgrade with its own status: no socket opens", async () => {
    const before = seen.upgrades;
    const answer = await openSocket(server.port, "/live/echo/tea");
    assert.equal(answer.refused, true);
    if (!answer.refused) return;
    assert.equal(answer.status, REFUSAL.status);
    // Node's adapter writes a refused upgrade's status and headers on the raw connection, no body.
    if (RUNTIME !== "node") assert.deepEqual(JSON.parse(answer.body), REFUSAL.body);
    assert.equal(seen.upgrades, before);
  });

  it("refuses a browser from an unlisted origin with 403, and takes its own host, a listed one and none", async () => {
    const before = seen.upgrades;
    for (const origin of ["https://evil.example", "null", "https://app.example.evil"]) {
      const answer = await openSocket(server.port, "/live/echo/tea", { ...AUTH, Origin: origin });
      assert.equal(answer.refused && answer.status, 403, origin);
    }
    assert.equal(seen.upgrades, before);
    for (const origin of [`http://127.0.0.1:${server.port}`, "https://app.example", undefined]) {
      const ws = await open("origins", origin === undefined ? {} : { Origin: origin });
      assert.deepEqual(await ws.next(), { type: "text", data: "joined origins" });
      ws.destroy();
    }
  });

  it("judges an origin by the Host header: not by an absolute-form target, nor a default host", async () => {
    const before = seen.upgrades;
    const evil = "https://evil.example";
    const absolute = await openSocket(server.port, "http://evil.example/live/echo/tea", {
      ...AUTH,
      Origin: evil,
    });
    assert.equal(absolute.refused && absolute.status, 403);
    // No Host: Node's adapter takes "localhost"; Bun refuses such a request itself.
    const hostless = await openSocket(server.port, "/live/echo/tea", {
      ...AUTH,
      Host: null,
      Origin: "http://localhost",
    });
    assert.ok(hostless.refused && [400, 403].includes(hostless.status), String(hostless.refused));
    assert.equal(seen.upgrades, before);
  });

  it("refuses an empty Origin with 403, as any origin no browser sends", async () => {
    const before = seen.upgrades;
    for (const origin of ["", " "]) {
      const answer = await openSocket(server.port, "/live/echo/tea", { ...AUTH, Origin: origin });
      assert.equal(answer.refused && answer.status, 403, JSON.stringify(origin));
    }
    assert.equal(seen.upgrades, before);
  });

  it("takes its own host when Host or Origin names the page's default port, not the other scheme's", async () => {
    const pairs = [
      ["app.test:443", "https://app.test"],
      ["app.test:80", "http://app.test"],
      ["app.test", "https://app.test"],
      ["APP.test:443", "https://app.test"],
    ];
    for (const [host, origin] of pairs) {
      const answer = await openSocket(server.port, "/live/echo/ports", {
        ...AUTH,
        Host: host,
        Origin: origin,
      });
      assert.equal(answer.refused, false, `${host} ${origin}: ${answer.refused && answer.head}`);
      if (!answer.refused) answer.destroy();
    }
    const before = seen.upgrades;
    // One scheme's default port is no other's: each of these is a page on another port.
    const others = [
      ["app.test:8443", "https://app.test"],
      ["app.test", "https://app.test:8443"],
      ["app.test:443", "http://app.test"],
      ["app.test", "http://app.test:443"],
      ["app.test:80", "https://app.test"],
    ];
    for (const [host, origin] of others) {
      const answer = await openSocket(server.port, "/live/echo/tea", {
        ...AUTH,
        Host: host,
        Origin: origin,
      });
      assert.equal(answer.refused && answer.status, 403, `${host} ${origin}`);
    }
    assert.equal(seen.upgrades, before);
  });

  it("answers no subprotocol, whichever a client offers: the app declares none", async () => {
    const ws = await open("protocols", { "Sec-WebSocket-Protocol": "chat, superchat" });
    assert.equal(ws.headers["sec-websocket-protocol"], undefined, ws.head);
    assert.deepEqual(await ws.next(), { type: "text", data: "joined protocols" });
    ws.destroy();
  });

  it(`takes a message of ${MAX} bytes and closes with 1009 on a larger one`, async () => {
    const ws = await open("big");
    await ws.next();
    await ws.sendText("é".repeat(MAX / 2 - 3));
    assert.equal((await ws.next()).data, `big: ${"é".repeat(MAX / 2 - 3)}`);
    await ws.sendText("é".repeat(MAX / 2) + "x");
    assert.equal((await ws.closed).code, 1009);
  });

  it("assembles a fragmented message, a ping between its fragments", async () => {
    const ws = await open("frag");
    await ws.next();
    await ws.sendFrame({ fin: false, opcode: Opcode.text, payload: "frag" });
    await ws.ping("between");
    await ws.sendFrame({ fin: false, opcode: Opcode.continuation, payload: "men" });
    await ws.sendFrame({ fin: true, opcode: Opcode.continuation, payload: "ted" });
    assert.deepEqual(await ws.next(), { type: "text", data: "frag: fragmented" });
    ws.destroy();
  });

  it("ends a socket whose text message is not UTF-8, the handler told of no message", async () => {
    const ws = await open("utf8");
    await ws.next();
    await ws.sendFrame({
      fin: true,
      opcode: Opcode.text,
      payload: Uint8Array.of(0x61, 0xc3, 0x28),
    });
    const closed = await ws.closed;
    // Bun and Node close with 1007, as RFC 6455 8.1 asks; Deno drops the connection unannounced.
    if (RUNTIME === "deno") assert.deepEqual([closed.code, closed.clean], [undefined, false]);
    else assert.equal(closed.code, 1007);
    await until(() => seen.closed.some((c) => c.room === "utf8"));
    // The runtime ended it for a fault of the protocol: to the handler, an end with no handshake.
    assert.equal(seen.closed.find((c) => c.room === "utf8")?.code, 1006);
    assert.equal(seen.messages.filter((m) => m.room === "utf8").length, 0);
  });

  it("logs a handler that throws and closes its socket with 1011", async () => {
    const ws = await open("boom");
    await ws.next();
    await ws.sendText("boom");
    assert.equal((await ws.closed).code, 1011);
    const line = logger.lines.find((l) => String(l[0]).includes("onMessage failed"));
    assert.ok(line, "the failure is logged");
    assert.equal(
      line[0],
      "[thaw] Live.echo (WebSocket /live/echo/{room}): onMessage failed, closed with 1011:",
    );
    assert.equal((line[1] as Error).message, "the handler failed on purpose");
  });

  it("refuses a close code or reason RFC 6455 forbids with 1011, logged, neither sent nor dropped", async () => {
    const long = "é".repeat(62);
    for (const [code, reason] of [[5000, "x"], [1005, ""], [1015, ""], [999, ""], [1000, long]]) {
      const ws = await open("badclose");
      await ws.next();
      await ws.sendText(`close ${code} ${reason}`);
      // The raw client rejects a close frame with a code an endpoint may not send.
      const closed = await ws.closed;
      assert.deepEqual([closed.code, closed.reason], [1011, "Internal error"], `${code}`);
    }
    const failures = logger.lines.filter((l) =>
      String(l[0]).includes("onMessage failed") && l[1] instanceof RangeError
    );
    assert.equal(failures.length, 5);
    assert.match((failures[0][1] as Error).message, /5000/);
  });

  it("answers 400 to a handshake the protocol does not allow, before the method runs", async () => {
    const before = seen.upgrades;
    for (
      const headers of [
        { "Sec-WebSocket-Key": null },
        { "Sec-WebSocket-Key": "short" },
        { "Sec-WebSocket-Version": "8" },
        { "Sec-WebSocket-Version": null },
        { Connection: null },
        { Connection: "keep-alive" },
      ]
    ) {
      const answer = await openSocket(server.port, "/live/echo/tea", { ...AUTH, ...headers });
      assert.equal(answer.refused && answer.status, 400, JSON.stringify(headers));
    }
    assert.equal(seen.upgrades, before);
  });

  it("answers 400 to a request that is no upgrade", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/live/echo/tea`, { headers: AUTH });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error, /Upgrade: websocket/);
  });
});

describe(`open sockets and streams at /actuator/prometheus, on ${RUNTIME}`, () => {
  it("counts the open sockets and streams of a route, and 0 once they ended", async () => {
    const app = await bootstrap({
      controllers: [Live],
      actuator: actuator(),
      config: { management: { endpoints: { web: { exposure: { include: "prometheus" } } } } },
    });
    const server = await listen(app, {
      port: 0,
      hostname: "127.0.0.1",
      signals: false,
      quiet: true,
    });
    try {
      const gauge = async (kind = "websocket", route = "/live/echo/{room}") => {
        const text = await (await fetch(`http://127.0.0.1:${server.port}/actuator/prometheus`))
          .text();
        const line = text.split("\n").find((l) =>
          l.startsWith("thaw_server_open_streams{") && l.includes(`http_route="${route}"`) &&
          l.includes(`thaw_stream_kind="${kind}"`)
        );
        assert.ok(line, `no gauge of ${kind} ${route} in:\n${text}`);
        return Number(line.split(" ").at(-1));
      };
      const sockets = await Promise.all(
        [1, 2].map(() => openAccepted(server.port, "/live/echo/g", AUTH)),
      );
      await Promise.all(sockets.map((ws) => ws.next()));
      assert.equal(await gauge(), 2);
      const stream = await openStream(server.port);
      assert.equal(await gauge("sse", "/live/forever"), 1);
      stream.socket.destroy();
      await stream.ended;
      let streams = await gauge("sse", "/live/forever");
      while (streams !== 0) streams = await gauge("sse", "/live/forever");
      for (const ws of sockets) await ws.close(1000);
      await Promise.all(sockets.map((ws) => ws.closed));
      // The server's side of the close may come just after the client's: wait for the state.
      let open = await gauge();
      while (open !== 0) open = await gauge();
      assert.equal(open, 0);
    } finally {
      await server.close();
    }
  });
});

/** A raw connection that asks for an event stream and resolves once its first event is in. */
function openStream(port: number): Promise<{ socket: Socket; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const ended = new Promise<void>((done) => socket.once("close", () => done()));
    let text = "";
    const onData = (chunk: Uint8Array) => {
      text += new TextDecoder().decode(chunk);
      if (text.includes("data: open")) {
        socket.off("data", onData);
        socket.resume();
        resolve({ socket, ended });
      }
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(
      `GET /live/forever HTTP/1.1\r\nHost: 127.0.0.1\r\n${TOKEN.name}: ${TOKEN.value}\r\n\r\n`,
    );
  });
}

// A socket whose handler sends, on "go", up to FLOOD messages of CHUNK bytes in one go, as long
// as the socket stays open: what a producer does to a client that never reads.
const CHUNK = 64 * 1024;
const FLOOD = 512;
const MAX_BUFFERED = 1024 * 1024;
const flood = { sent: 0, closes: [] as number[] };

@RestController()
class Flood {
  @WebSocketMapping("/flood")
  open(): WebSocketHandlers {
    const chunk = "x".repeat(CHUNK);
    return {
      onMessage: (_event, socket) => {
        while (flood.sent < FLOOD && socket.readyState === 1) {
          socket.send(chunk);
          flood.sent++;
        }
      },
      onClose: (event) => void flood.closes.push(event.code),
    };
  }
}

describe(`server.websocket.max-buffered, on ${RUNTIME}`, () => {
  let server: Server;
  const logger = memoryLogger();

  before(async () => {
    const app = await bootstrap({
      controllers: [Flood],
      logger,
      config: { server: { websocket: { "max-buffered": MAX_BUFFERED } } },
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
  });
  after(() => server.close());

  it("closes with 1008, logged, a socket whose client reads nothing past the bound", async () => {
    const ws = await openAccepted(server.port, "/flood");
    ws.pause();
    await ws.sendText("go");
    // The server stops taking sends once the bound is passed: far from all FLOOD of them.
    const lines = () => logger.lines.map(([line]) => String(line));
    const logged = () => lines().some((line) => line.includes("max-buffered"));
    await until(() => logged() || flood.sent === FLOOD);
    assert.ok(flood.sent < FLOOD, `all ${flood.sent} messages of ${CHUNK} B were taken`);
    assert.match(
      lines().find((line) => line.includes("max-buffered"))!,
      /\[thaw\] Flood\.open \(WebSocket \/flood\): .* closed with 1008/,
    );
    ws.resume();
    for (;;) {
      const message = await ws.next().catch(() => undefined);
      if (message === undefined) break;
    }
    assert.equal((await ws.closed).code, 1008);
  });

  // Deno kept what waited, and ran no onClose, for as long as such a client stayed connected.
  it("runs onClose at the 1008 while the client still reads nothing, and the client sees 1008", async () => {
    flood.sent = 0;
    flood.closes.length = 0;
    const ws = await openAccepted(server.port, "/flood");
    ws.pause();
    await ws.sendText("go");
    const closes = () => flood.closes;
    await until(() => closes().length > 0);
    assert.deepEqual(flood.closes, [1008]);
    ws.resume();
    for (;;) {
      const message = await ws.next().catch(() => undefined);
      if (message === undefined) break;
    }
    assert.equal((await ws.closed).code, 1008);
  });
});

const APP = fileURLToPath(new URL("../fixtures/streaming_app.ts", import.meta.url));

describe(`a shutdown with sockets and streams open, on ${RUNTIME}`, () => {
  it("closes 100 sockets with 1001, ends 100 streams, and exits 0 on SIGTERM", async () => {
    const service = watchChild(...scriptCommand(APP, []));
    try {
      const port = Number((await service.line(/^listening \d+$/)).split(" ")[1]);
      const sockets = await Promise.all(
        Array.from({ length: 100 }, () => openAccepted(port, "/live/echo/all", AUTH)),
      );
      await Promise.all(sockets.map((ws) => ws.next()));
      const streams = await Promise.all(Array.from({ length: 100 }, () => openStream(port)));
      // By pid: Deno's `ChildProcess.kill` reports the child as ended by the signal it sent.
      process.kill(service.child.pid!, "SIGTERM");
      const codes = await Promise.all(sockets.map(async (ws) => (await ws.closed).code));
      assert.deepEqual(new Set(codes), new Set([1001]));
      await Promise.all(streams.map((s) => s.ended));
      // 0: nothing was cut at server.shutdown-timeout, and the app closed cleanly.
      assert.equal(await service.exited, 0, service.stderr());
      assert.equal(service.stderr(), "");
    } finally {
      service.child.kill("SIGKILL");
    }
  });
});
