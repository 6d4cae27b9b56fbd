// A call with `maxRetries: 0` is sent once, on every runtime: Deno's and Bun's `fetch` send a
// request again by themselves when the connection closes before any byte of an answer, which the
// client's count of attempts never sees. A loopback server that reads each request whole, counts
// it, and closes the connection without a word stands for a node that applied a write and died
// before answering.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { SearchClient } from "../../search.ts";
import { started, WAYS } from "./bean_ways.ts";

/**
 * A server that reads each request whole, then drops its connection unanswered; `GET /` alone it
 * answers, keeping the connection open, so that a test can leave a used connection in the pool.
 */
interface DroppingServer {
  readonly url: string;
  /** `METHOD /path` of each request read whole, in order. */
  readonly arrived: string[];
  close(): Promise<void>;
}

async function droppingServer(): Promise<DroppingServer> {
  const arrived: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let data = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (data.toString("latin1").startsWith("GET / ") && data.includes("\r\n\r\n")) {
        data = data.subarray(data.indexOf("\r\n\r\n") + 4);
        const info = '{"version":{"number":"2.19.0","distribution":"opensearch"}}';
        socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" +
            `content-length: ${info.length}\r\nconnection: keep-alive\r\n\r\n${info}`,
        );
        return;
      }
      const head = data.indexOf("\r\n\r\n");
      if (head < 0) return;
      const lines = data.subarray(0, head).toString("latin1").split("\r\n");
      const header = (name: string) =>
        lines.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1)
          .trim();
      const rest = data.subarray(head + 4);
      const length = Number(header("content-length") ?? 0);
      const whole = /chunked/i.test(header("transfer-encoding") ?? "")
        ? rest.includes("0\r\n\r\n") && rest.subarray(rest.length - 5).toString() === "0\r\n\r\n"
        : rest.length >= length;
      if (!whole) return;
      const [method, path] = lines[0].split(" ");
      arrived.push(`${method} ${path}`);
      // No answer at all: the node read the request (and may have applied it), then went away.
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    arrived,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The error a call failed with; fails the test when it succeeded. */
async function failure(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof Error, String(error));
    return error;
  }
  assert.fail("the call succeeded; the server answers nothing");
}

// Each call, with the request it must be, once.
const CALLS: readonly {
  readonly name: string;
  readonly sent: string;
  call(client: SearchClient, options: { maxRetries?: number }): Promise<unknown>;
}[] = [
  {
    name: "a write with a body (POST)",
    sent: "POST /orders/_doc",
    call: (client, options) => client.index({ index: "orders", body: { n: 1 } }, options),
  },
  {
    name: "a write with a body (PUT)",
    sent: "PUT /orders/_doc/1",
    call: (client, options) => client.index({ index: "orders", id: "1", body: { n: 1 } }, options),
  },
  {
    name: "a write without a body (DELETE)",
    sent: "DELETE /orders/_doc/1",
    call: (client, options) => client.delete({ index: "orders", id: "1" }, options),
  },
  {
    name: "a read (GET)",
    sent: "GET /orders/_doc/1",
    call: (client, options) => client.get({ index: "orders", id: "1" }, options),
  },
  {
    name: "a read (HEAD)",
    sent: "HEAD /orders",
    call: (client, options) => client.indices.exists({ index: "orders" }, options),
  },
];

describe("a call with maxRetries: 0 on a node that drops the connection unanswered", () => {
  let server: DroppingServer;
  before(async () => {
    server = await droppingServer();
  });
  after(async () => {
    await server?.close();
  });

  for (const way of WAYS) {
    for (const { name, sent, call } of CALLS) {
      it(`sends ${name} once and fails (${way.name})`, async () => {
        const app = await started({ hosts: server.url }, way);
        try {
          server.arrived.length = 0;
          const error = await failure(call(app.getBean(SearchClient), { maxRetries: 0 }));
          assert.equal(error.name, "ConnectionError", error.message);
          // Any request the runtime sent again was read before the call failed: the call fails
          // only once the connection it was last sent on closed.
          assert.deepEqual(server.arrived, [sent]);
        } finally {
          await app.close();
        }
      });

      it(`sends ${name} once and fails after a call answered (${way.name})`, async () => {
        const app = await started({ hosts: server.url }, way);
        try {
          const client = app.getBean(SearchClient);
          // Leaves a connection that answered in the runtime's pool: the runtimes send again
          // more readily on one of those.
          assert.equal((await client.info()).statusCode, 200);
          server.arrived.length = 0;
          const error = await failure(call(client, { maxRetries: 0 }));
          assert.equal(error.name, "ConnectionError", error.message);
          assert.deepEqual(server.arrived, [sent]);
        } finally {
          await app.close();
        }
      });
    }

    it(`sends once where the entry says max_retries: 0 (${way.name})`, async () => {
      const app = await started({ hosts: server.url, max_retries: 0 }, way);
      try {
        server.arrived.length = 0;
        const client = app.getBean(SearchClient);
        await failure(client.index({ index: "orders", body: { n: 1 } }));
        await failure(client.get({ index: "orders", id: "1" }));
        assert.deepEqual(server.arrived, ["POST /orders/_doc", "GET /orders/_doc/1"]);
      } finally {
        await app.close();
      }
    });
  }
});
