// What an open `@SseMapping` stream and an open `@WebSocketMapping` socket cost a server, on the
// runtime that runs this file (`npm run bench:streams`: Deno, Bun and Node 26):
// `bench/stream_clients.ts [--kind sse|websocket] [--clients 1000] [--events 200] [--rounds 2]`
// (both kinds without `--kind`). The server is a child of this runtime: Thaw (`listen(app)`) or the
// baseline, bare Hono (`streamSSE`, or the runtime's `upgradeWebSocket`) on `Deno.serve`,
// `Bun.serve` or @hono/node-server; the clients are raw sockets in another child, so the server's
// memory and CPU are its own. Memory per stream: the server's RSS (and V8 heap) after a GC with
// every stream open and its first event in, minus the same after a few streams opened and closed,
// over the clients. CPU per event: the server's user + system time over `events` rounds of one
// event (a message, on a socket) to every client (the next once the clients got all of the last),
// over the events sent. Thaw and the baseline take turns, `rounds` times each: medians, and their
// ratios. No threshold: a bench, not a test.
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import process from "node:process";
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { WSContext, WSEvents } from "hono/ws";
import { bootstrap, RestController, SseMapping, WebSocketMapping } from "../mod.ts";
import { listen } from "../server.ts";

const RUNTIME = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    kind: { type: "string" },
    clients: { type: "string", default: "1000" },
    events: { type: "string", default: "200" },
    rounds: { type: "string", default: "2" },
  },
});
const WARM_STREAMS = 10;
const WARM_EVENTS = 20;
const HOST = "127.0.0.1";

// Round n sends one event to every stream; a stream behind sends each round it missed.
let round = 0;
let next = Promise.withResolvers<void>();
async function* ticks(): AsyncGenerator<string> {
  yield "open";
  for (let seen = 0;; seen++) {
    while (seen === round) await next.promise;
    yield "tick";
  }
}

// The open sockets, each sent "tick" at every round.
const sockets = new Set<WSContext>();
const socketEvents: WSEvents = {
  onOpen: (_event, ws) => {
    sockets.add(ws);
    ws.send("open");
  },
  onClose: (_event, ws) => void sockets.delete(ws),
};

@RestController()
class Feed {
  @SseMapping("/feed")
  async *feed() {
    for await (const data of ticks()) yield { data };
  }

  @WebSocketMapping("/socket")
  socket(): WSEvents {
    return socketEvents;
  }
}

type Fetch = (request: Request) => Response | Promise<Response>;
interface Runtimes {
  Deno?: {
    serve(o: { port: 0; hostname: string; onListen(a: { port: number }): void }, f: Fetch): unknown;
  };
  Bun?: {
    serve(
      o: { port: 0; hostname: string; fetch: Fetch; idleTimeout: number; websocket: object },
    ): { port: number };
    gc(force: boolean): void;
  };
  gc?: () => void;
}

// Bare Hono as its docs write it on each runtime: `streamSSE`, and the runtime's `upgradeWebSocket`.
async function baseline(): Promise<number> {
  const g = globalThis as Runtimes;
  const hono = new Hono();
  hono.get("/feed", (c) =>
    streamSSE(c, async (stream) => {
      for await (const data of ticks()) await stream.writeSSE({ data });
    }));
  if (g.Deno !== undefined) {
    const { upgradeWebSocket } = await import("hono/deno");
    hono.get("/socket", upgradeWebSocket(() => socketEvents));
    return await new Promise<number>((resolve) =>
      g.Deno!.serve({ port: 0, hostname: HOST, onListen: (a) => resolve(a.port) }, hono.fetch)
    );
  }
  // A Hono user on Bun turns its 10 s idle timeout off, or it cuts the streams.
  if (g.Bun !== undefined) {
    const { upgradeWebSocket, websocket } = await import("hono/bun");
    hono.get("/socket", upgradeWebSocket(() => socketEvents));
    return g.Bun.serve({ port: 0, hostname: HOST, fetch: hono.fetch, idleTimeout: 0, websocket })
      .port;
  }
  const [{ serve, upgradeWebSocket }, { WebSocketServer }] = await Promise.all([
    import("@hono/node-server"),
    import("ws"),
  ]);
  hono.get("/socket", upgradeWebSocket(() => socketEvents));
  const server = new WebSocketServer({ noServer: true });
  return await new Promise<number>((resolve) =>
    serve(
      // deno-lint-ignore no-explicit-any
      { fetch: hono.fetch, port: 0, hostname: HOST, websocket: { server: server as any } },
      (info) => resolve(info.port),
    )
  );
}

