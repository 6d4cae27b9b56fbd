// A client that writes HTTP/1.1 as bytes over a real socket and reads what the server sends back,
// as it is: the tests of what `listen(app)` does with hostile or careless clients, on whichever
// runtime runs the suite.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { connect } from "node:net";
import { setTimeout as delay } from "node:timers/promises";

/** What came back on one connection. */
export interface Answer {
  /** The status of the first response; 0 when the server closed without answering. */
  readonly status: number;
  /** The first response's head, decoded as UTF-8. */
  readonly head: string;
  /** Everything after the first head, decoded as UTF-8. */
  readonly body: string;
  /** Every byte received, one character per byte (latin1), for checks byte by byte. */
  readonly bytes: string;
}

/** What the client does after writing: keep the connection, half-close it, or reset it. */
export type Ending = "keep" | "half-close" | "reset";

/**
 * Sends `text` (then `parts`, each after the previous one was written; one byte per character,
 * latin1) and reads until the server closes the connection. `ending` says what the client does
 * after writing.
 */
export function exchange(
  port: number,
  text: string,
  ending: Ending = "keep",
  parts: string[] = [],
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Uint8Array[] = [];
    // A give-up only: a healthy server answers or closes long before, even on a loaded machine.
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`no answer and no close within 60 s for ${JSON.stringify(text.slice(0, 60))}`),
      );
    }, 60_000);
    socket.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    socket.on("error", () => {}); // a reset is one of the outcomes; "close" reports it
    socket.on("close", () => {
      clearTimeout(deadline);
      const received = Buffer.concat(chunks);
      const all = new TextDecoder().decode(received);
      const split = all.indexOf("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(all)?.[1] ?? 0),
        head: split < 0 ? all : all.slice(0, split),
        body: split < 0 ? "" : all.slice(split + 4),
        bytes: received.toString("latin1"),
      });
    });
    socket.on("connect", async () => {
      const write = (data: string) =>
        new Promise<void>((done) => socket.write(Buffer.from(data, "latin1"), () => done()));
      await write(text);
      for (const part of parts) await write(part);
      if (ending === "half-close") socket.end();
      if (ending === "reset") socket.resetAndDestroy();
    });
  });
}

/** A request with `Host: x` and `Connection: close`, then `headers` and `body`. */
export const request = (method: string, path: string, headers: string[] = [], body = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
  headers.map((h) => `${h}\r\n`).join("") + "\r\n" + body;

/** A JSON POST of `body` (ASCII) to `path`. */
export const jsonPost = (path: string, body: string) =>
  request("POST", path, ["Content-Type: application/json", `Content-Length: ${body.length}`], body);

/** The status and the `error` field of a default error body. */
export function errorOf(answer: Answer): { status: number; error: unknown } {
  return { status: answer.status, error: JSON.parse(answer.body).error };
}

/** What {@linkcode sendEndlessBody} saw. */
export interface Flood {
  /** The first bytes the server answered with (latin1); empty when it closed without a word. */
  readonly answer: string;
  /** Whether the server closed the connection before the client had written `cap` bytes. */
  readonly closed: boolean;
  /** The body bytes the client had handed to its socket when the connection closed. */
  readonly written: number;
}

/**
 * Sends `head`, then body bytes (chunked when `chunked`, else as they are) as fast as the server
 * takes them, until the server closes the connection or `cap` bytes are written. A server that
 * reads and discards the rest of a body it answered early lets the client reach `cap`.
 */
export function sendEndlessBody(
  port: number,
  head: string,
  cap: number,
  chunked = false,
): Promise<Flood> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const received: Uint8Array[] = [];
    let written = 0;
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ answer: Buffer.concat(received).toString("latin1"), closed, written });
    };
    socket.on("data", (chunk: Uint8Array) => received.push(chunk));
    socket.on("error", () => finish(true)); // EPIPE or a reset: the server is gone
    socket.on("close", () => finish(true));
    const payload = Buffer.alloc(1 << 20, 0x20);
    const piece = chunked
      ? Buffer.concat([
        Buffer.from(`${payload.length.toString(16)}\r\n`),
        payload,
        Buffer.from("\r\n"),
      ])
      : payload;
    const pump = () => {
      while (!settled) {
        if (written >= cap) return finish(false);
        written += payload.length;
        if (!socket.write(piece)) return void socket.once("drain", pump);
      }
    };
    socket.on("connect", () => {
      socket.write(head);
      pump();
    });
  });
}

/** Asserts that the server on `port` still answers `GET /health` with `up`. */
export async function assertStillServes(port: number): Promise<void> {
  const answer = await exchange(port, request("GET", "/health"));
  assert.equal(answer.status, 200, "the next request");
  assert.equal(answer.body, "up");
}

/** Whether a new connection to `port` is refused now. */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

