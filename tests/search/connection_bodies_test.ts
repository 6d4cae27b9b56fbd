// What a SearchClient bean's connection does with bodies, on every runtime's transport: a GET
// with a body, a request body compressed with gzip, an answer compressed with gzip, a body that
// stalls after its headers, and an answer larger than the client reads. The real node where the
// behaviour is the server's; loopback servers for the faults.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { gunzipSync, gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import type { Application } from "../../mod.ts";
import { SearchClient } from "../../search.ts";
import { started, WAYS } from "./bean_ways.ts";
import { OPENSEARCH_URL } from "../migrate/search/cluster.ts";
import { type LoopbackServer, serveLoopback } from "../migrate/search/loopback_server.ts";

// A give-up for a call that must settle: a test that fails rather than hangs.
async function settled<T>(call: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const never = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never settled`)), 120_000);
  });
  try {
    return await Promise.race([call, never]);
  } finally {
    clearTimeout(timer);
  }
}

function nodeStates(client: SearchClient): { status: string; deadCount: number }[] {
  return (client.connectionPool as unknown as {
    connections: { status: string; deadCount: number }[];
  }).connections.map(({ status, deadCount }) => ({ status, deadCount }));
}

describe("a SearchClient bean on the real node", () => {
  const index = `thaw-bean-bodies-${crypto.randomUUID().slice(0, 8)}`;
  let app: Application;
  before(async () => {
    app = await started({ hosts: OPENSEARCH_URL });
    await app.getBean(SearchClient).index({
      index,
      id: "1",
      body: { title: "red apple" },
      refresh: true,
    });
  });
  after(async () => {
    await app?.getBean(SearchClient).indices.delete({ index }, { ignore: [404] });
    await app?.close();
  });

  for (const way of WAYS) {
    it(`sends a GET with a body (${way.name}), and a refusal marks no node dead`, async () => {
      const bean = await started({ hosts: OPENSEARCH_URL }, way);
      try {
        const client = bean.getBean(SearchClient);
        const query = { query: { match: { title: "apple" } } };
        const found = await client.transport.request({
          method: "GET",
          path: `/${index}/_search`,
          body: query,
        });
        assert.equal(found.statusCode, 200);
        assert.equal((found.body as { hits: { total: { value: number } } }).hits.total.value, 1);
        const counted = await client.transport.request({
          method: "GET",
          path: `/${index}/_count`,
          body: query,
        });
        assert.equal((counted.body as { count: number }).count, 1);
        // A GET with a body where no POST reads the same: refused here or by the node, never a
        // node marked dead for it.
        await client.transport.request(
          { method: "GET", path: "/_cluster/health", body: { a: 1 } },
          { maxRetries: 0 },
        ).then(() => {}, (e: Error) => assert.notEqual(e.name, "ConnectionError", e.message));
        assert.deepEqual(nodeStates(client), [{ status: "alive", deadCount: 0 }]);
      } finally {
        await bean.close();
      }
    });

    it(`indexes a body compressed with gzip and reads it back equal (${way.name})`, async () => {
      const bean = await started({ hosts: OPENSEARCH_URL }, way);
      try {
        const client = bean.getBean(SearchClient);
        const doc = { title: "crème brûlée, 日本語, emoji 🍏, ünïcödé" };
        await client.index({ index, id: "gz", body: doc, refresh: true }, { compression: "gzip" });
        const read = await client.get({ index, id: "gz" });
        assert.deepEqual(read.body._source, doc);
        const gzipped = client.child({ compression: "gzip" });
        await gzipped.index({ index, id: "gz2", body: doc, refresh: true });
        assert.deepEqual((await client.get({ index, id: "gz2" })).body._source, doc);
      } finally {
        await bean.close();
      }
    });
  }
});

describe("a SearchClient bean in front of loopback servers", () => {
  let received: { encoding: string | undefined; body: Buffer }[];
  let gzipServer: LoopbackServer;
  let stallServer: LoopbackServer;
  let hugeServer: LoopbackServer;
  let openServer: LoopbackServer;
  before(async () => {
    // Answers every request compressed as it says, and keeps what it received.
    gzipServer = await serveLoopback(async (req, res, body) => {
      received.push({ encoding: req.headers["content-encoding"], body });
      const answer = req.url?.includes("huge") === true
        ? Buffer.from(JSON.stringify({ a: "a".repeat(4 * 1024 * 1024) }))
        // A bomb that starts as gzip starts: once decoded by the transport, its bytes look as
        // if still compressed.
        : req.url?.includes("bomb") === true
        ? Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(8 * 1024 * 1024)])
        : Buffer.from(JSON.stringify({ name: "gz-node", text: "déjà vu ✓" }));
      const deflate = req.url?.includes("deflate") === true;
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": deflate ? "deflate" : "gzip",
      });
      res.end(deflate ? (await import("node:zlib")).deflateSync(answer) : gzipSync(answer));
    });
    // Sends its headers and half of the body it announces, then nothing.
    stallServer = await serveLoopback(async (req, res) => {
      // With a length, or chunked (read as a stream, with no length to go by).
      res.writeHead(
        200,
        req.url === "/chunked"
          ? { "content-type": "application/json" }
          : { "content-type": "application/json", "content-length": "100" },
      );
      res.write('{"half":"' + "x".repeat(40));
      await Promise.resolve();
    });
    // Streams a chunked body of 4 MiB, no length said.
    hugeServer = await serveLoopback(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, "a".charCodeAt(0));
      res.write('{"a":"');
      for (let i = 0; i < 64; i++) {
        if (!res.write(chunk)) await new Promise((r) => res.once("drain", r));
        if (res.destroyed) return;
      }
      res.end('"}');
    });
    // Sends 1 MiB of its body, with or without a length, then holds the connection: an answer
    // that has not ended (a node still sending, or a hostile one) while over the client's bound.
    openServer = await serveLoopback(async (req, res) => {
      const size = 1024 * 1024;
      res.writeHead(
        200,
        req.url === "/chunked"
          ? { "content-type": "application/json" }
          : { "content-type": "application/json", "content-length": String(2 * size) },
      );
      res.write(Buffer.alloc(size, "a".charCodeAt(0)));
      await Promise.resolve();
    });
  });
  after(async () => {
    await Promise.all([
      gzipServer?.close(),
      stallServer?.close(),
      hugeServer?.close(),
      openServer?.close(),
    ]);
  });

  for (const way of WAYS) {
    it(`reads an answer compressed with gzip or deflate (${way.name})`, async () => {
      received = [];
      const bean = await started({ hosts: gzipServer.url }, way);
      try {
        const client = bean.getBean(SearchClient);
        const info = await client.info();
        assert.deepEqual(info.body, { name: "gz-node", text: "déjà vu ✓" });
        const deflated = await client.transport.request({ method: "GET", path: "/deflate" });
        assert.deepEqual(deflated.body, { name: "gz-node", text: "déjà vu ✓" });
      } finally {
        await bean.close();
      }
    });

    it(`sends a body compressed with gzip that gunzips to the JSON given (${way.name})`, async () => {
      received = [];
      const bean = await started({ hosts: gzipServer.url }, way);
      try {
        const doc = { title: "crème brûlée 🍏", n: 1 };
        await bean.getBean(SearchClient).index({ index: "x", id: "1", body: doc }, {
          compression: "gzip",
        });
        assert.equal(received.length, 1);
        assert.equal(received[0].encoding, "gzip");
        assert.deepEqual(JSON.parse(gunzipSync(received[0].body).toString("utf8")), doc);
      } finally {
        await bean.close();
      }
    });

    it(`gives up on a body that stalls after its headers, within the request timeout (${way.name})`, async () => {
      const bean = await started({ hosts: stallServer.url }, way);
      try {
        const client = bean.getBean(SearchClient);
        for (const [path, asStream] of [["/", false], ["/", true], ["/chunked", false]] as const) {
          const error = await settled(
            client.transport.request({ method: "GET", path }, {
              requestTimeout: 300,
              maxRetries: 0,
              asStream,
            }).then(() => assert.fail("a stalled body was read"), (e: Error) => e),
            "a request whose body stalls",
          );
          assert.equal(error.name, "TimeoutError", error.message);
        }
      } finally {
        await bean.close();
      }
    });

    it(`fails inside the call on an answer over maxResponseSize (${way.name})`, async () => {
      const bean = await started({ hosts: hugeServer.url }, way);
      try {
        const client = bean.getBean(SearchClient);
        for (
          const call of [
            () => client.info({}, { maxResponseSize: 1000 } as never),
            () =>
              client.transport.request({ method: "GET", path: "/" }, {
                maxResponseSize: 100_000,
                asStream: true,
              } as never),
          ]
        ) {
          const error = await settled(
            call().then(() => assert.fail("an answer over the maximum was read"), (e: Error) => e),
            "a request whose answer is over the maximum",
          );
          assert.equal(error.name, "RequestAbortedError", error.message);
          assert.match(error.message, /^search connection "main": .*maxResponseSize/);
        }
        // Compressed, the bound is the decoded size's.
        const gzipped = await started({ hosts: gzipServer.url }, way);
        try {
          // `/bomb`: decoded by the transport into bytes that start as gzip does, still bounded
          // by the decoded size.
          for (const path of ["/huge", "/bomb"]) {
            const error = await settled(
              gzipped.getBean(SearchClient).transport.request(
                { method: "GET", path },
                { maxResponseSize: 1000 } as never,
              ).then(() => assert.fail("an answer over the maximum was read"), (e: Error) => e),
              "a request whose compressed answer is over the maximum",
            );
            assert.equal(error.name, "RequestAbortedError", `${path}: ${error.message}`);
            assert.match(error.message, /^search connection "main": .*maxResponseSize/);
          }
        } finally {
          await gzipped.close();
        }
        // Under the maximum, the same answer is read whole.
        const whole = await client.info({}, { maxResponseSize: 8 * 1024 * 1024 } as never);
        assert.equal((whole.body as unknown as { a: string }).a.length, 4 * 1024 * 1024);
        assert.deepEqual(nodeStates(client), [{ status: "alive", deadCount: 0 }]);
      } finally {
        await bean.close();
      }
    });

    it(`refuses an answer over maxResponseSize before its end comes (${way.name})`, async () => {
      const bean = await started({ hosts: openServer.url }, way);
      try {
        const client = bean.getBean(SearchClient);
        for (const path of ["/", "/chunked"]) {
          // The timeout is a give-up: the bound is passed with the first bytes.
          const error = await settled(
            client.transport.request({ method: "GET", path }, {
              maxResponseSize: 1000,
              requestTimeout: 60_000,
              maxRetries: 0,
            } as never).then(
              () => assert.fail("an answer over the maximum was read"),
              (e: Error) => e,
            ),
            "a request whose unended answer is over the maximum",
          );
          assert.equal(error.name, "RequestAbortedError", `${path}: ${error.message}`);
          assert.match(error.message, /^search connection "main": .*maxResponseSize/);
        }
      } finally {
        await bean.close();
      }
    });
  }
});
