import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type FaultServer, startFaultServer } from "../fault_server.ts";
import { freePort, startForwardProxy } from "../servers.ts";
import { RUNTIME } from "../../../runtime.ts";
import { SearchClient } from "../../../../src/migrate/search/http/search_client.ts";
import { runtimeTransport } from "../../../../src/migrate/search/http/transport.ts";

// Two hosts of one cluster: a request the first host forwarded may be applied even though its
// answer never came back. Only what provably never left, or what is safe to repeat, goes to the
// next host.
describe("failover between the hosts of one cluster", () => {
  let swallowing: FaultServer;
  before(async () => {
    // Forwards every request to the node; never answers a write to a name with "-lost" in it.
    swallowing = await startFaultServer(OPENSEARCH_URL, (r) => {
      const read = r.method === "GET" || r.method === "HEAD" || r.path.includes("/_search");
      return !read && r.path.includes("-lost") ? "swallow" : "forward";
    });
  });
  after(() => swallowing.close());

  // One file: a POST of a document without id, which applied twice makes two documents.
  async function postWorkspace(hosts: string[]): Promise<Workspace> {
    const ws = await Workspace.create({ hosts, settings: "    timeout: 10\n" });
    await os("PUT", `/${ws.id}-lost-docs`, { settings: { number_of_replicas: 0 } });
    await ws.file("001-doc.json", { method: "POST", path: `/${ws.id}-lost-docs/_doc`, body: {} });
    return ws;
  }

  async function docCount(index: string): Promise<number> {
    await os("POST", `/${index}/_refresh`);
    return (await os("GET", `/${index}/_count`)).body.count;
  }

  it("does not send a POST again to the next host after the first timed out: exit 1, applied once, said so", async () => {
    await using ws = await postWorkspace([swallowing.url, OPENSEARCH_URL]);
    const run = await ws.run("--json");
    assert.equal(run.code, 1, run.out);
    const error = run.report!.error!;
    assert.equal(error.file, "001-doc.json");
    assert.match(error.message, new RegExp(`${swallowing.url.replaceAll(".", "\\.")}`));
    assert.match(error.message, /may or may not have been applied/);
    assert.equal(await docCount(`${ws.id}-lost-docs`), 1);
    // Not recorded: the next run sends it again, and says which file is in doubt.
    assert.equal(run.report!.connections[0].files[0].result, "failed");
  });

  it("does not create an index twice: a PUT of an index is not repeated", async () => {
    await using ws = await Workspace.create({
      hosts: [swallowing.url, OPENSEARCH_URL],
      settings: "    timeout: 10\n",
    });
    await ws.file(`${ws.id}-lost-users-index.json`, { settings: { number_of_replicas: 0 } });
    const run = await ws.run("--json");
    assert.equal(run.code, 1, run.out);
    assert.match(run.report!.error!.message, /may or may not have been applied/);
    // The first host forwarded the PUT: the index is there, made once.
    assert.equal((await os("HEAD", `/${ws.id}-lost-users`)).status, 200);
  });

  it("repeats on the next host what is safe to repeat: a template upsert and the records", async () => {
    await using ws = await Workspace.create({
      hosts: [swallowing.url, OPENSEARCH_URL],
      settings: "    timeout: 10\n",
    });
    await ws.file(`${ws.id}-lost-a-template.json`, { index_patterns: [`${ws.id}-lost-a*`] });
    const run = await ws.run("--json");
    assert.equal(run.code, 0, run.out + run.err);
    assert.equal(run.report!.connections[0].applied, 1);
    assert.equal((await os("GET", `/_index_template/${ws.id}-lost-a`)).status, 200);
    // The first host took it and said nothing: it may still apply it, later.
    assert.match(
      run.report!.connections[0].files[0].notice ?? "",
      new RegExp(`^${swallowing.url} took this request without answering before another host`),
    );
  });

  it("sends a read once more to the only host when its connection dropped unanswered (a stale kept-alive one)", async () => {
    // A proxy or a load balancer that closed an idle kept-alive connection: the pooled socket is
    // reset when the next request goes out on it (Bun through tinyproxy, seen in CI).
    let resets = 1;
    const dropping = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.path.endsWith("/_search") && resets-- > 0 ? "reset" : "forward",
    );
    try {
      await using ws = await Workspace.create({ hosts: [dropping.url] });
      await ws.file(`${ws.id}-a-template.json`, { index_patterns: [`${ws.id}-a*`] });
      const run = await ws.run("--json");
      assert.equal(run.code, 0, run.out + run.err);
      assert.equal(run.report!.connections[0].applied, 1);

      // Once more, not again and again: a host that drops every read fails after two tries of
      // the client's, each of which Deno's fetch may replay once by itself.
      resets = Infinity;
      const searches = () => dropping.received.filter((r) => r.path.endsWith("/_search")).length;
      const before = searches();
      await using dead = await Workspace.create({ hosts: [dropping.url] });
      await dead.file(`${dead.id}-a-template.json`, { index_patterns: [`${dead.id}-a*`] });
      const failed = await dead.run("--json");
      assert.equal(failed.code, 1, failed.out);
      assert.match(failed.report!.error!.message, /no host of .* answered/);
      assert.ok(searches() - before >= 2 && searches() - before <= 4, `${searches() - before}`);
    } finally {
      await dropping.close();
    }
  });

  /**
   * A proxy that dropped its idle connections without a word: a fault server in front of the
   * node resets each connection it saw before once a request goes out on it. Three reads at once
   * leave three in the pool (reached through `proxy` if given); then all are dead, and one more
   * read must be answered on exactly one new connection: a retry that takes another pooled one
   * fails again. Returns the fault server's URL.
   */
  async function readAfterEveryConnectionDied(proxy: URL | undefined): Promise<string> {
    let deadUpTo = 0;
    const upstream = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.connection <= deadUpTo ? "reset" : "forward",
    );
    await using ws = await Workspace.create({ hosts: [upstream.url] });
    const transport = await runtimeTransport({
      sslVerification: true,
      proxy,
      connectTimeoutMs: 5_000,
    });
    try {
      const client = new SearchClient(ws.connection(upstream.url), transport);
      const reads = await Promise.all([1, 2, 3].map(() => client.send("GET", "/_cluster/health")));
      assert.deepEqual(reads.map((r) => r.status), [200, 200, 200]);
      const pooled = new Set(upstream.received.map((r) => r.connection));
      assert.ok(pooled.size >= 2, `${pooled.size} connection(s) pooled`);
      deadUpTo = Math.max(...pooled);
      const read = await client.send("GET", "/_cluster/health");
      assert.equal(read.status, 200);
      // The dead sockets the runtime tried by itself (Deno's replay, Bun's), then one new one.
      const after = upstream.received.slice(3);
      assert.equal(after.filter((r) => r.connection > deadUpTo).length, 1, JSON.stringify(after));
      assert.ok(after.at(-1)!.connection > deadUpTo, "the last try took a pooled connection");
      return upstream.url;
    } finally {
      transport.close();
      await upstream.close();
    }
  }

  it("sends a read once more on a connection of its own when every pooled one is dead", async () => {
    await readAfterEveryConnectionDied(undefined);
  });

  it("through a forward proxy, answers a read once every connection the proxy held died", async () => {
    // On Node (undici's ProxyAgent) each pooled connection is a CONNECT tunnel to the fault
    // server, and a reset at its end closes the tunnel. Deno and Bun forward plain HTTP by
    // absolute URL, and tinyproxy opens a connection upstream for each request.
    const forwardProxy = await startForwardProxy();
    try {
      const upstream = await readAfterEveryConnectionDied(new URL(forwardProxy.url));
      // Through the proxy, not around it.
      const { host } = new URL(upstream);
      assert.match(
        await forwardProxy.log(),
        RUNTIME === "node"
          ? new RegExp(`CONNECT ${host.replaceAll(".", "\\.")} `)
          : new RegExp(`GET ${upstream.replaceAll(".", "\\.")}/_cluster/health`),
      );
    } finally {
      await forwardProxy.stop();
    }
  });

  it("sends a POST to the next host when the first refused the connection (it never left)", async () => {
    await using ws = await postWorkspace([`http://127.0.0.1:${await freePort()}`, OPENSEARCH_URL]);
    const run = await ws.run("--json");
    assert.equal(run.code, 0, run.out + run.err);
    assert.equal(await docCount(`${ws.id}-lost-docs`), 1);
  });

  it("does not take a slow answer on a kept-alive connection for a connect timeout", async () => {
    // node:http carries these requests on Node (no proxy) and, with proxy: false, on Deno and
    // Bun; connect_timeout is there the socket's idle timeout until it connects. A socket reused
    // from the pool never emits "connect".
    const slow = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        r.method === "POST" && r.path.includes("-late")
          ? { after: new Promise((resolve) => setTimeout(resolve, 2_500)) }
          : "forward",
    );
    try {
      for (const proxy of ["", "    proxy: false\n"]) {
        await using ws = await Workspace.create({
          hosts: [slow.url, OPENSEARCH_URL],
          settings: `    connect_timeout: 1\n    timeout: 10\n${proxy}`,
        });
        await os("PUT", `/${ws.id}-late`, { settings: { number_of_replicas: 0 } });
        await ws.file("001-doc.json", { method: "POST", path: `/${ws.id}-late/_doc`, body: {} });
        const run = await ws.run("--json");
        assert.equal(run.code, 0, `${JSON.stringify(proxy)}: ${run.out}`);
        assert.equal(await docCount(`${ws.id}-late`), 1);
      }
    } finally {
      await slow.close();
    }
  });

  it("takes an answer cut off mid-body like no answer: a read moves on, a POST stops, said so", async () => {
    let cutReads = false;
    const cutting = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        r.path.includes("-cut") || (cutReads && r.path.endsWith("/_search")) ? "cut" : "forward",
    );
    try {
      await using ws = await Workspace.create({ hosts: [cutting.url, OPENSEARCH_URL] });
      await os("PUT", `/${ws.id}-cut`, { settings: { number_of_replicas: 0 } });
      await ws.file("001-doc.json", { method: "POST", path: `/${ws.id}-cut/_doc`, body: {} });
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out);
      assert.equal(run.report!.error!.file, "001-doc.json");
      assert.match(run.report!.error!.message, /may or may not have been applied/);
      assert.equal(await docCount(`${ws.id}-cut`), 1);

      cutReads = true;
      await using reads = await Workspace.create({ hosts: [cutting.url, OPENSEARCH_URL] });
      await reads.file(`${reads.id}-a-template.json`, { index_patterns: [`${reads.id}-a*`] });
      assert.equal((await reads.run("--json")).code, 0);
    } finally {
      await cutting.close();
    }
  });

  it("sends a POST once to a host that takes it and closes the connection unanswered", async () => {
    // Deno's fetch and its node:http replay such a request once on their own
    // (denoland/deno#35610, #36786): the runner must not let them.
    const closing = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.path.includes("-reset") ? { resetAfter: Promise.resolve() } : "forward",
    );
    try {
      for (const settings of ["", "    proxy: false\n"]) {
        await using ws = await Workspace.create({ hosts: [closing.url], settings });
        await os("PUT", `/${ws.id}-reset`, { settings: { number_of_replicas: 0 } });
        await ws.file("001-doc.json", { method: "POST", path: `/${ws.id}-reset/_doc`, body: {} });
        await ws.file("002-refresh.json", { method: "POST", path: `/${ws.id}-reset/_refresh` });
        const run = await ws.run("--json");
        assert.equal(run.code, 1, run.out);
        assert.match(run.report!.error!.message, /may or may not have been applied/);
        const posts = closing.received.filter((r) => r.path === `/${ws.id}-reset/_doc`);
        assert.equal(
          posts.length,
          1,
          `settings ${JSON.stringify(settings)}: sent ${posts.length}x`,
        );
        assert.equal(await docCount(`${ws.id}-reset`), 1);
      }
    } finally {
      await closing.close();
    }
  });

  it("sends a body-less envelope POST as well, once it gets through", async () => {
    await using ws = await Workspace.create();
    await os("PUT", `/${ws.id}-plain`, { settings: { number_of_replicas: 0 } });
    await ws.file("001-refresh.json", { method: "POST", path: `/${ws.id}-plain/_refresh` });
    await ws.file("002-delete.json", { method: "DELETE", path: `/${ws.id}-plain` });
    await ws.ok();
    assert.equal((await os("HEAD", `/${ws.id}-plain`)).status, 404);
  });
});
