// A WebSocket client that writes RFC 6455 frames as bytes over a real socket, for the tests of a
// server's WebSocket support on whichever runtime runs the suite. The runtimes' own `WebSocket`
// cannot misbehave: this one sends what a careless or hostile client sends (fragments, invalid
// UTF-8, unmasked frames, any header, a lying length) and reports what the server sends as it is,
// failing loudly on what RFC 6455 forbids a server to send.
import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

// RFC 6455 1.3: the server proves it read the handshake by hashing the key with this.
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
// A give-up only: a healthy server answers or closes long before, even on a loaded machine.
const GIVE_UP_MS = 60_000;

/** The opcodes of RFC 6455 5.2. */
export const Opcode = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;

/** A data message from the server, assembled across its fragments. */
export type Message =
  | { readonly type: "text"; readonly data: string }
  | { readonly type: "binary"; readonly data: Uint8Array };

/** One frame as the client sends it, valid or not. */
export interface Frame {
  readonly fin: boolean;
  /** Any of 0-15: reserved ones too, to see the server refuse them. */
  readonly opcode: number;
  /** A string is sent as its UTF-8 bytes. */
  readonly payload: Uint8Array | string;
  /** Whether to mask the payload, as RFC 6455 5.3 asks of a client; true unless false. */
  readonly masked?: boolean;
  /** RSV1-3 as a number 0-7 (RSV1 is 4): set only to see a server without extensions refuse it. */
  readonly rsv?: number;
}

/** How the connection ended. */
export interface Closed {
  /** The code of the server's close frame; undefined when it had none, or never came. */
  readonly code: number | undefined;
  /** The reason of the server's close frame, decoded as UTF-8; empty when none. */
  readonly reason: string;
  /** Whether the server sent a close frame before the TCP connection ended (RFC 6455 7.1.4). */
  readonly clean: boolean;
}

/** A handshake the server did not answer with 101. */
export interface Refused {
  readonly refused: true;
  /** The status of the answer; 0 when the server closed without answering. */
  readonly status: number;
  /** The answer's head, decoded as UTF-8 (everything received when it had no end). */
  readonly head: string;
  /** The answer's body (to its Content-Length, the end of its chunks, or the close). */
  readonly body: string;
}

/** An open WebSocket connection. Every send resolves once its bytes are written or the
 * connection is gone: what happened to them is for {@linkcode WsClient.closed} to say. */
export interface WsClient {
  readonly refused: false;
  /** The 101 answer's head, as received. */
  readonly head: string;
  /** The 101 answer's headers, by lowercase name (repeated ones joined by ", "). */
  readonly headers: Readonly<Record<string, string>>;
  /** Every byte received on the connection so far, the 101 head included. */
  readonly received: number;
  /** Pings from the server so far, each answered with a pong of the same payload. */
  readonly pings: number;
  sendText(text: string): Promise<void>;
  sendBinary(bytes: Uint8Array): Promise<void>;
  /** Sends one frame as it is told: a fragment, a reserved opcode, an unmasked or invalid one. */
  sendFrame(frame: Frame): Promise<void>;
  /** Writes `bytes` as they are: half a frame, a header whose length lies. */
  sendRaw(bytes: Uint8Array): Promise<void>;
  /** Sends a ping; resolves with the payload of the next pong the server sends. */
  ping(payload?: Uint8Array | string): Promise<Uint8Array>;
  /** Sends a close frame: with no code, an empty one; a reason needs a code. */
  close(code?: number, reason?: string): Promise<void>;
  /**
   * The next data message. Rejects when the connection ends first, when the server breaks
   * RFC 6455, or after 60 s without one.
   */
  next(): Promise<Message>;
  /**
   * Resolves once the TCP connection has ended, with the server's close frame if it sent one (the
   * client answers that frame with its own, as RFC 6455 5.5.1 asks). Each read starts a give-up
   * of 60 s: await it rather than keep it. Rejects when the server broke RFC 6455.
   */
  readonly closed: Promise<Closed>;
  /** Stops reading the connection (what the server sends waits in its buffers), until `resume`. */
  pause(): void;
  resume(): void;
  /** Ends the TCP connection without a close frame (a FIN): a client that hangs up. */
  hangUp(): void;
  /** Resets the TCP connection: a client that vanishes. */
  destroy(): void;
}

