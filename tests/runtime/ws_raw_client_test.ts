// The raw WebSocket client against a real server, the `ws` package's, on whichever runtime runs
// the suite: what it sends arrives as RFC 6455 says, and what the server sends back (echoes,
// close codes, pings, refusals) is reported as it is.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { IncomingMessage } from "node:http";
import { createHash } from "node:crypto";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { WebSocketServer as UntypedServer } from "ws";
import { deferred } from "../deferred.ts";
import { freePort } from "../free_port.ts";
import { RUNTIME } from "../runtime.ts";
import { encodeFrame, Opcode, openAccepted, openSocket, type WsClient } from "./ws_raw_client.ts";

// `ws` ships no types (and @types/ws is not installed): the little of it these tests use.
interface ServerSocket {
  send(data: Uint8Array | string, options: { binary: boolean }): void;
  ping(data: string): void;
  close(code: number, reason: string): void;
  terminate(): void;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: "pong", listener: (data: Buffer) => void): void;
  on(event: "close", listener: (code: number, reason: Buffer) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
}
interface ServerOptions {
  host: string;
  port: number;
  maxPayload: number;
  verifyClient(
    info: { req: IncomingMessage },
    answer: (accept: boolean, status?: number) => void,
  ): void;
}
interface Server {
  readonly clients: Set<ServerSocket>;
  on(event: "connection", listener: (socket: ServerSocket, request: IncomingMessage) => void): void;
  on(event: "listening", listener: () => void): void;
  close(done: () => void): void;
}
const WebSocketServer = UntypedServer as new (options: ServerOptions) => Server;

// Past 70 KB, the largest echo, which needs a 64-bit length; under 200 KB, the over-size message.
const MAX_PAYLOAD = 100 * 1024;
const ALLOWED_ORIGIN = "https://allowed.example";

/** What the server saw of the latest connection: its end (the code our close frame echoed). */
let serverClosed = deferred<{ code: number; reason: string }>();
let serverPong = deferred<string>();

function onConnection(socket: ServerSocket, request: IncomingMessage): void {
  const closed = serverClosed;
  socket.on("error", () => {}); // an invalid frame: ws closes with its code, which the test reads
  socket.on("close", (code, reason) => closed.resolve({ code, reason: reason.toString() }));
  switch (request.url) {
    case "/bye":
      socket.close(1001, "going away");
      return;
    case "/ping": {
      const pong = serverPong;
      socket.on("pong", (data) => {
        pong.resolve(data.toString());
        socket.send(`ponged ${data}`, { binary: false });
      });
      socket.ping("hello");
      return;
    }
    default:
      socket.on("message", (data, binary) => socket.send(data, { binary }));
  }
}

