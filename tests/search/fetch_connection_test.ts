// The bean's connection over the runner's transport on real servers: nginx with a self-signed
// certificate and basic auth in front of the node (refused by default, taken with
// ssl_verification: false), and tinyproxy as the entry's forward proxy.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Application, bootstrap } from "../../mod.ts";
import { search, SearchClient } from "../../search.ts";
import { OPENSEARCH_URL } from "../migrate/search/cluster.ts";
import { type Helper, startForwardProxy, startTlsProxy } from "../migrate/search/servers.ts";
import { RUNTIME } from "../runtime.ts";
import { type LoopbackServer, serveLoopback } from "../migrate/search/loopback_server.ts";

const PASSWORD = "bean-Pa55word-long";

async function started(entry: Record<string, unknown>): Promise<Application> {
  return await bootstrap({ config: { search: [{ name: "main", ...entry }] }, search: search() });
}

describe("a SearchClient bean through TLS and a proxy", () => {
  let tls: Helper & { cert: string };
  let proxy: Helper & { log(): Promise<string> };
  before(async () => {
    tls = await startTlsProxy(OPENSEARCH_URL, "admin", PASSWORD);
    proxy = await startForwardProxy();
  });
  after(async () => {
    await Promise.all([tls?.stop(), proxy?.stop()]);
  });

  it("refuses a self-signed certificate by default, and takes it with ssl_verification: false", async () => {
    const strict = await started({ hosts: tls.url, username: "admin", password: PASSWORD });
    const relaxed = await started({
      hosts: tls.url,
      username: "admin",
      password: PASSWORD,
      ssl_verification: false,
    });
    try {
      const error = await strict.getBean(SearchClient).info({}, { maxRetries: 0 }).then(
        () => assert.fail("a self-signed certificate was taken"),
        (e: Error) => e,
      );
      assert.equal(error.name, "ConnectionError");
      assert.match(error.message, /^search connection "main": https:\/\/127\.0\.0\.1:\d+: /);
      assert.match(error.message, /certificate|self.signed|UnknownIssuer|unable to verify/i);
      assert.ok(!error.message.includes(PASSWORD));
      assert.equal((await relaxed.getBean(SearchClient).info()).statusCode, 200);
    } finally {
      await strict.close();
      await relaxed.close();
    }
  });

  it("sends through the entry's forward proxy", async () => {
    const app = await started({ hosts: OPENSEARCH_URL, proxy: proxy.url });
    try {
      const marker = `thaw-bean-proxy-${crypto.randomUUID().slice(0, 8)}`;
      const found = await app.getBean(SearchClient).indices.exists({ index: marker });
      assert.equal(found.body, false);
      // Deno and Bun forward plain-HTTP requests by absolute URL; Node's undici always tunnels.
      const { host } = new URL(OPENSEARCH_URL);
      const through = RUNTIME === "node"
        ? new RegExp(`CONNECT ${host.replaceAll(".", "\\.")} `)
        : new RegExp(`/${marker}`);
      assert.match(await proxy.log(), through);
    } finally {
      await app.close();
    }
  });
});

