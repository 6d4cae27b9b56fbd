// The node:http(s) transport (Node's default for the search runner, and Deno's and Bun's for
// `ssl_verification: false` / `proxy: false`) against hosts that answer what a cluster never
// should: every request settles, as an answer or a clear error, and only a connection that was
// never made counts as "never sent".
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createServer, type Server, type Socket } from "node:net";
import { nodeHttpTransport } from "../../../../src/migrate/search/http/node_http_transport.ts";
import { neverSent } from "../../../../src/migrate/search/http/send_failure.ts";

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

describe("node:http transport against odd hosts", () => {
  const servers: Server[] = [];
  // Local hosts that accept at once: a connect timeout they beat even on a loaded machine.
  const transport = nodeHttpTransport({
    sslVerification: false,
    proxy: undefined,
    connectTimeoutMs: 5000,
  });
  // For the handshake that never ends, whose connect timeout is under test: a transport of its own.
  const shortConnect = nodeHttpTransport({
    sslVerification: false,
    proxy: undefined,
    connectTimeoutMs: 300,
  });
  const serve = async (onConnection: (socket: Socket) => void) => {
    const server = await rawServer(onConnection);
    servers.push(server);
    return server;
  };
  after(() => {
    transport.close();
    shortConnect.close();
    for (const server of servers) {
      server.close();
      // Connections the tests left open (the silent TLS host) would keep the server alive.
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    }
  });

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
