// Hono's own middleware on a Thaw app that reads or guards the request (request-id, logger, timing,
// bearer-auth, jwt, body-limit, validator), given to `bootstrap({ middleware })` (and some to
// `@UseMiddleware`), over `app.fetch` and over a real socket; and the order middleware runs in.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, MiddlewareHandler, Next } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { etag } from "hono/etag";
import { jwt, sign } from "hono/jwt";
import { logger } from "hono/logger";
import { requestId } from "hono/request-id";
import { timing } from "hono/timing";
import { validator } from "hono/validator";
import {
  bootstrap,
  GetMapping,
  PostMapping,
  RequestBody,
  RequestMapping,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { memoryLogger, TRANSPORTS } from "../helpers.ts";
import {
  Catalog,
  errorBody,
  FRAMEWORK_ANSWERS,
  JWT_SECRET,
  PAGE,
  type RawAnswer,
  type RawInit,
  target,
  TOKEN,
  withApp,
} from "./hono_middleware_fixtures.ts";

for (const transport of TRANSPORTS) {
  describe(`hono/request-id over ${transport}`, () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const reach = withApp(transport, () => ({
      controllers: [Catalog],
      logger: memoryLogger(),
      maxBodySize: 64,
      middleware: [requestId()],
    }));

    it("gives a route's answer a fresh X-Request-Id, another for each request", async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const response = await reach().send("GET", "/items/1");
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), { id: 1 });
        assert.match(response.headers.get("x-request-id") ?? "", UUID);
        ids.add(response.headers.get("x-request-id")!);
      }
      assert.equal(ids.size, 3);
    });

    it("keeps a client's well-formed id and replaces one that is not", async () => {
      const kept = await reach().send("GET", "/items/1", {
        headers: { "x-request-id": "client-id_42=" },
      });
      assert.equal(kept.headers.get("x-request-id"), "client-id_42=");
      await kept.arrayBuffer();
      for (const bad of ["has space", "semi;colon", "x".repeat(256)]) {
        const replaced = await reach().send("GET", "/items/1", {
          headers: { "x-request-id": bad },
        });
        assert.match(replaced.headers.get("x-request-id") ?? "", UUID, bad);
        await replaced.arrayBuffer();
      }
    });

    it("is on Thaw's 404, 405, OPTIONS, 413 and 415 answers and on a route's errors", async () => {
      const cases: (readonly [string, string, number, string?])[] = [
        ...FRAMEWORK_ANSWERS,
        ["GET", "/conflict", 409],
        ["GET", "/broken", 500],
        ["POST", "/items", 413, JSON.stringify({ name: "x".repeat(100) })],
        ["POST", "/items", 415, "text"],
      ];
      for (const [method, path, status, body] of cases) {
        const response = await reach().send(method, path, {
          headers: {
            "x-request-id": `id-${status}`,
            "content-type": status === 415 ? "text/plain" : "application/json",
          },
          body: body ?? null,
        });
        assert.equal(response.status, status, `${method} ${path}`);
        assert.equal(response.headers.get("x-request-id"), `id-${status}`, `${method} ${path}`);
        await response.arrayBuffer();
      }
    });
  });

  describe(`hono/logger over ${transport}`, () => {
    const lines: string[] = [];
    const ESC = String.fromCharCode(27);
    const plain = (line: string) => line.replaceAll(new RegExp(`${ESC}\\[[0-9;]*m`, "g"), "");
    const reach = withApp(transport, () => ({
      controllers: [Catalog],
      logger: memoryLogger(),
      middleware: [logger((line) => void lines.push(plain(line)))],
    }));

    it("prints the request, then its status and time, to the function it is given", async () => {
      const cases: (readonly [string, string, number])[] = [
        ["GET", "/items/7", 200],
        ...FRAMEWORK_ANSWERS,
        ["GET", "/conflict", 409],
      ];
      for (const [method, path, status] of cases) {
        lines.length = 0;
        const response = await reach().send(method, path);
        assert.equal(response.status, status);
        await response.arrayBuffer();
        assert.equal(lines.length, 2, `${method} ${path}: ${lines}`);
        assert.equal(lines[0], `<-- ${method} ${path}`);
        assert.match(lines[1], new RegExp(`^--> ${method} ${path} ${status} \\d+(ms|s)$`));
      }
    });
  });

  describe(`hono/timing over ${transport}`, () => {
    @RestController()
    @UseMiddleware(timing({ totalDescription: "controller" }))
    class Timed {
      @GetMapping("/timed")
      timed(): string {
        return "timed";
      }
    }
    const reach = withApp(transport, () => ({
      controllers: [Catalog],
      logger: memoryLogger(),
      middleware: [timing({ crossOrigin: PAGE })],
    }));
    const TOTAL = /^total;dur=\d+(\.\d)?;desc="Total Response Time"$/;

    it("adds Server-Timing and Timing-Allow-Origin to routes, errors and Thaw's own answers", async () => {
      const cases: (readonly [string, string, number])[] = [
        ["GET", "/items", 200],
        ...FRAMEWORK_ANSWERS,
        ["GET", "/conflict", 409],
        ["GET", "/broken", 500],
      ];
      for (const [method, path, status] of cases) {
        const response = await reach().send(method, path);
        assert.equal(response.status, status);
        assert.match(response.headers.get("server-timing") ?? "", TOTAL, `${method} ${path}`);
        assert.equal(response.headers.get("timing-allow-origin"), PAGE);
        await response.arrayBuffer();
      }
    });

    it("global and on a controller at once: the inner one sees the metric and passes on", async () => {
      // timing() finds the metric the outer one set and `return await next()`s: what next()
      // resolves to (Hono's Context) is no answer of its own, as Hono's compose has it.
      const both = await target(
        await bootstrap({ controllers: [Timed], middleware: [timing()] }),
        transport,
      );
      try {
        const response = await both.send("GET", "/timed");
        assert.equal(response.status, 200);
        assert.match(response.headers.get("server-timing") ?? "", TOTAL);
        assert.equal(await response.text(), "timed");
      } finally {
        await both.close();
      }
    });

    it("on a controller (@UseMiddleware): its own metric", async () => {
      const own = await target(await bootstrap({ controllers: [Timed] }), transport);
      try {
        const response = await own.send("GET", "/timed");
        assert.match(
          response.headers.get("server-timing") ?? "",
          /^total;dur=[\d.]+;desc="controller"$/,
        );
        assert.equal(await response.text(), "timed");
      } finally {
        await own.close();
      }
    });
  });

  describe(`hono/bearer-auth over ${transport}`, () => {
    @RestController()
    @RequestMapping("/admin")
    @UseMiddleware(bearerAuth({ token: TOKEN }))
    class Admin {
      @GetMapping("/stats")
      stats(): { users: number } {
        return { users: 3 };
      }
    }
    const reach = withApp(transport, () => ({ controllers: [Catalog, Admin] }));
    const challenge = async (
      headers: Record<string, string>,
      status: number,
      wwwAuthenticate: string,
    ) => {
      const response = await reach().send("GET", "/admin/stats", { headers });
      assert.equal(response.headers.get("www-authenticate"), wwwAuthenticate);
      await errorBody(response, status);
    };

    it("no Authorization: 401 with WWW-Authenticate and Thaw's error body", async () => {
      await challenge({}, 401, 'Bearer realm=""');
    });

    it('a token that is not the one: 401, error="invalid_token"', async () => {
      await challenge({ authorization: "Bearer wrong" }, 401, 'Bearer error="invalid_token"');
    });

    it('another scheme, or a malformed token: 400, error="invalid_request"', async () => {
      await challenge({ authorization: "Basic YTpi" }, 400, 'Bearer error="invalid_request"');
      await challenge({ authorization: "Bearer a b" }, 400, 'Bearer error="invalid_request"');
    });

    it("the token: the route answers", async () => {
      const response = await reach().send("GET", "/admin/stats", {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("www-authenticate"), null);
      assert.deepEqual(await response.json(), { users: 3 });
    });

    it("leaves the other controllers alone", async () => {
      const response = await reach().send("GET", "/items/2");
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id: 2 });
    });

    it("global: every answer needs the token, Thaw's 404, 405 and OPTIONS included", async () => {
      const own = await target(
        await bootstrap({ controllers: [Catalog], middleware: [bearerAuth({ token: TOKEN })] }),
        transport,
      );
      try {
        for (const [method, path, status] of FRAMEWORK_ANSWERS) {
          const refused = await own.send(method, path);
          assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm=""');
          await errorBody(refused, 401);
          const allowed = await own.send(method, path, {
            headers: { authorization: `Bearer ${TOKEN}` },
          });
          assert.equal(allowed.status, status, `${method} ${path}`);
          await allowed.arrayBuffer();
        }
      } finally {
        await own.close();
      }
    });

    it("global after cors(): a preflight passes without a token, and the 401 carries CORS", async () => {
      const own = await target(
        await bootstrap({
          controllers: [Catalog],
          middleware: [cors({ origin: PAGE }), bearerAuth({ token: TOKEN })],
        }),
        transport,
      );
      try {
        const preflight = await own.send("OPTIONS", "/items", {
          headers: { origin: PAGE, "access-control-request-method": "GET" },
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get("access-control-allow-origin"), PAGE);
        await preflight.arrayBuffer();
        const refused = await own.send("GET", "/items", { headers: { origin: PAGE } });
        assert.equal(refused.headers.get("access-control-allow-origin"), PAGE);
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm=""');
        await errorBody(refused, 401);
      } finally {
        await own.close();
      }
    });
  });

  describe(`hono/jwt over ${transport}`, () => {
    @RestController()
    @UseMiddleware(jwt({ secret: JWT_SECRET, alg: "HS256" }))
    class Account {
      @GetMapping("/account")
      account(): { account: string } {
        return { account: "ada" };
      }
    }
    const reach = withApp(transport, () => ({ controllers: [Catalog, Account] }));
    const now = () => Math.floor(Date.now() / 1000);
    const refused = async (authorization: string | undefined, error: string) => {
      const response = await reach().send("GET", "/account", {
        headers: authorization === undefined ? {} : { authorization },
      });
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /^Bearer realm="[^"]*\/account",/);
      assert.match(challenge, new RegExp(`,error="${error}",`));
      await errorBody(response, 401);
    };

    it("a token signed with the secret: the route answers", async () => {
      const token = await sign({ sub: "ada", exp: now() + 3600 }, JWT_SECRET, "HS256");
      const response = await reach().send("GET", "/account", {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { account: "ada" });
    });

    it('a token signed with another secret: 401, error="invalid_token"', async () => {
      const forged = await sign({ sub: "ada", exp: now() + 3600 }, `${JWT_SECRET}-other`, "HS256");
      await refused(`Bearer ${forged}`, "invalid_token");
    });

    it('an expired token: 401, error="invalid_token"', async () => {
      const expired = await sign({ sub: "ada", exp: now() - 60 }, JWT_SECRET, "HS256");
      await refused(`Bearer ${expired}`, "invalid_token");
    });

    it("garbage, no token, or another scheme: 401", async () => {
      await refused("Bearer not.a.jwt", "invalid_token");
      await refused(undefined, "invalid_request");
      await refused("Token abc", "invalid_request");
    });

    it("global: Thaw's 404 needs the token too, and answers 404 with it", async () => {
      const own = await target(
        await bootstrap({
          controllers: [Catalog],
          middleware: [jwt({ secret: JWT_SECRET, alg: "HS256" })],
        }),
        transport,
      );
      try {
        const without = await own.send("GET", "/nowhere");
        assert.match(without.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
        await errorBody(without, 401);
        const token = await sign({ sub: "ada", exp: now() + 60 }, JWT_SECRET, "HS256");
        const found = await own.send("GET", "/nowhere", {
          headers: { authorization: `Bearer ${token}` },
        });
        await errorBody(found, 404);
      } finally {
        await own.close();
      }
    });
  });

  describe(`hono/body-limit over ${transport}`, () => {
    const small = JSON.stringify({ name: "fits" });
    const large = JSON.stringify({ name: "x".repeat(200) });
    const halves = (
      text: string,
    ) => [text.slice(0, text.length >> 1), text.slice(text.length >> 1)];

    @RestController()
    class Notes {
      @PostMapping("/notes", RequestBody())
      @UseMiddleware(bodyLimit({ maxSize: 8, onError: (c) => c.json({ tooLarge: true }, 413) }))
      create(body: unknown): unknown {
        return body;
      }
    }
    const reach = withApp(transport, () => ({
      controllers: [Catalog, Notes],
      logger: memoryLogger(),
      middleware: [bodyLimit({ maxSize: 64 })],
    }));
    const post = (path: string, init: RawInit) =>
      reach().raw("POST", path, {
        ...init,
        headers: { "content-type": "application/json", ...init.headers },
      });
    const json = (answer: RawAnswer) => JSON.parse(new TextDecoder().decode(answer.bytes));

    it("a body within the limit, of declared length or chunked, reaches the route", async () => {
      for (const init of [{ body: small }, { chunks: halves(small) }]) {
        const answer = await post("/items", init);
        assert.equal(answer.status, 200, JSON.stringify(init));
        assert.deepEqual(json(answer), { created: { name: "fits" } });
      }
    });

    it("a body over the limit, of declared length or chunked: 413 with Thaw's error body", async () => {
      for (const init of [{ body: large }, { chunks: halves(large) }]) {
        const answer = await post("/items", init);
        assert.equal(answer.status, 413, JSON.stringify(init).slice(0, 40));
        assert.equal(answer.headers.get("content-type"), "application/json");
        assert.equal(json(answer).status, 413);
      }
    });

    it("is ahead of routing: a large body to a path with no route is 413, a small one 404", async () => {
      const refused = await post("/nowhere", { body: large });
      assert.equal(refused.status, 413);
      const missing = await post("/nowhere", { body: small });
      assert.equal(missing.status, 404);
      assert.equal(json(missing).status, 404);
    });

    it("on a method (@UseMiddleware): its own limit and its own answer", async () => {
      const fits = await post("/notes", { body: '{"a":1}' });
      assert.equal(fits.status, 200);
      assert.deepEqual(json(fits), { a: 1 });
      for (const init of [{ body: small }, { chunks: halves(small) }]) {
        const answer = await post("/notes", init);
        assert.equal(answer.status, 413);
        assert.deepEqual(json(answer), { tooLarge: true });
      }
    });
  });

  describe(`hono/validator before RequestBody() over ${transport}`, () => {
    @RestController()
    class Checked {
      @PostMapping("/checked", RequestBody())
      @UseMiddleware(
        validator(
          "json",
          (value, c: Context) =>
            typeof value === "object" && value !== null && "name" in value
              ? value
              : c.json({ invalid: true }, 422),
        ),
      )
      create(body: unknown): unknown {
        return body;
      }
    }
    const reach = withApp(transport, () => ({ controllers: [Checked] }));
    const post = (body: string) =>
      reach().send("POST", "/checked", {
        headers: { "content-type": "application/json" },
        body,
      });

    it("a body the validator refuses is its 422", async () => {
      const response = await post('{"other":1}');
      assert.equal(response.status, 422);
      assert.deepEqual(await response.json(), { invalid: true });
    });

    // Hono's validator reads the body with c.req.json(), which Hono keeps for a later read, and
    // ends in `return await next()`. RequestBody() must still get the body on every transport: on
    // Node, listen(app) hands the route the bytes it read beforehand; elsewhere the route has only
    // what Hono kept (reading the consumed c.req.raw was a 400, "Request body ended before it was
    // complete").
    it("a body the validator takes still binds to RequestBody()", async () => {
      const response = await post('{"name":"ok"}');
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.deepEqual(JSON.parse(text), { name: "ok" });
    });
  });
}

