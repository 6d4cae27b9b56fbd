// The bean's way out on Deno: which requests node:http takes (plain HTTP, where no proxy in the
// environment would take them), and that an answer keeps its bound whichever way it went.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type DenoEnvironment,
  environmentProxy,
  plainHttpOnNode,
} from "../../src/search/deno_bean_transport.ts";
import type {
  BodyLimit,
  Outgoing,
  Reading,
  ReadingTransport,
  Transport,
  WholeAnswer,
} from "../../src/migrate/search/http/transport.ts";
import { propertyOptions } from "../property.ts";
import { SearchClient } from "../../search.ts";
import { started, WAYS } from "./bean_ways.ts";

const VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].flatMap((v) => [v, v.toLowerCase()]);

/** An environment of `values`, each variable readable as `states` says (granted by default). */
function environment(
  values: Record<string, string>,
  states: Record<string, string> = {},
): DenoEnvironment {
  return {
    env: { get: (name) => values[name] },
    permissions: { querySync: ({ variable }) => ({ state: states[variable] ?? "granted" }) },
  };
}

describe("environmentProxy", () => {
  it("is true exactly when a proxy variable is set or may not be read", () => {
    const variable = fc.constantFrom(...VARIABLES, "NO_PROXY", "PATH");
    fc.assert(
      fc.property(
        fc.dictionary(variable, fc.constantFrom("", "http://proxy:3128", " ")),
        fc.dictionary(variable, fc.constantFrom("granted", "prompt", "denied")),
        (values, states) => {
          const expected = VARIABLES.some((v) =>
            (states[v] ?? "granted") !== "granted" || (values[v] ?? "") !== ""
          );
          assert.equal(environmentProxy(environment(values, states)), expected);
        },
      ),
      propertyOptions(),
    );
  });

  it("takes no proxy from an empty environment with every variable readable", () => {
    assert.equal(environmentProxy(environment({})), false);
    assert.equal(environmentProxy(environment({ NO_PROXY: "*" })), false);
    assert.equal(environmentProxy(environment({ https_proxy: "http://p:1" })), true);
  });

  it("keeps fetch where the permission query throws", () => {
    const hosted: DenoEnvironment = {
      env: { get: () => undefined },
      permissions: {
        querySync: () => {
          throw new TypeError("Deno.permissions.querySync is not a function");
        },
      },
    };
    assert.equal(environmentProxy(hosted), true);
  });
});

describe("plainHttpOnNode", () => {
  // Two transports that say which one a request took.
  const ways = () => {
    const took: string[] = [];
    let closed = 0;
    const answer = (body: string) => new Response(body, { headers: { "x-way": body } });
    const fetchWay: Transport = {
      fetch: (url) => {
        took.push(`fetch ${url.protocol}`);
        return Promise.resolve(answer("f".repeat(20)));
      },
      close: () => void closed++,
    };
    const nodeWay: ReadingTransport = {
      fetch: (url) => {
        took.push(`node fetch ${url.protocol}`);
        return Promise.resolve(answer("node"));
      },
      read: (request): Reading => {
        took.push(`node read ${request.origin.protocol}`);
        const answer: WholeAnswer = { status: 200, headers: {}, body: new Uint8Array(3) };
        return { answer: Promise.resolve(answer), cancel() {} };
      },
      close: () => void closed++,
    };
    return { took, closed: () => closed, both: plainHttpOnNode(fetchWay, nodeWay) };
  };
  const unbounded: BodyLimit = () => ({ most: 1000, over: () => new Error("over") });
  const outgoing = (origin: string): Outgoing => ({
    origin: new URL(origin),
    path: "/x",
    method: "GET",
    headers: {},
    body: undefined,
  });

  it("sends plain HTTP through node:http and HTTPS through fetch, and closes both", async () => {
    const { took, closed, both } = ways();
    await both.read(outgoing("http://a:9200"), unbounded).answer;
    const secure = await both.read(outgoing("https://a:9200"), unbounded).answer;
    await both.fetch(new URL("http://a:9200/x"), {});
    await both.fetch(new URL("https://a:9200/x"), {});
    assert.deepEqual(took, ["node read http:", "fetch https:", "node fetch http:", "fetch https:"]);
    assert.equal(new TextDecoder().decode(secure.body), "f".repeat(20));
    assert.equal(secure.headers["x-way"], "f".repeat(20));
    assert.equal(both.sendsGetBodies, undefined, "no GET body on either way");
    both.close();
    assert.equal(closed(), 2);
  });

  it("holds an HTTPS answer to the bound", async () => {
    const { both } = ways();
    const over = new Error("over the bound");
    await assert.rejects(
      both.read(outgoing("https://a:9200"), () => ({ most: 10, over: () => over })).answer,
      (error) => error === over,
    );
  });
});

describe("the bean's way out, on the runtime that runs this", () => {
  // The runtime's fetch would ask for compressed answers by itself, the bean's asks for none (as
  // node:http and the official client do not): `identity` tells which way a request took.
  it("is node:http on Node, on Deno for plain HTTP with no proxy in the environment, else fetch", async () => {
    const asked: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      asked.push(req.headers["accept-encoding"]);
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const g = globalThis as { Deno?: unknown; Bun?: unknown };
    const onNode = g.Deno === undefined && g.Bun === undefined;
    try {
      for (const way of WAYS) {
        const app = await started({ hosts: url }, way);
        try {
          const bean = app.getBean(SearchClient);
          await bean.get({ index: "x", id: "1" });
          // Where the client asks for compressed answers, it is asked as the client says.
          await bean.child({ suggestCompression: true }).get({ index: "x", id: "1" });
        } finally {
          await app.close();
        }
        const nodeHttp = way.entry.proxy === false || onNode ||
          (g.Deno !== undefined && way.env === undefined);
        assert.deepEqual(
          asked.splice(0),
          [nodeHttp ? undefined : "identity", "gzip,deflate"],
          way.name,
        );
      }
    } finally {
      server.close();
    }
  });
});