/** The server child: prints its port, then answers `gc`, `tick` and `cpu`, a line each. */
async function serve(kind: string): Promise<void> {
  const g = globalThis as Runtimes;
  const options = { port: 0, hostname: HOST, quiet: true, signals: false };
  const app = kind === "thaw" ? await bootstrap({ controllers: [Feed] }) : undefined;
  const port = app !== undefined ? (await listen(app, options)).port : await baseline();
  console.log(`port ${port}`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "gc") {
      for (let i = 0; i < 3; i++) {
        if (g.Bun !== undefined) g.Bun.gc(true);
        else g.gc?.();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const { rss, heapUsed } = process.memoryUsage();
      console.log(`mem ${rss} ${heapUsed}`);
    } else if (line === "tick") {
      for (const ws of sockets) ws.send("tick");
      round++;
      next.resolve();
      next = Promise.withResolvers<void>();
      console.log("ok");
    } else if (line === "cpu") {
      const { user, system } = process.cpuUsage();
      console.log(`cpu ${user + system}`);
    }
  }
}

// What a client sends to open its stream or socket, and what marks an event in what it receives:
// a socket's messages are text frames, "open" then "tick" (after a 2-byte head, unmasked).
function opening(kind: string): { request: () => string; mark: string } {
  if (kind === "sse") {
    return {
      request: () => "GET /feed HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
      mark: "data: ",
    };
  }
  return {
    request: () =>
      "GET /socket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
      "Sec-WebSocket-Version: 13\r\n\r\n",
    mark: "\x81\x04",
  };
}

/** The clients child: `open n` ends the open streams and opens n; `until k`: k events in all. */
async function clients(kind: string, port: number): Promise<void> {
  const { request, mark } = opening(kind);
  let sockets: Socket[] = [];
  let events = 0;
  let waiting = { count: Infinity, done: () => {} };
  const open = () =>
    new Promise<void>((resolve, reject) => {
      let tail = "";
      const socket = connect(port, HOST, () => {
        socket.write(request());
      });
      socket.setEncoding("latin1");
      socket.on("error", reject);
      socket.on("data", (chunk: string) => {
        const text = tail + chunk;
        const found = text.split(mark).length - 1;
        tail = text.slice(-5);
        if (found === 0) return;
        resolve();
        events += found;
        if (events >= waiting.count) waiting.done();
      });
      sockets.push(socket);
    });
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, n] = [line.split(" ")[0], Number(line.split(" ")[1])];
    if (command === "open") {
      for (const socket of sockets) socket.destroy();
      sockets = [];
      // In batches, within the servers' listen backlog.
      for (let left = n; left > 0; left -= 100) {
        await Promise.all(Array.from({ length: Math.min(100, left) }, open));
      }
      events = 0;
    } else if (command === "until" && events < n) {
      await new Promise<void>((done) => waiting = { count: n, done });
    }
    console.log("ok");
  }
}

