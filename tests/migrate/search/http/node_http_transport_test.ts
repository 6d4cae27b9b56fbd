// The node:http(s) transport (Node's default for the search runner, and Deno's and Bun's for
// `ssl_verification: false` / `proxy: false`) against hosts that answer what a cluster never
// should: every request settles, as an answer or a clear error, and only a connection that was
// never made counts as "never sent".
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { after, describe, it } from "node:test";
import { createServer, type Server, type Socket } from "node:net";
import { nodeHttpTransport } from "../../../../src/migrate/search/http/node_http_transport.ts";
import { neverSent } from "../../../../src/migrate/search/http/send_failure.ts";
import type { BodyLimit, ReadingTransport } from "../../../../src/migrate/search/http/transport.ts";

/** A TCP server that gives every connection to `onConnection`. */
async function rawServer(onConnection: (socket: Socket) => void): Promise<Server> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

/** Answers every request with `head` (a status line and headers) and `body`, then `end`s or not. */
function answering(head: string, body = "", close = false): (socket: Socket) => void {
  return (socket) =>
    socket.once("data", () => {
      socket.write(`${head}\r\n\r\n${body}`);
      if (close) socket.end();
    });
}

/**
 * The request's outcome. A request that never settles is the failure these tests look for, so it
 * is raced against a deadline far beyond any the transport sets (liveness, not ordering).
 */