describe(`the raw WebSocket client against ws on ${RUNTIME}`, () => {
  let server: Server;
  let silent: NetServer;
  let port: number;
  let silentPort: number;

  before(async () => {
    port = await freePort();
    server = new WebSocketServer({
      host: "127.0.0.1",
      port,
      maxPayload: MAX_PAYLOAD,
      verifyClient: ({ req }, answer) => {
        const guarded = req.url === "/guarded";
        answer(!guarded || req.headers.origin === ALLOWED_ORIGIN, 403);
      },
    });
    server.on("connection", onConnection);
    await new Promise<void>((resolve) => server.on("listening", resolve));
    // A server that hangs up on every connection without a word.
    silentPort = await freePort();
    silent = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => silent.listen(silentPort, "127.0.0.1", resolve));
  });

  after(async () => {
    for (const socket of server.clients) socket.terminate();
    await new Promise<void>((resolve) => server.close(resolve));
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  const open = async (path = "/echo"): Promise<WsClient> => {
    serverClosed = deferred();
    return await openAccepted(port, path);
  };

  for (const size of [5, 200, 70 * 1024]) {
    it(`echoes text and binary of ${size} B, then closes cleanly`, async () => {
      const client = await open();
      const text = "é".repeat(size / 2) + "x".repeat(size % 2);
      await client.sendText(text);
      assert.deepEqual(await client.next(), { type: "text", data: text });
      const bytes = new Uint8Array(size).map((_, i) => i * 7);
      await client.sendBinary(bytes);
      assert.deepEqual(await client.next(), { type: "binary", data: bytes });
      await client.close(1000, "done");
      assert.deepEqual(await client.closed, { code: 1000, reason: "done", clean: true });
      assert.deepEqual(await serverClosed.promise, { code: 1000, reason: "done" });
      assert.ok(client.received > 2 * size, `${client.received} bytes received`);
    });
  }

  it("sends a fragmented text message, with a ping between its fragments", async () => {
    const client = await open();
    await client.sendFrame({ fin: false, opcode: Opcode.text, payload: "frag" });
    const pong = client.ping("between");
    await client.sendFrame({ fin: false, opcode: Opcode.continuation, payload: "ment" });
    await client.sendFrame({ fin: true, opcode: Opcode.continuation, payload: "ed" });
    assert.equal(Buffer.from(await pong).toString(), "between");
    assert.deepEqual(await client.next(), { type: "text", data: "fragmented" });
    await client.close(1000);
    assert.equal((await client.closed).code, 1000);
  });

  it("gets 1007 for a text frame of invalid UTF-8", async () => {
    const client = await open();
    await client.sendFrame({
      fin: true,
      opcode: Opcode.text,
      payload: new Uint8Array([0xc3, 0x28]),
    });
    const closed = await client.closed;
    assert.deepEqual([closed.code, closed.clean], [1007, true]);
  });

  it("gets 1009 for a message over the server's maxPayload", async () => {
    const client = await open();
    await client.sendBinary(new Uint8Array(2 * MAX_PAYLOAD));
    const closed = await client.closed;
    assert.deepEqual([closed.code, closed.clean], [1009, true]);
  });

  it("sends extra headers: an Origin the server checks", async () => {
    const client = await openAccepted(port, "/guarded", { Origin: ALLOWED_ORIGIN });
    await client.sendText("in");
    assert.deepEqual(await client.next(), { type: "text", data: "in" });
    await client.close(1000);
    await client.closed;
  });

  it("reports a refused handshake with its status and body", async () => {
    const answer = await openSocket(port, "/guarded", { Origin: "https://evil.example" });
    assert.ok(answer.refused);
    assert.equal(answer.status, 403);
    assert.match(answer.head, /^HTTP\/1\.1 403 Forbidden/);
    assert.equal(answer.body, "Forbidden");
  });

  it("reports a server that closes without answering as status 0", async () => {
    assert.deepEqual(await openSocket(silentPort, "/"), {
      refused: true,
      status: 0,
      head: "",
      body: "",
    });
  });

  it("sees a close the server begins, with its code and reason, and echoes it", async () => {
    const client = await open("/bye");
    assert.deepEqual(await client.closed, { code: 1001, reason: "going away", clean: true });
    assert.equal((await serverClosed.promise).code, 1001);
    await assert.rejects(client.next(), /the connection has ended/);
  });

  it("answers the server's ping with a pong of the same payload", async () => {
    serverPong = deferred();
    const client = await open("/ping");
    assert.equal(await serverPong.promise, "hello");
    assert.deepEqual(await client.next(), { type: "text", data: "ponged hello" });
    assert.equal(client.pings, 1);
    await client.close(1000);
    await client.closed;
  });

  it("lets a client vanish: the server sees 1006", async () => {
    const client = await open();
    await client.sendText("here");
    await client.next();
    client.destroy();
    assert.deepEqual(await client.closed, { code: undefined, reason: "", clean: false });
    assert.equal((await serverClosed.promise).code, 1006);
  });
});

// The 101 a server would send for the handshake in `request`, its accept from `key` if given.
function switching(request: string, key?: string): string {
  const sent = key ?? /sec-websocket-key: *(\S+)/i.exec(request)?.[1] ?? "";
  const accept = createHash("sha1").update(sent + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
    .digest("base64");
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
    `Sec-WebSocket-Accept: ${accept}\r\n\r\n`;
}

// A server written by hand: it reads the handshake, then does what `answer` says.
async function byHand(answer: (socket: Socket, request: string) => void): Promise<NetServer> {
  const server = createServer((socket) => {
    let request = "";
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      request += chunk.toString("latin1");
      if (request.endsWith("\r\n\r\n")) answer(socket, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

const portOf = (server: NetServer) => (server.address() as { port: number }).port;
const serverFrame = (fin: boolean, opcode: number, payload: Uint8Array | string) =>
  encodeFrame({ fin, opcode, payload, masked: false });

describe(`the raw WebSocket client against a server written by hand on ${RUNTIME}`, () => {
  const servers: NetServer[] = [];
  const serve = async (answer: (socket: Socket, request: string) => void) => {
    const server = await byHand(answer);
    servers.push(server);
    return portOf(server);
  };
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("rejects a 101 whose Sec-WebSocket-Accept does not match its key", async () => {
    const port = await serve((socket, request) => {
      socket.end(switching(request, "another key"));
    });
    await assert.rejects(openSocket(port, "/"), /Sec-WebSocket-Accept is .*, not /);
  });

  it("reads frames sent with the 101, split across reads, fragmented, 64-bit long", async () => {
    const long = "z".repeat(70_000);
    const port = await serve((socket, request) => {
      const frames = Buffer.concat([
        serverFrame(false, Opcode.text, "he"),
        serverFrame(true, Opcode.ping, "p"),
        serverFrame(true, Opcode.continuation, "llo"),
        serverFrame(true, Opcode.binary, long),
      ]);
      // The head and the first bytes in one write, the rest a byte at a time then in a block.
      socket.write(Buffer.concat([Buffer.from(switching(request)), frames.subarray(0, 3)]));
      for (let at = 3; at < 20; at++) socket.write(frames.subarray(at, at + 1));
      socket.end(frames.subarray(20));
    });
    const client = await openAccepted(port, "/");
    assert.deepEqual(await client.next(), { type: "text", data: "hello" });
    assert.deepEqual(await client.next(), {
      type: "binary",
      data: new Uint8Array(Buffer.from(long)),
    });
    assert.equal(client.pings, 1);
    assert.deepEqual(await client.closed, { code: undefined, reason: "", clean: false });
  });

  for (
    const [what, frame, error] of [
      ["a masked frame", encodeFrame({ fin: true, opcode: Opcode.text, payload: "x" }), /masked/],
      ["invalid UTF-8", serverFrame(true, Opcode.text, new Uint8Array([0xff])), /invalid UTF-8/],
      ["a reserved opcode", serverFrame(true, 3, "x"), /reserved opcode 3/],
    ] as const
  ) {
    it(`fails next() and closed when the server sends ${what}`, async () => {
      const port = await serve((socket, request) => {
        socket.write(switching(request));
        socket.write(frame);
      });
      const client = await openAccepted(port, "/");
      await assert.rejects(client.next(), error);
      await assert.rejects(client.closed, error);
    });
  }
});