/**
 * Waits until `check` holds, asking again every 10 ms: what a server does on its own (a file it
 * writes or deletes, work for a client gone) has no answer to wait for. Fails after 60 s, a
 * give-up paid only when the state never comes (a loaded machine may take seconds).
 */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within 60 s: ${what}`);
    await delay(10);
  }
}

/**
 * Waits until new connections are refused: the server has stopped listening. A state to wait on,
 * not a race: a process handling a signal may be starved for seconds on a loaded machine.
 */
export async function untilRefused(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await refused(port))) {
    if (Date.now() > deadline) assert.fail("the server still accepts connections after 30 s");
    await delay(10);
  }
}

/** A kept-alive connection: requests written as asked, answers read as they come. */
export function keptAlive(port: number) {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  let closed = false;
  const listeners: (() => void)[] = [];
  const changed = () => listeners.forEach((l) => l());
  socket.setEncoding("latin1").on("data", (chunk: string) => {
    received += chunk;
    changed();
  });
  socket.on("close", () => {
    closed = true;
    changed();
  });
  socket.on("error", () => {});
  const until = (test: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (test()) resolve();
        else if (closed) reject(new Error(`closed; received:\n${received}`));
      };
      listeners.push(check);
      check();
    });
  // The complete answers received so far: a head and a body of its Content-Length, or chunked
  // (a copied answer's body is a stream), each given back with its body decoded.
  const answers = (): string[] => {
    const list: string[] = [];
    let rest = received;
    for (;;) {
      const end = rest.indexOf("\r\n\r\n");
      if (end < 0) return list;
      const head = rest.slice(0, end + 4);
      const length = /content-length: *(\d+)/i.exec(head);
      let body = "";
      let at = end + 4;
      if (length !== null) {
        if (rest.length < at + Number(length[1])) return list;
        body = rest.slice(at, at + Number(length[1]));
        at += Number(length[1]);
      } else {
        for (;;) {
          const line = rest.indexOf("\r\n", at);
          if (line < 0) return list;
          const size = parseInt(rest.slice(at, line), 16);
          if (rest.length < line + 2 + size + 2) return list;
          body += rest.slice(line + 2, line + 2 + size);
          at = line + 2 + size + 2;
          if (size === 0) break;
        }
      }
      list.push(head + body);
      rest = rest.slice(at);
    }
  };
  return {
    connected: new Promise<void>((resolve) => socket.once("connect", () => resolve())),
    send(path: string): void {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
    },
    /** Writes `text` as it is (latin1): part of a request, say. */
    write(text: string): void {
      socket.write(Buffer.from(text, "latin1"));
    },
    /** Resolves with the first `count` answers once they are all in. */
    async answers(count: number): Promise<string[]> {
      await until(() => answers().length >= count);
      return answers().slice(0, count);
    },
    closedByServer: () => until(() => closed),
    /** Every byte received so far (latin1), answers or not. */
    received: () => received,
    destroy: () => socket.destroy(),
  };
}

/** What {@linkcode dribble} saw. */
export interface Dribbled extends Answer {
  /** How many bytes of `text` the client had written when the server answered or closed. */
  readonly written: number;
}

/**
 * Sends `before`, then `text` one byte every `everyMs`, as a slow or hostile client does, until the
 * server has answered (a head, and the body its `Content-Length` gives) or closed; then hangs up.
 * A server may wait for the rest of a body before it closes (Deno does): the answer is what counts.
 * Gives up after 60 s.
 */
export function dribble(
  port: number,
  text: string,
  everyMs: number,
  before = "",
): Promise<Dribbled> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Uint8Array[] = [];
    let written = 0;
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = setTimeout(() => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`no answer and no close within 60 s, ${written} bytes dribbled`));
    }, 60_000);
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      socket.destroy();
      const received = Buffer.concat(chunks);
      const all = new TextDecoder().decode(received);
      const split = all.indexOf("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(all)?.[1] ?? 0),
        head: split < 0 ? all : all.slice(0, split),
        body: split < 0 ? "" : all.slice(split + 4),
        bytes: received.toString("latin1"),
        written,
      });
    };
    // Whether a whole answer of declared length has arrived.
    const answered = () => {
      const all = Buffer.concat(chunks).toString("latin1");
      const split = all.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(all.slice(0, split));
      return split >= 0 && length !== null && all.length - split - 4 >= Number(length[1]);
    };
    const next = () => {
      if (settled || written >= text.length) return;
      socket.write(Buffer.from(text[written++], "latin1"));
      timer = setTimeout(next, everyMs);
    };
    socket.on("data", (chunk: Uint8Array) => {
      chunks.push(chunk);
      if (answered()) finish();
    });
    socket.on("error", () => {}); // a reset is one of the outcomes; "close" reports it
    socket.on("close", finish);
    socket.on("connect", () => {
      if (before !== "") socket.write(Buffer.from(before, "latin1"));
      next();
    });
  });
}
