// Hono's own middleware on a Thaw app, each given to `bootstrap({ middleware })` (and some to
// `@UseMiddleware`), holding to what it promises on controller routes and on Thaw's own answers
// (404, 405, OPTIONS), over `app.fetch` and over a real socket, on whichever runtime runs the suite:
// cors, secure-headers, etag and compress here; the rest in hono_middleware_request_test.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { MiddlewareHandler } from "hono";
import { compress } from "hono/compress";
import { cors } from "hono/cors";
import { etag } from "hono/etag";
import { secureHeaders } from "hono/secure-headers";
import { bootstrap, GetMapping, RestController, UseMiddleware } from "../../mod.ts";
import { openApi } from "../../openapi.ts";
import { memoryLogger, TRANSPORTS } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import {
  Catalog,
  decode,
  errorBody,
  FRAMEWORK_ANSWERS,
  ITEMS,
  PAGE,
  target,
  withApp,
} from "./hono_middleware_fixtures.ts";

for (const transport of TRANSPORTS) {
  describe(`hono/cors, global, over ${transport}`, () => {
    const reach = withApp(transport, () => ({
      controllers: [Catalog],
      logger: memoryLogger(),
      middleware: [
        cors({
          origin: PAGE,
          allowHeaders: ["X-Custom"],
          exposeHeaders: ["X-Total"],
          maxAge: 600,
          credentials: true,
        }),
      ],
    }));

    it("a request from the allowed origin gets its origin back, with credentials and exposed headers", async () => {
      const response = await reach().send("GET", "/items", { headers: { origin: PAGE } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      assert.equal(response.headers.get("access-control-allow-credentials"), "true");
      assert.equal(response.headers.get("access-control-expose-headers"), "X-Total");
      assert.match(response.headers.get("vary") ?? "", /\bOrigin\b/);
      assert.deepEqual(await response.json(), ITEMS);
    });

    it("another origin gets no Access-Control-Allow-Origin", async () => {
      const response = await reach().send("GET", "/items", {
        headers: { origin: "http://evil.example" },
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("access-control-allow-origin"), null);
      await response.arrayBuffer();
    });

    it("a preflight is answered by cors(): 204 with the methods, headers and max age", async () => {
      const response = await reach().send("OPTIONS", "/items", {
        headers: {
          origin: PAGE,
          "access-control-request-method": "POST",
          "access-control-request-headers": "x-custom",
        },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      assert.match(response.headers.get("access-control-allow-methods") ?? "", /\bPOST\b/);
      assert.equal(response.headers.get("access-control-allow-headers"), "X-Custom");
      assert.equal(response.headers.get("access-control-max-age"), "600");
      assert.equal(await response.text(), "");
    });

    it("a preflight to a path no route serves is cors()'s too: it runs ahead of routing", async () => {
      const response = await reach().send("OPTIONS", "/nowhere", {
        headers: { origin: PAGE, "access-control-request-method": "GET" },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      await response.arrayBuffer();
    });

    it("Thaw's 404 and 405 and a route's error answers carry the CORS headers, so a page can read them", async () => {
      const cases: [string, string, number][] = [
        ["GET", "/nowhere", 404],
        ["DELETE", "/items", 405],
        ["GET", "/conflict", 409],
        ["GET", "/broken", 500],
        ["GET", "/items/abc", 400],
      ];
      for (const [method, path, status] of cases) {
        const response = await reach().send(method, path, { headers: { origin: PAGE } });
        assert.equal(
          response.headers.get("access-control-allow-origin"),
          PAGE,
          `${method} ${path}`,
        );
        assert.equal(response.headers.get("access-control-allow-credentials"), "true");
        await errorBody(response, status);
      }
    });
  });

  describe(`hono/cors on a controller (@UseMiddleware) over ${transport}`, () => {
    @RestController()
    @UseMiddleware(cors({ origin: PAGE }))
    class Shared {
      @GetMapping("/shared")
      shared(): { shared: boolean } {
        return { shared: true };
      }
    }
    const reach = withApp(transport, () => ({ controllers: [Shared] }));

    it("a simple request to its routes gets the CORS headers", async () => {
      const response = await reach().send("GET", "/shared", { headers: { origin: PAGE } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      assert.deepEqual(await response.json(), { shared: true });
    });

    it("a preflight never reaches it (as the README says): Thaw's own 204 with Allow, no CORS", async () => {
      const response = await reach().send("OPTIONS", "/shared", {
        headers: { origin: PAGE, "access-control-request-method": "GET" },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("allow"), "GET, HEAD, OPTIONS");
      assert.equal(response.headers.get("access-control-allow-origin"), null);
      await response.arrayBuffer();
    });
  });

  describe(`hono/secure-headers over ${transport}`, () => {
    @RestController()
    class Framed {
      @GetMapping("/framed")
      @UseMiddleware(secureHeaders({ xFrameOptions: "DENY", referrerPolicy: "same-origin" }))
      framed(): string {
        return "framed";
      }
    }
    const reach = withApp(transport, () => ({
      controllers: [Catalog, Framed],
      logger: memoryLogger(),
      openapi: openApi(),
      middleware: [secureHeaders()],
    }));
    const EXPECTED: Record<string, string> = {
      "x-content-type-options": "nosniff",
      "x-frame-options": "SAMEORIGIN",
      "strict-transport-security": "max-age=15552000; includeSubDomains",
      "referrer-policy": "no-referrer",
      "cross-origin-resource-policy": "same-origin",
      "cross-origin-opener-policy": "same-origin",
      "origin-agent-cluster": "?1",
      "x-dns-prefetch-control": "off",
      "x-download-options": "noopen",
      "x-permitted-cross-domain-policies": "none",
      "x-xss-protection": "0",
    };
    const assertSecure = (response: Response, label: string) => {
      for (const [name, value] of Object.entries(EXPECTED)) {
        assert.equal(response.headers.get(name), value, `${label}: ${name}`);
      }
    };

    it("sets its headers on a route's answer and on a route's error", async () => {
      for (const [path, status] of [["/items", 200], ["/conflict", 409], ["/broken", 500]]) {
        const response = await reach().send("GET", path as string);
        assert.equal(response.status, status);
        assertSecure(response, String(path));
        await response.arrayBuffer();
      }
    });

    it("sets them on Thaw's 404, 405 and OPTIONS answers", async () => {
      for (const [method, path, status] of FRAMEWORK_ANSWERS) {
        const response = await reach().send(method, path);
        assert.equal(response.status, status, `${method} ${path}`);
        assertSecure(response, `${method} ${path}`);
        if (status === 405) assert.equal(response.headers.get("allow"), "GET, HEAD, POST, OPTIONS");
        await response.arrayBuffer();
      }
    });

    it("sets them on the OpenAPI routes, and the docs page keeps its own Content-Security-Policy", async () => {
      const document = await reach().send("GET", "/openapi.json");
      assert.equal(document.status, 200);
      assertSecure(document, "/openapi.json");
      assert.ok((await document.json()).paths["/items"]);
      const docs = await reach().send("GET", "/docs");
      assert.equal(docs.status, 200);
      assertSecure(docs, "/docs");
      assert.match(docs.headers.get("content-security-policy") ?? "", /script-src 'self'/);
      await docs.arrayBuffer();
    });

    it("removes an X-Powered-By header a route sets", async () => {
      const response = await reach().send("GET", "/powered");
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-powered-by"), null);
      assert.deepEqual(await response.json(), { ok: true });
    });

    it("on a method: its own values, unless a global one, which runs last, overwrites them", async () => {
      const framed = await reach().send("GET", "/framed");
      assert.equal(framed.headers.get("x-frame-options"), "SAMEORIGIN", "the global one runs last");
      assert.equal(await framed.text(), "framed");
      // The global secureHeaders() runs outermost, so its defaults overwrite the method's: the
      // method's own values show only with `overwrite: false` globally, checked below.
      const app = await bootstrap({
        controllers: [Framed],
        middleware: [secureHeaders({ overwrite: false })],
      });
      const own = await target(app, transport);
      try {
        const response = await own.send("GET", "/framed");
        assert.equal(response.headers.get("x-frame-options"), "DENY");
        assert.equal(response.headers.get("referrer-policy"), "same-origin");
        assert.equal(response.headers.get("x-content-type-options"), "nosniff");
        await response.arrayBuffer();
      } finally {
        await own.close();
      }
    });
  });

  describe(`hono/etag over ${transport}`, () => {
    @RestController()
    class Weak {
      @GetMapping("/weak")
      @UseMiddleware(etag({ weak: true }))
      weak(): { weak: boolean } {
        return { weak: true };
      }
    }
    const reach = withApp(transport, () => ({
      controllers: [Catalog],
      logger: memoryLogger(),
      middleware: [etag()],
    }));

    const tagOf = async (path: string): Promise<string> => {
      const response = await reach().send("GET", path);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
      const tag = response.headers.get("etag");
      assert.match(tag ?? "", /^"[0-9a-f]{40}"$/, `${path}: a SHA-1 strong tag`);
      return tag!;
    };

    it("tags a route's answer, the same tag for the same body and another for another", async () => {
      const tag = await tagOf("/items");
      assert.equal(await tagOf("/items"), tag);
      assert.notEqual(await tagOf("/items/1"), tag);
    });

    it("answers 304 with no body to If-None-Match with the tag, or *", async () => {
      const tag = await tagOf("/items");
      for (const condition of [tag, `"other", ${tag}`, `W/${tag}`, "*"]) {
        const response = await reach().send("GET", "/items", {
          headers: { "if-none-match": condition },
        });
        assert.equal(response.status, 304, condition);
        assert.equal(response.headers.get("etag"), tag);
        // No server adds a Content-Type to an answer without a body.
        assert.equal(response.headers.get("content-type"), null);
        assert.equal(await response.text(), "");
      }
    });

    it("answers 200 with the body to If-None-Match with another tag", async () => {
      const response = await reach().send("GET", "/items", {
        headers: { "if-none-match": '"not-the-tag"' },
      });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), ITEMS);
    });

    it("leaves Thaw's 404 and 405, its OPTIONS answer and a POST untagged", async () => {
      for (const [method, path, status] of FRAMEWORK_ANSWERS) {
        const response = await reach().send(method, path, { headers: { "if-none-match": "*" } });
        assert.equal(response.status, status, `${method} ${path}`);
        assert.equal(response.headers.get("etag"), null, `${method} ${path}`);
        await response.arrayBuffer();
      }
      const posted = await reach().send("POST", "/items", {
        headers: { "content-type": "application/json" },
        body: '{"name":"new"}',
      });
      assert.equal(posted.status, 200);
      assert.equal(posted.headers.get("etag"), null);
      assert.deepEqual(await posted.json(), { created: { name: "new" } });
    });

    // Bare Hono gives HEAD the GET's tag and answers a conditional HEAD 304: its fetch runs HEAD
    // as GET and drops the body once every middleware has run. A route that drops it itself
    // leaves etag() an empty body to hash (no ETag, and 200 to If-None-Match).
    it("HEAD carries the GET's tag, and a conditional HEAD is 304", async () => {
      const tag = await tagOf("/items");
      const head = await reach().send("HEAD", "/items");
      assert.equal(head.status, 200);
      await head.arrayBuffer();
      assert.equal(head.headers.get("etag"), tag, "HEAD /items: the ETag of GET /items");
      const conditional = await reach().send("HEAD", "/items", {
        headers: { "if-none-match": tag },
      });
      await conditional.arrayBuffer();
      assert.equal(conditional.status, 304, "HEAD /items with If-None-Match: the GET's tag");
    });

    it("on a method (@UseMiddleware): a weak tag, and 304 for it", async () => {
      const app = await bootstrap({ controllers: [Weak] });
      const own = await target(app, transport);
      try {
        const response = await own.send("GET", "/weak");
        const tag = response.headers.get("etag") ?? "";
        assert.match(tag, /^W\/"[0-9a-f]{40}"$/);
        assert.deepEqual(await response.json(), { weak: true });
        const again = await own.send("GET", "/weak", { headers: { "if-none-match": tag } });
        assert.equal(again.status, 304);
        await again.arrayBuffer();
      } finally {
        await own.close();
      }
    });
  });

  describe(`hono/compress over ${transport}`, () => {
    if (typeof CompressionStream !== "function") {
      // Deno, Bun, Node 20 and Node 26 all have it: a runtime that does not fails here, loudly.
      it(`${RUNTIME} has no CompressionStream, which compress() needs`, () => {
        assert.fail(`CompressionStream is ${typeof CompressionStream} on ${RUNTIME}`);
      });
      return;
    }
    @RestController()
    class Packed {
      @GetMapping("/packed")
      @UseMiddleware(compress({ encoding: "deflate" }))
      packed(): typeof ITEMS {
        return ITEMS;
      }
    }
    const seen: string[] = [];
    const recordEncoding: MiddlewareHandler = async (c, next) => {
      seen.push(c.req.header("accept-encoding") ?? "(none)");
      await next();
    };
    const reach = withApp(transport, () => ({
      controllers: [Catalog, Packed],
      middleware: [recordEncoding, compress()],
    }));

    for (const encoding of ["gzip", "deflate"] as const) {
      it(`Accept-Encoding: ${encoding}: the route's JSON, ${encoding}-compressed, decodes to the JSON`, async () => {
        const answer = await reach().raw("GET", "/items", {
          headers: { "accept-encoding": encoding },
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get("content-encoding"), encoding);
        assert.equal(answer.headers.get("content-type"), "application/json");
        assert.match(answer.headers.get("vary") ?? "", /Accept-Encoding/);
        const json = JSON.stringify(ITEMS);
        assert.ok(answer.bytes.length < json.length / 2, `${answer.bytes.length} bytes`);
        if (encoding === "gzip") assert.deepEqual([...answer.bytes.slice(0, 2)], [0x1f, 0x8b]);
        assert.deepEqual(JSON.parse(await decode(answer.bytes, encoding)), ITEMS);
      });
    }

    it("no Accept-Encoding, or identity: the plain JSON", async () => {
      for (const headers of [{}, { "accept-encoding": "identity" }] as Record<string, string>[]) {
        const answer = await reach().raw("GET", "/items", { headers });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get("content-encoding"), null);
        assert.deepEqual(JSON.parse(new TextDecoder().decode(answer.bytes)), ITEMS);
      }
    });

    it("Thaw's 404 and 405 are compressed too, and decode to its error body", async () => {
      for (const [method, path, status] of FRAMEWORK_ANSWERS.slice(0, 2)) {
        const answer = await reach().raw(method, path, { headers: { "accept-encoding": "gzip" } });
        assert.equal(answer.status, status);
        assert.equal(answer.headers.get("content-encoding"), "gzip", `${method} ${path}`);
        const body = JSON.parse(await decode(answer.bytes, "gzip"));
        assert.equal(body.status, status);
      }
    });

    it("Thaw's OPTIONS answer has no body to compress", async () => {
      const answer = await reach().raw("OPTIONS", "/items", {
        headers: { "accept-encoding": "gzip" },
      });
      assert.equal(answer.status, 204);
      assert.equal(answer.headers.get("content-encoding"), null);
      assert.equal(answer.headers.get("allow"), "GET, HEAD, POST, OPTIONS");
      assert.equal(answer.bytes.length, 0);
    });

    it("on a method (@UseMiddleware) with deflate only: deflate even when gzip is offered first", async () => {
      const answer = await reach().raw("GET", "/packed", {
        headers: { "accept-encoding": "gzip, deflate" },
      });
      assert.equal(answer.headers.get("content-encoding"), "deflate");
      assert.deepEqual(JSON.parse(await decode(answer.bytes, "deflate")), ITEMS);
    });

    if (transport === "socket") {
      // The runtimes' fetch differ in what they offer by default (Deno: "gzip,br"; Bun:
      // "gzip, deflate, br, zstd"; Node's undici: "gzip, deflate"), but every one offers gzip,
      // which compress() prefers, and decodes it itself while keeping the Content-Encoding
      // header: the same answer to read on all four.
      it("the runtime's fetch offers gzip by default, gets it, and decodes it itself", async () => {
        seen.length = 0;
        const response = await reach().send("GET", "/items");
        assert.equal(seen.length, 1);
        assert.match(seen[0], /\bgzip\b/, `${RUNTIME}'s fetch sent Accept-Encoding: ${seen[0]}`);
        assert.equal(response.headers.get("content-encoding"), "gzip");
        assert.deepEqual(await response.json(), ITEMS);
      });
    }
  });
}