async function outcome(
  promise: Promise<Response>,
): Promise<{ response?: Response; error?: unknown }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the request never settled")), 15_000);
  });
  try {
    return { response: await Promise.race([promise, hung]) };
  } catch (error) {
    if (error instanceof Error && error.message === "the request never settled") throw error;
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A describe block's hosts and transports, closed after its tests: `serve` starts a raw server;
 * `transport(ms)` makes a transport with that connect timeout.
 */
function testHosts() {
  const servers: Server[] = [];
  const transports: ReadingTransport[] = [];
  after(() => {
    for (const transport of transports) transport.close();
    for (const server of servers) {
      server.close();
      // Connections the tests left open (the silent TLS host) would keep the server alive.
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    }
  });
  return {
    serve: async (onConnection: (socket: Socket) => void): Promise<Server> => {
      const server = await rawServer(onConnection);
      servers.push(server);
      return server;
    },
    transport: (connectTimeoutMs: number): ReadingTransport => {
      const transport = nodeHttpTransport({
        sslVerification: false,
        proxy: undefined,
        connectTimeoutMs,
      });
      transports.push(transport);
      return transport;
    },
  };
}

describe("node:http transport against odd hosts", () => {
  const { serve, transport: make } = testHosts();
  // Local hosts that accept at once: a connect timeout they beat even on a loaded machine.
  const transport = make(5000);
  // For the handshake that never ends, whose connect timeout is under test: a transport of its own.
  const shortConnect = make(300);

  it("fails a request answered with 101 and a closed connection, rather than waiting forever", async () => {
    const server = await serve(
      answering("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x", "", true),
    );
    for (const method of ["GET", "POST"]) {
      const { response, error } = await outcome(
        transport.fetch(new URL(`http://127.0.0.1:${portOf(server)}/`), {
          method,
          ...(method === "POST" ? { body: "{}" } : {}),
        }),
      );
      assert.equal(response, undefined, `${method}: a 101 is no answer`);
      assert.ok(error instanceof Error, `${method}: ${error}`);
      assert.equal(neverSent(error), false, "the request was sent");
    }
  });

  it("answers 204, 205 and 304 with no body, and refuses a status outside 200-599 with an error", async () => {
    for (const status of [204, 205, 304]) {
      const server = await serve(answering(`HTTP/1.1 ${status} X\r\nContent-Length: 0`));
      const { response, error } = await outcome(
        transport.fetch(new URL(`http://127.0.0.1:${portOf(server)}/`), { method: "GET" }),
      );
      assert.equal(error, undefined, `${status}: ${error}`);
      assert.equal(response!.status, status);
      assert.equal(response!.body, null);
    }
    for (const status of [600, 999]) {
      const server = await serve(answering(`HTTP/1.1 ${status} X\r\nContent-Length: 2`, "{}"));
      const { error } = await outcome(
        transport.fetch(new URL(`http://127.0.0.1:${portOf(server)}/`), { method: "GET" }),
      );
      assert.match(String(error), new RegExp(`${status}`), `${status}`);
      assert.equal(neverSent(error), false);
    }
  });

  it("counts an https host that never finishes the handshake as a connection never made", async () => {
    // Accepts TCP, then says nothing: the TLS handshake never completes, so no byte of the
    // request left, and the next host may be tried.
    const server = await serve(() => {});
    const { response, error } = await outcome(
      shortConnect.fetch(new URL(`https://127.0.0.1:${portOf(server)}/`), {
        method: "POST",
        body: new Response("{}").body,
      }),
    );
    assert.equal(response, undefined);
    assert.equal(neverSent(error), true, `${error}`);
  });

  it("does not count a slow answer on a made connection as a connection never made", async () => {
    const server = await serve(() => {});
    const { error } = await outcome(
      transport.fetch(new URL(`http://127.0.0.1:${portOf(server)}/`), {
        method: "POST",
        body: "{}",
        // Past the transport's connect timeout: the connection was made, so it does not apply.
        signal: AbortSignal.timeout(6_000),
      }),
    );
    assert.ok(error !== undefined);
    assert.equal(neverSent(error), false, `${error}`);
  });
});

describe("node:http transport's read, the answer whole within a bound", () => {
  const { serve, transport: make } = testHosts();
  const transport = make(5000);
  // Every byte value, twice: the body is bytes, never text.
  const bytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
  const unbounded: BodyLimit = () => ({
    most: Number.MAX_SAFE_INTEGER,
    over: () => new Error("over"),
  });
  const read = (server: Server, limit = unbounded, method = "GET") =>
    transport.read({
      origin: new URL(`http://127.0.0.1:${portOf(server)}`),
      path: "/x",
      method,
      headers: {},
      body: undefined,
    }, limit).answer;

  it("reads a chunked answer whole, every byte value as sent, its header names in lower case", async () => {
    const seen: { encoding: string | undefined; first: number | undefined }[] = [];
    const server = await serve((socket) =>
      socket.once("data", () => {
        socket.write(
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Odd-Name: Value\r\n" +
            "Content-Encoding: Identity \r\n\r\n",
        );
        // Two chunks, each in a write of its own.
        for (const part of [bytes.subarray(0, 100), bytes.subarray(100)]) {
          socket.write(`${part.length.toString(16)}\r\n`);
          socket.write(part);
          socket.write("\r\n");
        }
        socket.write("0\r\n\r\n");
      })
    );
    const answer = await read(server, (encoding, first) => {
      seen.push({ encoding, first: first[0] });
      return unbounded(encoding, first);
    });
    assert.equal(answer.status, 200);
    assert.deepEqual([...answer.body], [...bytes]);
    assert.equal(answer.headers["x-odd-name"], "Value");
    assert.deepEqual(seen, [{ encoding: "identity", first: 0 }], "the limit is asked once");
  });

  it("stops at the bound: fails with its error, and closes the connection", async () => {
    let closed!: () => void;
    const serverClosed = new Promise<void>((resolve) => closed = resolve);
    const server = await serve((socket) => {
      socket.on("close", closed);
      socket.once("data", () => {
        // An answer that never ends: only the bound stops its read.
        socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        const more = () => {
          if (socket.destroyed) return;
          socket.write(`200\r\n${"a".repeat(0x200)}\r\n`, more);
        };
        more();
      });
    });
    const over = new Error("over the bound");
    await assert.rejects(read(server, () => ({ most: 10_000, over: () => over })), (error) => {
      assert.equal(error, over);
      return true;
    });
    await serverClosed;
  });

  it("chooses the bound from the body's first two bytes, though they came in two chunks", async () => {
    const server = await serve((socket) =>
      socket.once("data", () => {
        socket.write(
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n",
        );
        // Bytes, not text: "\x8b" written as a string would go as UTF-8, two bytes.
        socket.write(Buffer.from("1\r\n\x1f\r\n", "latin1"), () =>
          socket.write(Buffer.from("4\r\n\x8babc\r\n0\r\n\r\n", "latin1")));
      })
    );
    const seen: number[][] = [];
    const answer = await read(server, (encoding, first) => {
      seen.push([...first.subarray(0, 2)]);
      return unbounded(encoding, first);
    });
    assert.deepEqual(seen, [[0x1f, 0x8b]]);
    assert.equal(answer.body.length, 5);
  });

  it("joins the values of a header sent twice, as fetch does", async () => {
    const server = await serve(
      answering("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2", "{}"),
    );
    const answer = await read(server);
    assert.equal(answer.headers["set-cookie"], "a=1, b=2");
  });

  it("fails an answer whose connection closes before its end", async () => {
    const server = await serve(
      answering("HTTP/1.1 200 OK\r\nContent-Length: 100", "only part of it", true),
    );
    await assert.rejects(read(server), /the connection closed before the answer's end/);
  });

  it("fails the answer, never throws, for a request node:http refuses to write", async () => {
    const server = await serve(answering("HTTP/1.1 200 OK\r\nContent-Length: 2", "{}"));
    for (const headers of [{ "x-bad": "a\r\nb" }, { "bad name": "a" }]) {
      const reading = transport.read({
        origin: new URL(`http://127.0.0.1:${portOf(server)}`),
        path: "/x",
        method: "GET",
        headers,
        body: undefined,
      }, unbounded);
      await assert.rejects(reading.answer, /header/i);
      reading.cancel();
    }
  });

  it("reads no body of a HEAD or of a 204, and refuses a status outside 200-599", async () => {
    const noContent = await serve(answering("HTTP/1.1 204 No Content"));
    const empty = await read(noContent);
    assert.deepEqual([empty.status, empty.body.length], [204, 0]);
    const head = await serve(answering("HTTP/1.1 200 OK\r\nContent-Length: 10"));
    const headAnswer = await read(head, unbounded, "HEAD");
    assert.deepEqual([headAnswer.status, headAnswer.body.length], [200, 0]);
    const odd = await serve(answering("HTTP/1.1 600 X\r\nContent-Length: 2", "{}"));
    await assert.rejects(read(odd), /HTTP status 600/);
  });
});