describe("what a SearchClient bean sends", () => {
  interface Received {
    readonly method: string;
    readonly url: string;
    readonly body: string;
  }
  let received: Received[];
  let server: LoopbackServer;
  before(async () => {
    server = await serveLoopback(async (req, res, body) => {
      received.push({ method: req.method ?? "", url: req.url ?? "", body: body.toString() });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ acknowledged: true, succeeded: true, num_freed: 1 }));
      await Promise.resolve();
    });
  });
  after(async () => {
    await server?.close();
  });

  it("refuses a path segment . or .., which the URL would read as a step up, and sends nothing", async () => {
    received = [];
    const app = await started({ hosts: server.url });
    try {
      const client = app.getBean(SearchClient);
      for (
        const call of [
          () => client.delete({ index: "products", id: ".." }),
          () => client.get({ index: "products", id: "." }),
          () => client.search({ index: ".." }),
          () => client.transport.request({ method: "DELETE", path: "/products/_doc/.%2E" }),
        ]
      ) {
        const error = await call().then(
          () => assert.fail("a request with a dot segment was sent"),
          (e: Error) => e,
        );
        assert.equal(error.name, "RequestAbortedError", error.message);
        assert.match(error.message, /^search connection "main": .* \. or \.\./);
      }
      assert.deepEqual(received, []);
    } finally {
      await app.close();
    }
  });

  it("sends a path with a \\ or a # whole: neither a step up nor a cut", async () => {
    received = [];
    const app = await started({ hosts: server.url });
    try {
      const client = app.getBean(SearchClient);
      await client.transport.request({ method: "DELETE", path: "/products/_doc/..\\x" });
      await client.transport.request({ method: "GET", path: "/products/_doc/a#b" });
      assert.deepEqual(received.map(({ method, url }) => ({ method, url })), [
        { method: "DELETE", url: "/products/_doc/..%5Cx" },
        { method: "GET", url: "/products/_doc/a%23b" },
      ]);
    } finally {
      await app.close();
    }
  });

  it("sends a path as a URL writes it, and fails a call with a header it cannot send", async () => {
    received = [];
    const app = await started({ hosts: server.url });
    try {
      const client = app.getBean(SearchClient);
      await client.transport.request({ method: "GET", path: "/products/_doc/a{b}\u00e9" });
      assert.deepEqual(received.map(({ url }) => url), ["/products/_doc/a%7Bb%7D%C3%A9"]);
      const unwritable = {
        toString(): string {
          throw new Error("a value with no text");
        },
      };
      for (const value of ["a\r\nb", unwritable]) {
        const error = await client.transport.request(
          { method: "GET", path: "/products/_doc/1" },
          { headers: { "x-odd": value as string }, maxRetries: 0 },
        ).then(() => assert.fail("a header that cannot be sent was sent"), (e: Error) => e);
        assert.ok(error instanceof Error, String(error));
      }
      assert.equal(received.length, 1, "nothing more was sent");
    } finally {
      await app.close();
    }
  });

  it("sends the body of a DELETE whole, and the next request on the connection is its own", async () => {
    received = [];
    const app = await started({ hosts: server.url });
    try {
      const client = app.getBean(SearchClient);
      await client.deletePit({ body: { pit_id: ["pit-a"] } });
      await client.clearScroll({ body: { scroll_id: ["scroll-b"] } });
      await client.info();
      assert.deepEqual(received.map(({ method, body }) => ({ method, body })), [
        { method: "DELETE", body: '{"pit_id":["pit-a"]}' },
        { method: "DELETE", body: '{"scroll_id":["scroll-b"]}' },
        { method: "GET", body: "" },
      ]);
      assert.equal(received[2].url, "/");
    } finally {
      await app.close();
    }
  });
});

describe("a SearchClient bean's connection that fails before sending", () => {
  it("calls the client back later, never inside request(), so that a retry keeps its own handle", async () => {
    const { Connection, errors } = await import("@opensearch-project/opensearch");
    const { fetchConnectionClass } = await import("../../src/search/fetch_connection.ts");
    const ConnectionClass = fetchConnectionClass({ Connection, errors }, {
      name: "main",
      transport: {
        fetch() {
          throw new TypeError("refused at once");
        },
        close() {},
      },
      auth: undefined,
      mask: (text: string) => text,
    });
    const connection = new ConnectionClass({ url: new URL("http://127.0.0.1:9") });
    const unwritable = {
      toString(): string {
        throw new Error("a value with no text");
      },
    };
    // The first request waits for the connection's fixed headers; the second, sent at once,
    // fails inside request() itself (fetch throws); the third has a header with no text.
    for (const headers of [{}, {}, { "x-odd": unwritable }]) {
      let returned = false;
      const error = await new Promise<unknown>((resolve) => {
        connection.request(
          { method: "GET", path: "/x", headers } as never,
          (e: unknown) => resolve(returned ? e : new Error("called back inside request()")),
        );
        returned = true;
      });
      assert.ok(error instanceof errors.ConnectionError, String(error));
    }
  });
});

describe("a SearchClient bean's connection whose mask throws", () => {
  it("ends the call with a ConnectionError that shows no unmasked text, plain or compressed", async () => {
    const { Connection, errors } = await import("@opensearch-project/opensearch");
    const { fetchConnectionClass } = await import("../../src/search/fetch_connection.ts");
    const { gzipSync } = await import("node:zlib");
    const text = "no such index [secret]";
    const bodies: [string, Record<string, string>, Uint8Array<ArrayBuffer>][] = [
      ["plain", {}, new TextEncoder().encode(text)],
      ["gzip", { "content-encoding": "gzip" }, new Uint8Array(gzipSync(text))],
    ];
    for (const [kind, headers, body] of bodies) {
      const ConnectionClass = fetchConnectionClass({ Connection, errors }, {
        name: "main",
        transport: {
          // A Response made here is not decoded by the runtime: a gzip body reaches the bean's
          // own decoding, as a node:http answer does.
          fetch: () => Promise.resolve(new Response(body, { status: 500, headers })),
          close() {},
        },
        auth: undefined,
        mask: () => {
          throw new Error("the mask broke");
        },
      });
      const connection = new ConnectionClass({ url: new URL("http://127.0.0.1:9") });
      const error = await new Promise<unknown>((resolve) => {
        connection.request(
          { method: "GET", path: "/x", headers: {}, timeout: 30_000 } as never,
          (e: unknown) => resolve(e),
        );
      });
      assert.ok(error instanceof errors.ConnectionError, `${kind}: ${error}`);
      assert.match(error.message, /"main": http:\/\/127\.0\.0\.1:9: .*could not be masked/, kind);
      assert.doesNotMatch(error.message, /secret/, kind);
    }
  });
});
