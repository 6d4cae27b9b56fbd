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