/** A child of this runtime running this file; `ask` writes a line and reads the answer's. */
function child(args: string[]) {
  const self = new URL(import.meta.url).pathname;
  const flags = RUNTIME === "deno"
    ? ["run", "-A", "--v8-flags=--expose-gc", self, ...args]
    : RUNTIME === "bun"
    ? [self, ...args]
    : ["--expose-gc", "--import", "tsx", self, ...args];
  const proc = spawn(process.execPath, flags, { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  const read = async (): Promise<number[]> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${args.join(" ")}: the child ended`);
    return String(value).split(" ").slice(1).map(Number);
  };
  const ask = (line: string) => (proc.stdin!.write(`${line}\n`), read());
  return { proc, read, ask };
}

type Figures = Readonly<Record<"rss" | "heap" | "cpu", number>>;

async function measure(
  kind: string,
  server_: string,
  n: number,
  events: number,
): Promise<Figures> {
  const server = child(["serve", server_]);
  const [port] = await server.read();
  const users = child(["clients", kind, String(port)]);
  try {
    await users.ask(`open ${WARM_STREAMS}`);
    await users.ask("open 0");
    const [rss0, heap0] = await server.ask("gc");
    await users.ask(`open ${n}`);
    const [rss1, heap1] = await server.ask("gc");
    const send = async (i: number) => (await server.ask("tick"), await users.ask(`until ${i * n}`));
    for (let i = 1; i <= WARM_EVENTS; i++) await send(i);
    const [start] = await server.ask("cpu");
    for (let i = WARM_EVENTS + 1; i <= WARM_EVENTS + events; i++) await send(i);
    const [end] = await server.ask("cpu");
    return {
      rss: (rss1 - rss0) / n / 1024,
      heap: (heap1 - heap0) / n / 1024,
      cpu: (end - start) / (events * n),
    };
  } finally {
    users.proc.kill();
    server.proc.kill();
  }
}

const NAMES = {
  sse: { what: "SSE streams", hono: "Hono streamSSE", thaw: "Thaw @SseMapping" },
  websocket: { what: "WebSockets", hono: "Hono upgradeWebSocket", thaw: "Thaw @WebSocketMapping" },
} as const;

async function drive(kind: keyof typeof NAMES): Promise<void> {
  const [n, events, rounds] = [values.clients, values.events, values.rounds].map(Number);
  const runs: Record<string, Figures[]> = { hono: [], thaw: [] };
  for (let r = 0; r < rounds; r++) {
    for (const server of r % 2 === 0 ? ["hono", "thaw"] : ["thaw", "hono"]) {
      runs[server].push(await measure(kind, server, n, events));
    }
  }
  const median = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return (xs[Math.floor((xs.length - 1) / 2)] + xs[Math.ceil((xs.length - 1) / 2)]) / 2;
  };
  const of = (server: string, key: keyof Figures) => median(runs[server].map((x) => x[key]));
  const keys = ["rss", "heap", "cpu"] as const;
  const row = (name: string, figures: number[]) =>
    console.log(`  ${name.padEnd(34)}${figures.map((x) => x.toFixed(2).padStart(16)).join("")}`);
  const names = NAMES[kind];
  console.log(
    `${RUNTIME} ${process.versions[RUNTIME] ?? ""}: ${n} ${names.what}, ${events} events each, ` +
      `median of ${rounds} run(s) per server`,
  );
  const heads = ["RSS KiB/stream", "heap KiB/stream", "CPU µs/event"];
  console.log(`  ${"".padEnd(34)}${heads.map((h) => h.padStart(16)).join("")}`);
  row(`${names.hono} (baseline)`, keys.map((k) => of("hono", k)));
  row(names.thaw, keys.map((k) => of("thaw", k)));
  row("Thaw / baseline", keys.map((k) => of("thaw", k) / of("hono", k)));
}

const [mode, arg, more] = positionals;
if (mode === "serve") await serve(arg);
else if (mode === "clients") await clients(arg, Number(more));
else if (values.kind === "sse" || values.kind === "websocket") await drive(values.kind);
else if (values.kind === undefined) {
  await drive("sse");
  await drive("websocket");
} else throw new Error(`--kind is sse or websocket, not ${values.kind}`);