describe("a middleware that returns what next() resolves to", () => {
  // Hono's next() resolves to the Context; bodyLimit, validator, ipRestriction, methodOverride,
  // serveStatic, jwk and a nested timing() return it, and Hono's compose takes no answer from it.
  it("lets the route's answer stand, globally and on a method", async () => {
    const passOn: MiddlewareHandler = (_c, next) => next();
    @RestController()
    class Passing {
      @GetMapping("/passing")
      @UseMiddleware(passOn)
      passing(): string {
        return "passed";
      }
    }
    const logs = memoryLogger();
    const app = await bootstrap({ controllers: [Passing], middleware: [passOn], logger: logs });
    const response = await app.fetch(new Request("http://localhost/passing"));
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.equal(text, "passed");
    assert.deepEqual(logs.lines, []);
  });
});

describe("the middleware run around every request, in the bootstrap order", () => {
  it("a recording middleware first sees what the later ones do to the answer", async () => {
    const statuses: number[] = [];
    const outer = async (c: Context, next: Next) => {
      await next();
      statuses.push(c.res.status);
    };
    const app = await bootstrap({
      controllers: [Catalog],
      middleware: [outer, etag(), bearerAuth({ token: TOKEN })],
    });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const first = await app.fetch(new Request("http://localhost/items", { headers: auth }));
    const tag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const second = await app.fetch(
      new Request("http://localhost/items", { headers: { ...auth, "if-none-match": tag } }),
    );
    await second.arrayBuffer();
    const refused = await app.fetch(new Request("http://localhost/items"));
    await refused.arrayBuffer();
    assert.deepEqual(statuses, [200, 304, 401]);
  });
});