const utf8 = (payload: Uint8Array | string): Uint8Array =>
  typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;

/** The bytes of `frame`, as {@linkcode WsClient.sendFrame} writes them: to split or to bend. */
export function encodeFrame(frame: Frame): Uint8Array {
  const payload = utf8(frame.payload);
  const masked = frame.masked ?? true;
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
  const head = Buffer.alloc(2 + extra + (masked ? 4 : 0));
  head[0] = (frame.fin ? 0x80 : 0) | ((frame.rsv ?? 0) & 7) << 4 | (frame.opcode & 0xf);
  head[1] = (masked ? 0x80 : 0) | (extra === 0 ? length : extra === 2 ? 126 : 127);
  if (extra === 2) head.writeUInt16BE(length, 2);
  if (extra === 8) head.writeBigUInt64BE(BigInt(length), 2);
  if (!masked) return Buffer.concat([head, payload]);
  const key = randomBytes(4);
  key.copy(head, 2 + extra);
  const body = Buffer.alloc(length);
  for (let i = 0; i < length; i++) body[i] = payload[i] ^ key[i & 3];
  return Buffer.concat([head, body]);
}

/**
 * Connects to 127.0.0.1:`port` and asks to upgrade `path` with a valid handshake; `headers` are
 * added to it (an `Origin`, say), or replace one of its own of the same name, or remove it when
 * null. Resolves with the connection on 101 (after checking `Sec-WebSocket-Accept`), or with what
 * the server answered instead. Rejects when the connection fails, when a 101 is not a valid one,
 * or when nothing decides within 60 s.
 */
export function openSocket(
  port: number,
  path: string,
  headers: Record<string, string | null> = {},
): Promise<WsClient | Refused> {
  const lines = new Map<string, [string, string]>();
  const defaults: Record<string, string> = {
    Host: `127.0.0.1:${port}`,
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
    "Sec-WebSocket-Version": "13",
  };
  for (const [name, value] of Object.entries({ ...defaults, ...headers })) {
    if (value === null) lines.delete(name.toLowerCase());
    else lines.set(name.toLowerCase(), [name, value]);
  }
  const sentKey = lines.get("sec-websocket-key")?.[1] ?? "";
  const request = `GET ${path} HTTP/1.1\r\n` +
    [...lines.values()].map(([name, value]) => `${name}: ${value}\r\n`).join("") + "\r\n";
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.off("data", onData);
      done();
    };
    const deadline = setTimeout(() => {
      socket.destroy();
      settle(() => reject(new Error(`no answer to the upgrade of ${path} within 60 s`)));
    }, GIVE_UP_MS);
    const refuse = (all: Buffer) => {
      socket.destroy();
      settle(() => resolve(refusal(all)));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      const end = all.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = all.subarray(0, end).toString("utf8");
      if (statusOf(head) !== 101) {
        if (answerComplete(head, all.subarray(end + 4))) refuse(all);
        return;
      }
      const fields = headersOf(head);
      const problem = upgradeProblem(fields, sentKey);
      if (problem !== undefined) {
        socket.destroy();
        settle(() => reject(new Error(`${problem}, in the answer to ${path}:\n${head}`)));
        return;
      }
      settle(() => resolve(client(socket, { head, headers: fields, rest: all.subarray(end + 4) })));
    };
    socket.on("data", onData);
    socket.on("error", (error: Error) => {
      if (chunks.length === 0) {
        settle(() => reject(new Error(`cannot upgrade ${path} on port ${port}: ${error.message}`)));
      }
    });
    socket.on("close", () => refuse(Buffer.concat(chunks)));
    socket.on("connect", () => socket.write(request));
  });
}

