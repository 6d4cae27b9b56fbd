import process from "node:process";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Workspace } from "../cluster.ts";
import { OPENSEARCH_URL } from "../cluster.ts";
import { RUNTIME } from "../../../runtime.ts";
import {
  freePort,
  type Helper,
  startForwardProxy,
  startSilentServer,
  startTlsProxy,
} from "../servers.ts";
import { forward, type LoopbackServer, serveLoopback } from "../loopback_server.ts";

const PASSWORD = "s3cr3t-Pa55";

describe("search transport on real servers", () => {
  let tls: Helper & { cert: string };
  let proxy: Helper & { log(): Promise<string> };
  let silent: Helper;
  before(async () => {
    tls = await startTlsProxy(OPENSEARCH_URL, "admin", PASSWORD);
    proxy = await startForwardProxy();
    silent = await startSilentServer();
  });
  after(async () => {
    await Promise.all([tls?.stop(), proxy?.stop(), silent?.stop()]);
  });

  async function workspace(hosts: string[], settings = ""): Promise<Workspace> {
    const ws = await Workspace.create({ hosts, settings });
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    return ws;
  }

  it("moves past a host that refuses connections to the next one", async () => {
    await using ws = await workspace([`http://127.0.0.1:${await freePort()}`, OPENSEARCH_URL]);
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].applied, 1);
  });

  it("gives up on a host that never answers after the timeout, then uses the next", async () => {
    await using ws = await workspace([silent.url, OPENSEARCH_URL], "    timeout: 10\n");
    const started = Date.now();
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].applied, 1);
    assert.ok(Date.now() - started >= 10_000, "waited for the timeout");
  });

  it("status lists the files, their state unknown, when no host answers", async () => {
    await using ws = await workspace([`http://127.0.0.1:${await freePort()}`]);
    await ws.file("b-template.json", { index_patterns: [`${ws.id}-b*`] });
    const run = await ws.run("status");
    assert.equal(run.code, 1, run.out);
    assert.match(
      run.out + run.err,
      new RegExp(
        "  unknown +a-template\\.json\n  unknown +b-template\\.json\n" +
          `${ws.id}: 2 file\\(s\\) in this checkout, their state unknown \\(the records could ` +
          "not be read\\)[^\\n]*\\nfailed: [^\\n]*no host of",
      ),
    );
  });

  it("fails with every host's cause when none answers, and sends nothing else", async () => {
    await using ws = await workspace(
      [silent.url, `http://127.0.0.1:${await freePort()}`],
      "    timeout: 0.5\n",
    );
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      /no host of "t\w+" answered \(http:\/\/127\.0\.0\.1:\d+: no answer within 0\.5 s; http:\/\/127\.0\.0\.1:\d+: /,
    );
  });

  it("refuses a self-signed certificate by default, and accepts it with ssl_verification: false", async () => {
    const auth = `    username: admin\n    password: ${PASSWORD}\n`;
    await using strict = await workspace([tls.url], auth);
    const refused = await strict.run();
    assert.equal(refused.code, 1);
    assert.match(refused.err, /certificate|self.signed|UnknownIssuer|unable to verify/i);
    await using relaxed = await workspace([tls.url], auth + "    ssl_verification: false\n");
    assert.equal((await relaxed.ok("--json")).report!.connections[0].applied, 1);
  });

  it("authenticates with username and password, and never prints the password", async () => {
    await using wrong = await workspace(
      [tls.url],
      `    username: admin\n    password: wrong-${PASSWORD}\n    ssl_verification: false\n`,
    );
    const denied = await wrong.run("--json");
    assert.equal(denied.code, 1);
    assert.equal(denied.report!.error!.status, 401);
    for (const run of [denied, await wrong.run(), await wrong.run("status")]) {
      assert.ok(!run.out.includes(PASSWORD) && !run.err.includes(PASSWORD), "password printed");
    }
  });

  it("sends through a forward proxy when proxy is set", async () => {
    await using ws = await workspace([OPENSEARCH_URL], `    proxy: ${proxy.url}\n`);
    await ws.ok();
    // Deno and Bun forward plain-HTTP requests by absolute URL; Node's undici always tunnels.
    const { host } = new URL(OPENSEARCH_URL);
    const through = RUNTIME === "node"
      ? new RegExp(`CONNECT ${host.replaceAll(".", "\\.")} `)
      : new RegExp(`/${ws.recordsIndex}/_search`);
    assert.match(await proxy.log(), through);
  });

  it("bypasses HTTP_PROXY with proxy: false", async () => {
    await using ws = await workspace([OPENSEARCH_URL], "    proxy: false\n");
    const dead = `http://127.0.0.1:${await freePort()}`;
    const saved = { http: process.env.HTTP_PROXY, lower: process.env.http_proxy };
    process.env.HTTP_PROXY = process.env.http_proxy = dead;
    try {
      await ws.ok();
    } finally {
      for (const [k, v] of [["HTTP_PROXY", saved.http], ["http_proxy", saved.lower]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  // What a proxy in front of the cluster answers with: nginx's own pages, a single sign-on form.
  const NGINX_401 =
    "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n" +
    "<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n" +
    "</body>\r\n</html>\r\n";
  const LOGIN = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Sign in \u2013 Corp SSO' +
    '</title></head><body><form method="post"><input name="user"></form></body></html>';
  async function htmlHost(status: number, page: string): Promise<LoopbackServer> {
    return await serveLoopback((_req, res) => {
      res.writeHead(status, { "content-type": "text/html" });
      res.end(page);
      return Promise.resolve();
    });
  }

  it("names an HTML error page by its title, without pasting the page", async () => {
    const host = await htmlHost(401, NGINX_401);
    try {
      await using ws = await workspace([host.url]);
      const run = await ws.run();
      assert.equal(run.code, 1, run.err);
      assert.match(run.err, /HTTP 401: .*: an HTML page titled "401 Authorization Required"$/m);
      assert.ok(!/<|nginx\/1/.test(run.err), run.err);
    } finally {
      await host.close();
    }
  });

  it("takes an HTML page answered with 200 for a failure, not for the cluster's answer", async () => {
    const host = await htmlHost(200, LOGIN);
    try {
      await using ws = await workspace([host.url]);
      const run = await ws.run();
      assert.equal(run.code, 1, run.err);
      assert.match(
        run.err,
        /answered 200 with an HTML page titled "Sign in \u2013 Corp SSO", not the cluster's JSON/,
      );
      assert.match(run.err, / 0 applied/);
      assert.ok(!run.err.includes("<"), run.err);
    } finally {
      await host.close();
    }
  });

  it("takes a 200 HTML answer to a HEAD for a failure, not for an index that exists", async () => {
    // A login proxy that lets the cluster's JSON through but answers a HEAD itself: no body, only
    // its content type says it is not the cluster.
    const host = await serveLoopback(async (req, res, body) => {
      if (req.method === "HEAD") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end();
        return;
      }
      const answer = await forward(OPENSEARCH_URL, req, body, {
        ...(typeof req.headers["content-type"] === "string"
          ? { "content-type": req.headers["content-type"] }
          : {}),
      });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.text);
    });
    try {
      await using ws = await workspace([host.url]);
      await ws.file(`1-${ws.id}-a-index.json`, { settings: { number_of_replicas: 0 } });
      const run = await ws.run();
      assert.equal(run.code, 1, run.err);
      assert.match(
        run.err,
        /HEAD \/\S+-a: \S+ answered 200 with an HTML page \(text\/html\), not the cluster's JSON/,
      );
    } finally {
      await host.close();
    }
  });

  it("refuses, before any request, settings the runtime's transport cannot honour together", async () => {
    await using ws = await workspace(
      [OPENSEARCH_URL],
      `    ssl_verification: false\n    proxy: ${proxy.url}\n`,
    );
    const run = await ws.run();
    // Node's undici does both; Deno's and Bun's node:https path cannot use a proxy.
    const node = RUNTIME === "node";
    assert.equal(run.code, node ? 0 : 2, run.err);
    if (!node) {
      assert.match(
        run.err,
        /connection "t\w+": proxy cannot be combined with ssl_verification: false/,
      );
      assert.deepEqual(run.sent, []);
    }
  });
});
