// The `search` health component of a search connection's client, against the real node and
// loopback servers: the cluster's status (green and yellow UP, red DOWN), a node nothing listens
// for and one that never answers (DOWN, naming the connection, within the actuator's timeout),
// a client of three nodes (UP while one answers, naming the others; DOWN when none does),
// one part per connection under its bean's name, and no credential of the client in the answer,
// the error or a log line.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client, Connection, errors } from "@opensearch-project/opensearch";
import { secretsMask } from "../../src/config/secrets_mask.ts";
import { type Application, Bean, bootstrap, Configuration } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { search } from "../../search.ts";
import { offerSearchHealth, searchHealth } from "../../src/search/search_health.ts";
import { closeSearchClient } from "./close_client.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";
import { forward, type LoopbackServer, serveLoopback } from "../migrate/search/loopback_server.ts";
import { freePort } from "../free_port.ts";
import { createServer, type Server } from "node:net";

interface Body {
  readonly status: string;
  readonly components: Record<string, { status: string; details: Record<string, unknown> }>;
}

async function healthOf(app: Application): Promise<{ status: number; text: string; body: Body }> {
  const response = await app.fetch(new Request("http://x/actuator/health"));
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

/** An app whose beans are the given clients, each offering its part under its bean's name. */
async function appOf(clients: Record<string, Client>, timeout = 10_000): Promise<Application> {
  const names = Object.keys(clients);
  @Configuration()
  class Connections {
    @Bean()
    main(): Client {
      return clients[names[0]];
    }
    @Bean()
    logs(): Client {
      return clients[names[1] ?? names[0]];
    }
  }
  for (const [name, client] of Object.entries(clients)) offerSearchHealth(client, name, timeout);
  return await bootstrap({
    components: names.length === 1 ? [oneConnection(clients[names[0]])] : [Connections],
    config: { management: { endpoint: { health: { "show-details": "always" } } } },
    actuator: actuator({ health: { showDetails: "always", timeout } }),
  });
}

function oneConnection(client: Client) {
  @Configuration()
  class Connection {
    @Bean()
    main(): Client {
      return client;
    }
  }
  return Connection;
}

/** The message a promise rejected with; fails when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `rejected with ${String(error)}`);
    return error;
  }
  assert.fail("resolved; a rejection was expected");
}

describe("searchHealth on the real node", () => {
  const client = new Client({ node: OPENSEARCH_URL });
  const index = `thaw-health-${crypto.randomUUID().slice(0, 8)}`;
  after(async () => {
    await os("DELETE", `/${index}`);
    await closeSearchClient(client);
  });

  it("is UP with the node's status and figures, green where the node says green", async () => {
    const details = await searchHealth("main", client, 10_000).check();
    assert.ok(["green", "yellow"].includes(details.status as string), String(details.status));
    assert.equal(typeof details.cluster_name, "string");
    assert.equal(typeof details.number_of_nodes, "number");
    // Other tests share the node, and any index of theirs with a replica makes it yellow: the
    // node's own answer for an index of ours without one is green, handed as the cluster's.
    const own = `${index}-green`;
    const created = await os("PUT", `/${own}`, {
      settings: { number_of_shards: 1, number_of_replicas: 0 },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const green = await serveLoopback(async (req, res, body) => {
      const path = req.url?.startsWith("/_cluster/health") ? `/_cluster/health/${own}` : req.url;
      const answer = await forward(OPENSEARCH_URL, req, body, {}, path);
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(answer.text);
    });
    const greenClient = new Client({ node: green.url });
    try {
      const answer = await searchHealth("main", greenClient, 10_000).check();
      assert.equal(answer.status, "green");
      assert.equal(answer.cluster_name, details.cluster_name);
    } finally {
      await closeSearchClient(greenClient);
      await green.close();
      await os("DELETE", `/${own}`);
    }
  });

  it("is UP with status yellow once an index has a replica the one node cannot hold", async () => {
    const created = await os("PUT", `/${index}`, {
      settings: { number_of_shards: 1, number_of_replicas: 1 },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const details = await searchHealth("main", client, 10_000).check();
    assert.equal(details.status, "yellow");
    assert.ok((details.unassigned_shards as number) >= 1);
  });

  it("is a part named after the bean in the app's search component", async () => {
    const app = await appOf({ main: client });
    try {
      const { status, body } = await healthOf(app);
      assert.equal(status, 200);
      assert.equal(body.components.search.status, "UP");
      const part = body.components.search.details.main as Record<string, unknown>;
      assert.ok(["green", "yellow"].includes(part.status as string));
    } finally {
      await app.close();
    }
  });
});

describe("searchHealth on a cluster that is not healthy", () => {
  let red: LoopbackServer;
  let silent: LoopbackServer;
  before(async () => {
    red = await serveLoopback((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        req.url?.startsWith("/_cluster/health")
          ? JSON.stringify({ cluster_name: "shop", status: "red", unassigned_shards: 3 })
          : "{}",
      );
      return Promise.resolve();
    });
    // Takes each request and never answers: a node that hangs.
    silent = await serveLoopback(() => new Promise(() => {}));
  });
  after(async () => {
    await red.close();
    await silent.close();
  });

  it("is DOWN when the cluster is red, naming the connection", async () => {
    const client = new Client({ node: red.url });
    try {
      const error = await rejection(searchHealth("orders", client, 10_000).check());
      assert.match(error.message, /search connection "orders"/);
      assert.match(error.message, /the cluster "shop" is red \(3 shards unassigned\)/);
    } finally {
      await closeSearchClient(client);
    }
  });

  it("is DOWN naming the connection where nothing listens", async () => {
    const port = await freePort();
    const client = new Client({ node: `http://127.0.0.1:${port}` });
    try {
      const error = await rejection(searchHealth("orders", client, 10_000).check());
      assert.match(
        error.message,
        new RegExp(
          `^search connection "orders" at http://127\\.0\\.0\\.1:${port}: ConnectionError`,
        ),
      );
    } finally {
      await closeSearchClient(client);
    }
  });

  it("gives up once its timeout passes on a node that never answers", async () => {
    const client = new Client({ node: silent.url });
    try {
      const error = await rejection(searchHealth("orders", client, 200).check());
      assert.match(
        error.message,
        /^search connection "orders" at http:\/\/127\.0\.0\.1:\d+: TimeoutError/,
      );
    } finally {
      await closeSearchClient(client);
    }
  });

  it("is DOWN in the app's answer within management.health.timeout, each connection by name", async () => {
    const up = new Client({ node: OPENSEARCH_URL });
    const hung = new Client({ node: silent.url });
    try {
      // The node that answers must do so within the timeout, which a loaded machine can miss:
      // the timeout doubles (to at most 30 s) until it did.
      for (let ms = 300;; ms = Math.min(ms * 2, 30_000)) {
        const app = await appOf({ main: up, logs: hung }, ms);
        try {
          const { status, body } = await healthOf(app);
          assert.equal(status, 503);
          const search = body.components.search;
          assert.equal(search.status, "DOWN");
          const main = search.details.main as { status?: string; error?: string };
          const late = /did not answer within|TimeoutError/.test(String(main.error));
          if (late && ms < 30_000) continue;
          assert.ok(["green", "yellow"].includes(String(main.status)), JSON.stringify(main));
          // The request gives up with the probe: whichever says so first is the reason.
          assert.match(
            String((search.details.logs as { error: string }).error),
            new RegExp(
              `^(check\\(\\) did not answer within ${ms} ms|search connection "logs" at ` +
                `http://127\\.0\\.0\\.1:\\d+: TimeoutError: Request timed out)$`,
            ),
          );
          break;
        } finally {
          await app.close();
        }
      }
    } finally {
      await closeSearchClient(up);
      await closeSearchClient(hung);
    }
  });
});

describe("searchHealth on a client of three nodes", () => {
  let silent: LoopbackServer;
  let closing: Server;
  let closingUrl: string;
  before(async () => {
    // Takes each request and never answers: a node that hangs.
    silent = await serveLoopback(() => new Promise(() => {}));
    // Takes each connection and closes it at once: a node that refuses.
    closing = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closing.listen(0, "127.0.0.1", resolve));
    closingUrl = `http://127.0.0.1:${(closing.address() as { port: number }).port}`;
  });
  after(async () => {
    await silent?.close();
    await new Promise((resolve) => closing?.close(resolve));
  });

  it("is UP while one node answers, naming the nodes that did not", async () => {
    // An attempt on the node that hangs gives up soon, and the call goes to the next node.
    const client = new Client({
      nodes: [silent.url, closingUrl, OPENSEARCH_URL],
      requestTimeout: 500,
    });
    try {
      // Every call succeeds through the node that answers: so must the health.
      assert.equal((await client.info()).statusCode, 200);
      const details = await searchHealth("main", client, 500).check();
      assert.ok(["green", "yellow"].includes(details.status as string), JSON.stringify(details));
      const unanswered = details.unanswered as string[];
      assert.equal(unanswered.length, 2, JSON.stringify(details));
      assert.match(unanswered[0], new RegExp(`^${silent.url}: TimeoutError`));
      assert.match(unanswered[1], new RegExp(`^${closingUrl}: ConnectionError`));
      const app = await appOf({ main: client }, 2_000);
      try {
        const { status, body } = await healthOf(app);
        assert.equal(status, 200);
        assert.equal(body.components.search.status, "UP");
      } finally {
        await app.close();
      }
    } finally {
      await closeSearchClient(client);
    }
  });

  it("is DOWN when no node answers, naming each", async () => {
    const port = await freePort();
    const gone = `http://127.0.0.1:${port}`;
    const client = new Client({ nodes: [silent.url, closingUrl, gone] });
    try {
      const error = await rejection(searchHealth("main", client, 500).check());
      assert.match(error.message, /^search connection "main": no node answered: /);
      for (const url of [silent.url, closingUrl, gone]) {
        assert.ok(error.message.includes(`${url}: `), error.message);
      }
      assert.match(error.message, /TimeoutError/);
    } finally {
      await closeSearchClient(client);
    }
  });
});

describe("searchHealth and the client's credentials", () => {
  const SECRETS = ["s3cret-XYZ", "s3cret-BEARER", "s3cret-URL"];
  let echo: LoopbackServer;
  const lines: string[] = [];
  const methods = ["log", "info", "warn", "error", "debug"] as const;
  const saved = methods.map((m) => console[m]);
  before(async () => {
    // A node that refuses every request, quoting the Authorization header it was sent (the worst
    // a proxy's error page may do).
    echo = await serveLoopback((req, res) => {
      const header = `${req.headers.authorization} ${req.headers["x-token"] ?? ""}`;
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({
        error: {
          type: "security_exception",
          root_cause: [{ type: "security_exception", reason: `refused ${header}` }],
        },
        status: 401,
      }));
      return Promise.resolve();
    });
    for (const m of methods) {
      console[m] = (...args: unknown[]) => lines.push(args.map((a) => String(a)).join(" "));
    }
  });
  after(async () => {
    methods.forEach((m, i) => (console[m] = saved[i]));
    await echo.close();
  });

  function assertHidden(text: string, where: string): void {
    for (const secret of SECRETS) {
      assert.ok(!text.includes(secret), `${where} shows ${secret}: ${text}`);
      assert.ok(
        !text.includes(btoa(`user:${secret}`)),
        `${where} shows ${secret} encoded: ${text}`,
      );
    }
  }

  it("shows none of them where the node refuses them, nor where nothing listens", async () => {
    const port = await freePort();
    const clients = {
      basic: new Client({ node: echo.url, auth: { username: "user", password: SECRETS[0] } }),
      bearer: new Client({ node: echo.url, headers: { authorization: `Bearer ${SECRETS[1]}` } }),
      url: new Client({ node: echo.url.replace("//", `//user:${SECRETS[2]}@`) }),
      gone: new Client({ node: `http://user:${SECRETS[2]}@127.0.0.1:${port}` }),
    };
    try {
      for (const [name, client] of Object.entries(clients)) {
        const error = await rejection(searchHealth(name, client, 10_000).check());
        assert.match(error.message, new RegExp(`^search connection "${name}"`));
        if (name !== "gone") assert.match(error.message, /HTTP 401: ResponseError/);
        assertHidden(error.message, `${name}'s error`);
        assertHidden(String(error.stack), `${name}'s stack`);
        const app = await appOf({ [name]: client });
        try {
          const { status, text } = await healthOf(app);
          assert.equal(status, 503);
          assert.match(text, new RegExp(`"main":\\{"error":"search connection \\\\"${name}\\\\"`));
          assertHidden(text, `${name}'s health answer`);
        } finally {
          await app.close();
        }
      }
      for (const line of lines) assertHidden(line, "a log line");
    } finally {
      for (const client of Object.values(clients)) await closeSearchClient(client);
    }
  });

  it("masks what the credentials mask hides, which the client does not hold as a credential", async () => {
    const own = "s3cret-OWN-1234";
    const client = new Client({ node: echo.url, headers: { "x-token": own } });
    try {
      const bare = await rejection(searchHealth("signed", client, 10_000).check());
      // The echo quotes it: without the connection's own mask it would show.
      assert.ok(bare.message.includes(own), bare.message);
      const masked = await rejection(
        searchHealth("signed", client, 10_000, secretsMask([own])).check(),
      );
      assert.ok(!masked.message.includes(own), masked.message);
      assert.match(
        masked.message,
        /^search connection "signed" at http:\/\/127\.0\.0\.1:\d+: HTTP 401/,
      );
    } finally {
      await closeSearchClient(client);
    }
  });
});

describe("searchHealth and a connection's own errors", () => {
  it("does not name the connection twice where its error names it", async () => {
    // A Connection class of the app's own (one over fetch, say) whose errors name their
    // connection already.
    class Refusing extends Connection {
      override request(
        _params: unknown,
        callback: (error: Error | null, response: null) => void,
      ): never {
        const error = new errors.ConnectionError('search connection "orders": refused by the test');
        queueMicrotask(() => callback(error, null));
        return { abort: () => {} } as never;
      }
    }
    const client = new Client({ node: "http://127.0.0.1:9", Connection: Refusing });
    try {
      const error = await rejection(searchHealth("orders", client, 10_000).check());
      assert.equal(
        error.message,
        'ConnectionError: search connection "orders": refused by the test',
      );
    } finally {
      await closeSearchClient(client);
    }
  });
});

describe("bootstrap({ search: search(), actuator })", () => {
  it("gives each search connection its part of search, DOWN naming it and never its password", async () => {
    const password = "s3cret-pass-XYZ-42";
    const port = await freePort();
    const app = await bootstrap({
      config: {
        search: [
          { name: "main", hosts: OPENSEARCH_URL, primary: true },
          { name: "gone", hosts: `http://127.0.0.1:${port}`, username: "elastic", password },
        ],
        management: { endpoint: { health: { "show-details": "always" } } },
      },
      search: search(),
      actuator: actuator({ health: { showDetails: "always", timeout: 10_000 } }),
    });
    try {
      const { status, text, body } = await healthOf(app);
      assert.equal(status, 503, text);
      // Each connection's part under its name: the cluster's figures, or the error of a DOWN.
      const { status: whole, details } = body.components.search;
      assert.equal(whole, "DOWN", text);
      const parts = details as Record<string, Record<string, unknown>>;
      assert.ok(["green", "yellow"].includes(String(parts.main.status)), text);
      assert.match(String(parts.gone.error), /^ConnectionError: search connection "gone": /);
      assert.ok(!text.includes(password), text);
      assert.ok(!text.includes(btoa(`elastic:${password}`)), text);
    } finally {
      await app.close();
    }
  });

  it("has no search component with management.health.search.enabled: false", async () => {
    const app = await bootstrap({
      config: {
        search: [{ name: "main", hosts: OPENSEARCH_URL }],
        management: {
          endpoint: { health: { "show-details": "always" } },
          health: { search: { enabled: false } },
        },
      },
      search: search(),
      actuator: actuator({ health: { showDetails: "always", timeout: 10_000 } }),
    });
    try {
      const { text, body } = await healthOf(app);
      assert.equal(body.components.search, undefined, text);
    } finally {
      await app.close();
    }
  });
});