/** {@linkcode openSocket}, failing when the server refuses: for tests of an open connection. */
export async function openAccepted(
  port: number,
  path: string,
  headers: Record<string, string | null> = {},
): Promise<WsClient> {
  const answer = await openSocket(port, path, headers);
  if (answer.refused) {
    throw new Error(`the upgrade of ${path} was refused with ${answer.status}:\n${answer.head}`);
  }
  return answer;
}

const statusOf = (head: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);

function headersOf(head: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    fields[name] = name in fields ? `${fields[name]}, ${value}` : value;
  }
  return fields;
}

// RFC 6455 4.1: what a client must check of a 101 before it speaks WebSocket.
function upgradeProblem(fields: Record<string, string>, key: string): string | undefined {
  if (fields["upgrade"]?.toLowerCase() !== "websocket") return "no `Upgrade: websocket`";
  if (!/(^|,)\s*upgrade\s*(,|$)/i.test(fields["connection"] ?? "")) {
    return "no `Connection: Upgrade`";
  }
  const expected = createHash("sha1").update(key + GUID).digest("base64");
  if (fields["sec-websocket-accept"] !== expected) {
    return `Sec-WebSocket-Accept is ${fields["sec-websocket-accept"]}, not ${expected}`;
  }
  return undefined;
}

// Whether the body after a head is all there: a server refusing an upgrade may keep the
// connection open, so its close cannot be the only end.
function answerComplete(head: string, body: Buffer): boolean {
  const fields = headersOf(head);
  if (fields["content-length"] !== undefined) {
    return body.length >= Number(fields["content-length"]);
  }
  if (/chunked/i.test(fields["transfer-encoding"] ?? "")) return dechunk(body) !== undefined;
  return false;
}

// The body of a chunked answer, or undefined while its last chunk has not come.
function dechunk(body: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const line = body.indexOf("\r\n", at);
    if (line < 0) return undefined;
    const size = parseInt(body.subarray(at, line).toString("latin1"), 16);
    if (Number.isNaN(size) || body.length < line + 2 + size + 2) return undefined;
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
}

function refusal(all: Buffer): Refused {
  const end = all.indexOf("\r\n\r\n");
  if (end < 0) {
    const head = all.toString("utf8");
    return { refused: true, status: statusOf(head), head, body: "" };
  }
  const head = all.subarray(0, end).toString("utf8");
  let body = all.subarray(end + 4);
  const fields = headersOf(head);
  if (fields["content-length"] !== undefined) {
    body = body.subarray(0, Number(fields["content-length"]));
  } else if (/chunked/i.test(fields["transfer-encoding"] ?? "")) body = dechunk(body) ?? body;
  return { refused: true, status: statusOf(head), head, body: body.toString("utf8") };
}

/** One frame as the server sent it. */
interface Received {
  readonly fin: boolean;
  readonly opcode: number;
  readonly payload: Buffer;
}

/**
 * Cuts frames out of the bytes as they come, giving each whole one to `onFrame`; throws what
 * breaks RFC 6455 5.2 for a server's frame. Bytes wait in a list until a frame's length is there,
 * so that a large frame in many reads is joined once.
 */
function frameReader(onFrame: (frame: Received) => void): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let size = 0;
  let need = 2;
  return (chunk) => {
    pending.push(chunk);
    size += chunk.length;
    while (size >= need) {
      const all = pending.length === 1 ? pending[0] : Buffer.concat(pending);
      pending = [all];
      const frame = cut(all);
      if (typeof frame === "number") {
        need = frame;
        continue;
      }
      pending = [all.subarray(frame.length)];
      size = all.length - frame.length;
      need = 2;
      onFrame(frame.frame);
    }
  };
}

// The first frame of `bytes` and its length, or the length needed to know it.
function cut(bytes: Buffer): { frame: Received; length: number } | number {
  const first = bytes[0];
  const second = bytes[1];
  if ((first & 0x70) !== 0) throw new Error(`the server set RSV bits (${first >> 4 & 7}) unasked`);
  if ((second & 0x80) !== 0) throw new Error("the server masked a frame (RFC 6455 5.1)");
  let length = second & 0x7f;
  let at = 2;
  if (length === 126) {
    if (bytes.length < 4) return 4;
    length = bytes.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (bytes.length < 10) return 10;
    const long = bytes.readBigUInt64BE(2);
    if (long > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new Error(`the server announced a frame of ${long} bytes`);
    }
    length = Number(long);
    at = 10;
  }
  if (bytes.length < at + length) return at + length;
  const frame = {
    fin: (first & 0x80) !== 0,
    opcode: first & 0xf,
    payload: bytes.subarray(at, at + length),
  };
  return { frame, length: at + length };
}

