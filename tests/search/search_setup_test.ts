// bootstrap({ search: search() }) end to end against the real node: the connections as beans of
// the official client (by name, the primary by class), what the client does through them (index,
// search, bulk, scroll), the runner's authentication (basic, bearer, SigV4) seen by a loopback
// host in front of the node, a node that is down when the app starts, and no secret in an error.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Application,
  Autowired,
  bootstrap,
  ConfigError,
  PreDestroy,
  Service,
} from "../../mod.ts";
import { search, SearchClient } from "../../search.ts";
import { OPENSEARCH_URL } from "../migrate/search/cluster.ts";
import { type AuthReceived, startAuthServer } from "../migrate/search/auth_server.ts";
import { tcpProxy } from "../sql/tcp_proxy.ts";
import { serveLoopback } from "../migrate/search/loopback_server.ts";

const index = (what: string) =>
  `thaw-bean-${what}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

// A give-up, not a timing: a promise that never settles fails the test rather than hang the file.
async function settled(promise: Promise<unknown>): Promise<string> {
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  return await Promise.race([
    promise.then(() => "settled"),
    new Promise<string>((resolve) => {
      giveUp = setTimeout(() => resolve("never settled"), 30_000);
    }),
  ]).finally(() => clearTimeout(giveUp));
}

async function started(
  entries: Record<string, unknown>[],
  components: (new () => unknown)[] = [],
): Promise<Application> {
  return await bootstrap({ config: { search: entries }, components, search: search() });
}

describe("bootstrap({ search: search() })", () => {
  it("makes each connection a bean by its name, the primary one by class too", async () => {
    @Service()
    class Catalog {
      @Autowired(SearchClient)
      primary!: SearchClient;
      @Autowired("logs")
      logs!: SearchClient;
    }
    const app = await started([
      { name: "main", hosts: OPENSEARCH_URL, primary: true },
      { name: "logs", hosts: [OPENSEARCH_URL] },
    ], [Catalog]);
    try {
      const catalog = app.getBean(Catalog);
      assert.equal(catalog.primary, app.getBean("main"));
      assert.equal(catalog.logs, app.getBean("logs"));
      assert.notEqual(catalog.primary, catalog.logs);
      assert.ok(catalog.primary instanceof SearchClient);
      const info = await catalog.logs.info();
      assert.equal(info.statusCode, 200);
      assert.equal(typeof info.body.version.number, "string");
    } finally {
      await app.close();
    }
  });

  it("indexes then searches, bulks and scrolls through the bean", async () => {
    const app = await started([{ name: "main", hosts: OPENSEARCH_URL }]);
    const client = app.getBean(SearchClient);
    const name = index("crud");
    try {
      await client.index({ index: name, id: "1", body: { title: "red apple" }, refresh: true });
      const found = await client.search({
        index: name,
        body: { query: { match: { title: "apple" } } },
      });
      assert.deepEqual(found.body.hits.hits.map((h) => h._id), ["1"]);
      const bulk = await client.bulk({
        refresh: true,
        body: [2, 3, 4, 5].flatMap((id) => [
          { index: { _index: name, _id: String(id) } },
          { title: `pear ${id}` },
        ]),
      });
      assert.equal(bulk.body.errors, false);
      assert.equal((await client.count({ index: name })).body.count, 5);
      const seen: string[] = [];
      let page = await client.search({
        index: name,
        scroll: "1m",
        size: 2,
        body: { sort: ["_doc"] },
      });
      while (page.body.hits.hits.length > 0) {
        seen.push(...page.body.hits.hits.map((h) => h._id as string));
        page = await client.scroll({ scroll_id: page.body._scroll_id!, scroll: "1m" });
      }
      await client.clearScroll({ scroll_id: page.body._scroll_id! });
      assert.deepEqual(seen.sort(), ["1", "2", "3", "4", "5"]);
      const missing = await client.get({ index: name, id: "nope" }, { ignore: [404] });
      assert.equal(missing.statusCode, 404);
      // Asked for as a stream, the body is one.
      const streamed = await client.get({ index: name, id: "1" }, { asStream: true });
      let text = "";
      for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) {
        text += new TextDecoder().decode(chunk);
      }
      assert.equal(JSON.parse(text)._source.title, "red apple");
    } finally {
      await client.indices.delete({ index: name }, { ignore: [404] });
      await app.close();
    }
  });

  for (
    const [method, settings, header] of [
      [
        "basic",
        { username: "reader", password: "pw-of-the-reader" },
        `Basic ${btoa("reader:pw-of-the-reader")}`,
      ],
      ["bearer", { bearer_token: "tok-123-secret" }, "Bearer tok-123-secret"],
    ] as const
  ) {
    it(`authenticates with ${method} as the runner does, and no error shows the secret`, async () => {
      const server = await startAuthServer(OPENSEARCH_URL, {
        answer: (r: AuthReceived) =>
          r.headers.authorization === header ? "forward" : {
            status: 401,
            // A server that echoes what it was sent.
            body: { error: `refused ${r.headers.authorization}`, seen: settings },
          },
      });
      const good = await started([{ name: "main", hosts: server.url, ...settings }]);
      const bad = await started([{
        name: "main",
        hosts: server.url,
        ...(method === "basic"
          ? { username: "reader", password: "wrong-password-1" }
          : { bearer_token: "wrong-token-456" }),
      }]);
      try {
        const info = await good.getBean(SearchClient).info();
        assert.equal(info.statusCode, 200);
        assert.equal(server.received.at(-1)?.headers.authorization, header);
        const error = await bad.getBean(SearchClient).info().then(
          () => assert.fail("a wrong secret was accepted"),
          (e: Error & { meta?: unknown }) => e,
        );
        assert.equal((error as { meta?: { statusCode?: number } }).meta?.statusCode, 401);
        const said = `${error.message} ${JSON.stringify((error as { meta?: unknown }).meta)}`;
        for (
          const secret of ["wrong-password-1", "wrong-token-456", btoa("reader:wrong-password-1")]
        ) {
          assert.ok(!said.includes(secret), `${secret} in ${said}`);
        }
        assert.match(said, /\*\*\*/);
      } finally {
        await good.close();
        await bad.close();
        await server.close();
      }
    });
  }

  it("signs with SigV4 as the runner does, checked by an independent verifier", async () => {
    const server = await startAuthServer(OPENSEARCH_URL, {
      sigv4: {
        region: "eu-west-1",
        service: "es",
        keys: new Map([["AKIDEXAMPLEBEAN", { secretAccessKey: "bean-secret-key-0123456789" }]]),
      },
    });
    const app = await started([{
      name: "aws",
      hosts: server.url,
      aws_sigv4: {
        region: "eu-west-1",
        access_key_id: "AKIDEXAMPLEBEAN",
        secret_access_key: "bean-secret-key-0123456789",
      },
    }]);
    const name = index("sigv4");
    const client = app.getBean(SearchClient);
    try {
      await client.index({ index: name, id: "a b", body: { title: "signed" }, refresh: true });
      const found = await client.search({ index: name, q: "title:signed", size: 5 });
      assert.equal(found.body.hits.hits.length, 1);
      assert.ok(server.received.length >= 2);
      for (const r of server.received) assert.equal(r.refused, undefined, `${r.method} ${r.path}`);
    } finally {
      await client.indices.delete({ index: name }, { ignore: [404] });
      await app.close();
      await server.close();
    }
  });

  it("starts while the node is down; each call fails naming the connection until it is back", async () => {
    const { port } = new URL(OPENSEARCH_URL);
    const proxy = await tcpProxy("127.0.0.1", Number(port));
    const app = await started([{ name: "flaky", hosts: `http://127.0.0.1:${proxy.port}` }]);
    try {
      const client = app.getBean(SearchClient);
      const error = await client.info().then(
        () => assert.fail("a node that is down answered"),
        (e: Error) => e,
      );
      assert.equal(error.name, "ConnectionError");
      assert.ok(
        error.message.startsWith(`search connection "flaky": http://127.0.0.1:${proxy.port}: `),
        error.message,
      );
      await proxy.up();
      const info = await client.info();
      assert.equal(info.statusCode, 200);
    } finally {
      await app.close();
      await proxy.down();
    }
  });

  it("gives up on a request the node does not answer within the entry's timeout", async () => {
    const { port } = new URL(OPENSEARCH_URL);
    const proxy = await tcpProxy("127.0.0.1", Number(port));
    await proxy.up();
    const app = await started([{
      name: "slow",
      hosts: `http://127.0.0.1:${proxy.port}`,
      timeout: 1,
    }]);
    try {
      const client = app.getBean(SearchClient);
      assert.equal((await client.info()).statusCode, 200);
      proxy.hold();
      const error = await client.info({}, { maxRetries: 0 }).then(
        () => assert.fail("a node that does not answer answered"),
        (e: Error) => e,
      );
      assert.equal(error.name, "TimeoutError");
      proxy.release();
    } finally {
      await app.close();
      await proxy.down();
    }
  });

  it("sends a request again after a 503 as often as max_retries says", async () => {
    let received = 0;
    const server = await serveLoopback((_req, res) => {
      received++;
      res.writeHead(503, { "content-type": "application/json" }).end('{"error":"busy"}');
      return Promise.resolve();
    });
    try {
      for (const [retries, sent] of [[undefined, 4], [0, 1], [1, 2]] as const) {
        received = 0;
        const app = await started([{
          name: "busy",
          hosts: server.url,
          ...(retries === undefined ? {} : { max_retries: retries }),
        }]);
        try {
          await assert.rejects(app.getBean(SearchClient).info(), /busy|503/);
          assert.equal(received, sent, `max_retries ${retries}`);
        } finally {
          await app.close();
        }
      }
      await assert.rejects(
        started([{ name: "busy", hosts: server.url, max_retries: -1 }]),
        /search\[0\]\.max_retries must be a whole number from 0 to 100, got -1/,
      );
    } finally {
      await server.close();
    }
  });

  it("sends a path that starts with // to the connection's host, with its credentials", async () => {
    const paths: string[] = [];
    const server = await serveLoopback((req, res) => {
      paths.push(`${req.headers.authorization} ${req.url}`);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return Promise.resolve();
    });
    const app = await started([{ name: "main", hosts: server.url, bearer_token: "tok-of-main" }]);
    try {
      const client = app.getBean(SearchClient);
      // Resolved as a URL against the host, this one would name the host elsewhere.invalid.
      await client.transport.request({ method: "GET", path: "//elsewhere.invalid/_search" });
      // Here, not there (Bun's fetch sends the path with one slash).
      assert.equal(paths.length, 1);
      assert.match(paths[0], /^Bearer tok-of-main \/\/?elsewhere\.invalid\/_search$/);
    } finally {
      await app.close();
      await server.close();
    }
  });

  it("closes the client after the beans that use it", async () => {
    const order: string[] = [];
    @Service()
    class Writer {
      @Autowired(SearchClient)
      client!: SearchClient;
      @PreDestroy()
      async onClose(): Promise<void> {
        // Still usable while its users close.
        order.push(`writer ${(await this.client.ping()).statusCode}`);
      }
    }
    const app = await started([{ name: "main", hosts: OPENSEARCH_URL }], [Writer]);
    const client = app.getBean(SearchClient);
    await app.close();
    assert.deepEqual(order, ["writer 200"]);
    await assert.rejects(client.ping(), /./);
  });

  it("leaves the bean's connections open when a child of it closes, and closes the app", async () => {
    const app = await started([{ name: "main", hosts: OPENSEARCH_URL }]);
    const client = app.getBean(SearchClient);
    // Children share the bean's pool: closing one must neither end the bean's connections nor
    // leave the container's close of the bean waiting on a pool already emptied.
    const child = client.child({ headers: { "x-tenant": "a" } });
    const grandchild = child.child({ headers: { "x-tenant": "b" } });
    assert.equal((await child.ping()).statusCode, 200);
    assert.equal(await settled(child.close()), "settled");
    assert.equal(
      await settled(
        new Promise<void>((resolve, reject) =>
          grandchild.close((error: unknown) => error == null ? resolve() : reject(error))
        ),
      ),
      "settled",
    );
    assert.equal((await client.ping()).statusCode, 200);
    assert.equal((await child.ping()).statusCode, 200);
    assert.equal((await grandchild.ping()).statusCode, 200);
    assert.equal(await settled(app.close()), "settled");
    await assert.rejects(client.ping(), /./);
    await assert.rejects(child.ping(), /./);
  });

  it("reads the list under opensearch: too, as the runner does", async () => {
    const app = await bootstrap({
      config: { opensearch: [{ name: "legacy", hosts: OPENSEARCH_URL }] },
      search: search(),
    });
    try {
      assert.equal(app.getBean(SearchClient), app.getBean("legacy"));
      assert.equal((await app.getBean(SearchClient).ping()).statusCode, 200);
    } finally {
      await app.close();
    }
  });

  it("refuses a configuration without a search list, or with no primary among several", async () => {
    await assert.rejects(
      bootstrap({ config: {}, search: search() }),
      (e: Error) => e instanceof ConfigError && /add a search: list/.test(e.message),
    );
    await assert.rejects(
      started([{ name: "a", hosts: OPENSEARCH_URL }, { name: "b", hosts: OPENSEARCH_URL }]),
      (e: Error) => e instanceof ConfigError && /"a", "b": none is primary: true/.test(e.message),
    );
    assert.throws(
      () => search({ migrations: "x" } as never),
      /search\(options\): unknown option "migrations"/,
    );
    assert.throws(() => search({ drift: true }), /give migrate too/);
    assert.throws(() => search([] as never), {
      name: "TypeError",
      message: "search(options): the options must be an object, got an array",
    });
  });
});