// RFC 6455 7.4: the codes a close frame may carry on the wire.
const validCode = (code: number) =>
  (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
  (code >= 3000 && code <= 4999);

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

interface Handshake {
  readonly head: string;
  readonly headers: Record<string, string>;
  /** What came after the 101 head in the same reads: the first frames. */
  readonly rest: Buffer;
}

function client(socket: Socket, handshake: Handshake): WsClient {
  const messages: Message[] = [];
  const waiters: { resolve: (m: Message) => void; reject: (e: Error) => void }[] = [];
  const pongs: ((payload: Uint8Array) => void)[] = [];
  let fragments: { type: "text" | "binary"; parts: Buffer[] } | undefined;
  let closeFrame: { code: number | undefined; reason: string } | undefined;
  let sentClose = false;
  let violation: Error | undefined;
  let ended: Closed | undefined;
  const endListeners: (() => void)[] = [];
  let received = Buffer.byteLength(handshake.head) + 4;
  let pings = 0;

  const write = (bytes: Uint8Array) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed || !socket.writable) return resolve();
      socket.write(bytes, () => resolve());
    });
  const send = (frame: Frame) => {
    if (frame.opcode === Opcode.close) sentClose = true;
    return write(encodeFrame(frame));
  };
  const deliver = (message: Message) => {
    const waiter = waiters.shift();
    if (waiter === undefined) messages.push(message);
    else waiter.resolve(message);
  };
  const fail = (error: Error) => {
    violation ??= error;
    for (const waiter of waiters.splice(0)) waiter.reject(error);
    socket.destroy();
  };

  const onFrame = (frame: Received) => {
    const { fin, opcode, payload } = frame;
    if (closeFrame !== undefined) throw new Error(`the server sent opcode ${opcode} after close`);
    if (opcode >= 8) {
      if (!fin || payload.length > 125) {
        throw new Error(`the server sent a control frame (opcode ${opcode}) fragmented or > 125 B`);
      }
      if (opcode === Opcode.ping) {
        pings++;
        if (!sentClose) void send({ fin: true, opcode: Opcode.pong, payload });
      } else if (opcode === Opcode.pong) pongs.shift()?.(new Uint8Array(payload));
      else if (opcode === Opcode.close) onClose(payload);
      else throw new Error(`the server sent the reserved opcode ${opcode}`);
      return;
    }
    if (opcode === Opcode.continuation) {
      if (fragments === undefined) throw new Error("the server sent a continuation of nothing");
      fragments.parts.push(payload);
    } else if (opcode === Opcode.text || opcode === Opcode.binary) {
      if (fragments !== undefined) {
        throw new Error(`the server began a message (opcode ${opcode}) inside a fragmented one`);
      }
      fragments = { type: opcode === Opcode.text ? "text" : "binary", parts: [payload] };
    } else throw new Error(`the server sent the reserved opcode ${opcode}`);
    if (!fin) return;
    const data = Buffer.concat(fragments.parts);
    const type = fragments.type;
    fragments = undefined;
    if (type === "binary") return deliver({ type, data: new Uint8Array(data) });
    try {
      deliver({ type, data: strictUtf8.decode(data) });
    } catch {
      throw new Error(`the server sent a text message of invalid UTF-8 (${data.length} B)`);
    }
  };

  const onClose = (payload: Buffer) => {
    if (payload.length === 1) throw new Error("the server sent a close frame of 1 byte");
    const code = payload.length >= 2 ? payload.readUInt16BE(0) : undefined;
    if (code !== undefined && !validCode(code)) {
      throw new Error(`the server sent the close code ${code}, not one to send (RFC 6455 7.4)`);
    }
    let reason: string;
    try {
      reason = strictUtf8.decode(payload.subarray(2));
    } catch {
      throw new Error("the server sent a close reason of invalid UTF-8");
    }
    closeFrame = { code, reason };
    // RFC 6455 5.5.1: answer with a close frame, typically echoing the code.
    if (!sentClose) void send({ fin: true, opcode: Opcode.close, payload: payload.subarray(0, 2) });
  };

  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (violation !== undefined) return;
    try {
      read(chunk);
    } catch (error) {
      fail(error as Error);
    }
  };

  const read = frameReader(onFrame);
  socket.on("data", onData);
  socket.on("error", () => {}); // a reset is one of the outcomes; "close" reports it
  socket.on("close", () => {
    ended = { code: closeFrame?.code, reason: closeFrame?.reason ?? "", clean: !!closeFrame };
    const why = closeFrame === undefined
      ? "the connection ended without a close frame"
      : `the server closed the connection (${closeFrame.code} ${closeFrame.reason})`;
    for (const waiter of waiters.splice(0)) waiter.reject(violation ?? new Error(why));
    for (const listener of endListeners.splice(0)) listener();
  });
  if (handshake.rest.length > 0) onData(handshake.rest);

  // Each wait gets its own give-up, so that a long-lived connection (a bench) has none.
  // `wait` returns what to undo on a give-up: a waiter to forget.
  const giveUp = <T>(
    what: string,
    wait: (resolve: (v: T) => void, reject: (e: Error) => void) => (() => void) | void,
  ) =>
    new Promise<T>((resolve, reject) => {
      const deadline = setTimeout(() => {
        forget?.();
        reject(new Error(`${what} within 60 s`));
      }, GIVE_UP_MS);
      const forget = wait(
        (value) => {
          clearTimeout(deadline);
          resolve(value);
        },
        (error) => {
          clearTimeout(deadline);
          reject(error);
        },
      );
    });

  return {
    refused: false,
    head: handshake.head,
    headers: handshake.headers,
    get received() {
      return received;
    },
    get pings() {
      return pings;
    },
    sendText: (text) => send({ fin: true, opcode: Opcode.text, payload: text }),
    sendBinary: (bytes) => send({ fin: true, opcode: Opcode.binary, payload: bytes }),
    sendFrame: send,
    sendRaw: write,
    ping(payload = new Uint8Array(0)) {
      return giveUp("no pong", (resolve, reject) => {
        if (ended !== undefined) return reject(new Error("ping on a closed connection"));
        pongs.push(resolve);
        void send({ fin: true, opcode: Opcode.ping, payload });
        return () => void pongs.splice(pongs.indexOf(resolve), 1);
      });
    },
    close(code, reason = "") {
      const payload = code === undefined
        ? Buffer.alloc(0)
        : Buffer.alloc(2 + Buffer.byteLength(reason));
      if (code !== undefined) {
        payload.writeUInt16BE(code, 0);
        payload.write(reason, 2, "utf8");
      }
      return send({ fin: true, opcode: Opcode.close, payload });
    },
    next() {
      return giveUp("no message", (resolve, reject) => {
        const message = messages.shift();
        if (message !== undefined) return resolve(message);
        if (violation !== undefined) return reject(violation);
        if (ended !== undefined) return reject(new Error("the connection has ended"));
        const waiter = { resolve, reject };
        waiters.push(waiter);
        return () => void waiters.splice(waiters.indexOf(waiter), 1);
      });
    },
    get closed() {
      return giveUp<Closed>("the connection did not end", (resolve, reject) => {
        const report = () => {
          if (violation !== undefined) reject(violation);
          else if (ended !== undefined) resolve(ended);
        };
        if (ended !== undefined) return report();
        endListeners.push(report);
        return () => void endListeners.splice(endListeners.indexOf(report), 1);
      });
    },
    pause: () => void socket.pause(),
    resume: () => void socket.resume(),
    hangUp: () => void socket.end(),
    destroy: () => void socket.resetAndDestroy(),
  };
}
