// Global middleware, @UseMiddleware on classes and methods, and middleware beans, over app.fetch
// and over a real socket on whichever runtime runs the suite.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import { cors } from "hono/cors";
import {
  Autowired,
  bootstrap,
  Component,
  DefinitionError,
  GetMapping,
  type Middleware,
  PostMapping,
  RequestBody,
  RequestMapping,
  ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { openApi } from "../../openapi.ts";
import { type Client, memoryLogger, reach, TRANSPORTS } from "../helpers.ts";

const events: string[] = [];
const recorder = (name: string) => async (_c: Context, next: Next): Promise<void> => {
  events.push(`${name}>`);
  await next();
  events.push(`<${name}`);
};

@Component()
class TokenStore {
  readonly tokens: ReadonlySet<string> = new Set(["good-token"]);
}

@Component()
class AuthGuard implements Middleware {
  @Autowired(TokenStore)
  private store!: TokenStore;

  async handle(c: Context, next: Next): Promise<Response | void> {
    const token = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1];
    if (token === undefined || !this.store.tokens.has(token)) {
      return c.json({ error: "unauthorized" }, 401);
    }
    await next();
  }
}

@RestController()
@RequestMapping("/ordered")
@UseMiddleware(recorder("class-1"))
@UseMiddleware(recorder("class-2"), recorder("class-3"))
class Ordered {
  @GetMapping("/one")
  @UseMiddleware(recorder("method-1"), recorder("method-2"))
  one(): { ok: boolean } {
    events.push("handler");
    return { ok: true };
  }

  @PostMapping("/body", RequestBody())
  body(value: unknown): unknown {
    return value;
  }
}

@RestController()
@UseMiddleware(AuthGuard)
class Secured {
  @GetMapping("/secured")
  secured(): string {
    return "the secret";
  }
}

@RestController()
class HeaderRoutes {
  @GetMapping("/prepared")
  @UseMiddleware(async (c: Context, next: Next) => {
    c.header("x-before", "set before next");
    await next();
  })
  prepared(): { ok: boolean } {
    return { ok: true };
  }

  @GetMapping("/after")
  @UseMiddleware(async (c: Context, next: Next) => {
    await next();
    c.res.headers.set("x-after", String(c.res.status));
  })
  after(): string {
    return "text";
  }
}

// Echoes a query parameter into a header, before or after the route answers.
const echo = (where: "before" | "after") => async (c: Context, next: Next): Promise<void> => {
  if (where === "before") c.header("x-echo", c.req.query("v") ?? "");
  await next();
  if (where === "after") c.res.headers.set("x-echo", c.req.query("v") ?? "");
};

@RestController()
class Echoed {
  @GetMapping("/echo/before")
  @UseMiddleware(echo("before"))
  before(): string {
    return "ok";
  }
  @GetMapping("/echo/after")
  @UseMiddleware(echo("after"))
  after(): string {
    return "ok";
  }
}

// Headers a middleware sets before the route answers are defaults: the route's own win, cookies
// add up, Vary lists both.
const defaults = async (c: Context, next: Next): Promise<void> => {
  c.header("set-cookie", "csrf=tok; Path=/", { append: true });
  c.header("cache-control", "no-store");
  c.header("vary", "Origin");
  c.header("x-default", "from middleware");
  await next();
};

@RestController()
@UseMiddleware(defaults)
class Login {
  @GetMapping("/login")
  login(): ResponseEntity {
    return ResponseEntity.ok().withHeader("Set-Cookie", "session=abc; HttpOnly")
      .withHeader("Cache-Control", "max-age=60").withHeader("Vary", "Accept, origin")
      .withJson({ ok: true });
  }
  @GetMapping("/plain")
  plain(): Response {
    const headers = new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"]]);
    return new Response("plain", { headers });
  }
  @GetMapping("/redirect")
  redirect(): Response {
    return Response.redirect("http://example.test/elsewhere", 303);
  }
  @GetMapping("/late")
  @UseMiddleware(async (_c: Context, next: Next) => {
    await next();
    throw new Error("late failure");
  })
  late(): ResponseEntity {
    return ResponseEntity.ok("x").withHeader("x-route", "1");
  }
  @GetMapping("/fake")
  @UseMiddleware(() =>
    Promise.resolve({ status: 200, headers: new Headers() } as unknown as Response)
  )
  fake(): string {
    return "never";
  }
}

for (const transport of TRANSPORTS) {
  describe(`headers a middleware sets before next() over ${transport}`, () => {
    const logger = memoryLogger();
    let client: Client;
    before(async () => {
      const app = await bootstrap({
        controllers: [Login],
        logger,
        middleware: [cors({ origin: "https://a.test" })],
      });
      client = await reach(app, transport);
    });
    after(() => client.close());

    it("give way to the route's own, add cookies and merge Vary", async () => {
      const response = await client.send("GET", "/login", {
        headers: { origin: "https://a.test" },
      });
      assert.equal(response.status, 200);
      assert.deepEqual(response.headers.getSetCookie().sort(), [
        "csrf=tok; Path=/",
        "session=abc; HttpOnly",
      ]);
      assert.equal(response.headers.get("cache-control"), "max-age=60");
      // cors() appends its own `Origin` after the route: the tokens are what matters.
      const vary = (response.headers.get("vary") ?? "").split(",").map((t) =>
        t.trim().toLowerCase()
      );
      assert.deepEqual([...new Set(vary)].sort(), ["accept", "origin"]);
      assert.ok(vary.indexOf("accept") < vary.indexOf("origin"), "the route's own come first");
      assert.equal(response.headers.get("x-default"), "from middleware");
      assert.equal(response.headers.get("access-control-allow-origin"), "https://a.test");
      assert.deepEqual(await response.json(), { ok: true });
    });

    it("reach a returned Response, its cookies kept, and a redirect's immutable headers", async () => {
      const plain = await client.send("GET", "/plain");
      assert.deepEqual(plain.headers.getSetCookie().sort(), ["a=1", "b=2", "csrf=tok; Path=/"]);
      assert.equal(plain.headers.get("cache-control"), "no-store");
      assert.equal(await plain.text(), "plain");
      const redirect = await client.send("GET", "/redirect");
      assert.equal(redirect.status, 303);
      assert.equal(redirect.headers.get("location"), "http://example.test/elsewhere");
      assert.equal(redirect.headers.get("x-default"), "from middleware");
      await redirect.arrayBuffer();
    });

    it("stay on an error thrown after next(), the route's own do not", async () => {
      logger.lines.length = 0;
      const response = await client.send("GET", "/late", { headers: { origin: "https://a.test" } });
      assert.equal(response.status, 500);
      assert.equal(response.headers.get("access-control-allow-origin"), "https://a.test");
      assert.equal(response.headers.get("x-default"), "from middleware");
      assert.equal(response.headers.get("x-route"), null);
      assert.equal((await response.json()).status, 500);
      assert.equal(logger.lines.length, 1);
    });

    it("a middleware answering with what is not a Response is a 500 naming it", async () => {
      logger.lines.length = 0;
      const response = await client.send("GET", "/fake");
      assert.equal(response.status, 500);
      assert.equal((await response.json()).status, 500);
      assert.equal(logger.lines.length, 1);
      assert.match(String((logger.lines[0][1] as Error).message), /not a Response/);
    });
  });

  describe(`a header a middleware sets over ${transport}`, () => {
    const logger = memoryLogger();
    let client: Client;
    before(async () => {
      client = await reach(await bootstrap({ controllers: [Echoed], logger }), transport);
    });
    after(() => client.close());

    it("is held to what HTTP allows: a control character is the default 500, nothing of it sent", async () => {
      for (const where of ["before", "after"]) {
        for (const byte of [0x01, 0x08, 0x0b, 0x1b, 0x7f]) {
          logger.lines.length = 0;
          const v = `a${String.fromCharCode(byte)}b`;
          const response = await client.send("GET", `/echo/${where}?v=${encodeURIComponent(v)}`);
          const label = `${where} 0x${byte.toString(16)}`;
          assert.equal(response.status, 500, label);
          assert.equal(response.headers.get("x-echo"), null, label);
          assert.equal((await response.json()).status, 500, label);
          assert.equal(logger.lines.length, 1, label);
          assert.match(String((logger.lines[0][1] as Error).message), /x-echo/, label);
        }
        const fine = await client.send("GET", `/echo/${where}?v=plain%20text`);
        assert.equal(fine.status, 200);
        assert.equal(fine.headers.get("x-echo"), "plain text");
        await fine.arrayBuffer();
      }
    });

    it("by global middleware too, on a route and on Thaw's own 404", async () => {
      const globalLogger = memoryLogger();
      const app = await bootstrap({
        controllers: [Ordered],
        middleware: [echo("after")],
        logger: globalLogger,
      });
      const global = await reach(app, transport);
      try {
        for (const path of ["/ordered/one", "/nowhere"]) {
          const response = await global.send("GET", `${path}?v=a%1Bb`);
          assert.equal(response.status, 500, path);
          assert.equal(response.headers.get("x-echo"), null, path);
          await response.arrayBuffer();
        }
        assert.equal(globalLogger.lines.length, 2);
      } finally {
        await global.close();
      }
    });
  });

  describe(`middleware over ${transport}`, () => {
    const logger = memoryLogger();
    let client: Client;

    before(async () => {
      const app = await bootstrap({
        controllers: [Ordered, Secured, HeaderRoutes],
        components: [TokenStore, AuthGuard],
        middleware: [recorder("global-1"), recorder("global-2")],
        maxBodySize: 64,
        logger,
        openapi: openApi(),
      });
      client = await reach(app, transport);
    });
    after(() => client.close());

    const send = async (method: string, path: string, init?: Parameters<Client["send"]>[2]) => {
      events.length = 0;
      const response = await client.send(method, path, init);
      await response.arrayBuffer();
      return response;
    };

    it("runs global, then class (as written), then method middleware, and unwinds in reverse", async () => {
      const response = await send("GET", "/ordered/one");
      assert.equal(response.status, 200);
      assert.deepEqual(events, [
        "global-1>",
        "global-2>",
        "class-1>",
        "class-2>",
        "class-3>",
        "method-1>",
        "method-2>",
        "handler",
        "<method-2",
        "<method-1",
        "<class-3",
        "<class-2",
        "<class-1",
        "<global-2",
        "<global-1",
      ]);
    });

    it("runs global middleware around the framework's own answers and the OpenAPI routes", async () => {
      const cases: [string, string, number, Parameters<Client["send"]>[2]?][] = [
        ["GET", "/nowhere", 404],
        ["DELETE", "/ordered/one", 405],
        ["OPTIONS", "/ordered/one", 204],
        ["POST", "/ordered/body", 413, { json: { text: "x".repeat(100) } }],
        ["POST", "/ordered/body", 415, { body: "{}", headers: { "content-type": "text/plain" } }],
        ["GET", "/openapi.json", 200],
      ];
      for (const [method, path, status, init] of cases) {
        const response = await send(method, path, init);
        assert.equal(response.status, status, `${method} ${path}`);
        const expected = ["global-1>", "global-2>", "<global-2", "<global-1"];
        if (path.startsWith("/ordered/body")) {
          // The route's class middleware runs too: the 413 and 415 come from its handler.
          expected.splice(
            2,
            0,
            "class-1>",
            "class-2>",
            "class-3>",
            "<class-3",
            "<class-2",
            "<class-1",
          );
        }
        assert.deepEqual(events, expected, `${method} ${path}`);
      }
    });

    it("a guard bean with an injected store answers 401, and lets the right token through", async () => {
      const none = await client.send("GET", "/secured");
      assert.equal(none.status, 401);
      assert.deepEqual(await none.json(), { error: "unauthorized" });
      const wrong = await client.send("GET", "/secured", {
        headers: { authorization: "Bearer bad-token" },
      });
      assert.equal(wrong.status, 401);
      await wrong.arrayBuffer();
      const right = await client.send("GET", "/secured", {
        headers: { authorization: "Bearer good-token" },
      });
      assert.equal(right.status, 200);
      assert.equal(await right.text(), "the secret");
    });

    it("a guard on one controller leaves the others alone", async () => {
      const response = await send("GET", "/ordered/one");
      assert.equal(response.status, 200);
    });

    it("a header set before next() reaches a route's answer; one set after next() too", async () => {
      const prepared = await send("GET", "/prepared");
      assert.equal(prepared.headers.get("x-before"), "set before next");
      assert.equal(prepared.headers.get("content-type"), "application/json");
      const afterNext = await send("GET", "/after");
      assert.equal(afterNext.headers.get("x-after"), "200");
      assert.equal(afterNext.headers.get("content-type"), "text/plain; charset=utf-8");
    });
  });
}

describe("a body a middleware read first", () => {
  const reader = (how: "text" | "json" | "arrayBuffer") => async (c: Context, next: Next) => {
    await c.req[how]().catch(() => undefined);
    await next();
  };
  @RestController()
  class Echo {
    @PostMapping("/echo", RequestBody())
    echo(body: unknown): unknown {
      return { body };
    }
  }
  const post = (app: { fetch: (r: Request) => Response | Promise<Response> }, bytes: number[]) =>
    app.fetch(
      new Request("http://x/echo", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Uint8Array(bytes),
      }),
    );

  it("binds as it would have, and bytes that are not UTF-8 stay a 400 however it was read", async () => {
    for (const how of ["text", "json", "arrayBuffer"] as const) {
      const app = await bootstrap({ controllers: [Echo], middleware: [reader(how)] });
      const fine = await post(app, [...new TextEncoder().encode('"caf\u00e9"')]);
      assert.equal(fine.status, 200, how);
      assert.deepEqual(await fine.json(), { body: "caf\u00e9" }, how);
      // Read as text first, a U+FFFD the client sent cannot be told from bytes that were not
      // UTF-8: refused too. Kept as bytes, it binds.
      const replacement = await post(app, [...new TextEncoder().encode('"\ufffd"')]);
      assert.equal(replacement.status, how === "arrayBuffer" ? 200 : 400, how);
      await replacement.arrayBuffer();
      const bad = await post(app, [0x22, 0xff, 0x22]);
      assert.equal(bad.status, 400, how);
      assert.match((await bad.json()).error, /not valid UTF-8/, how);
    }
  });
});

describe("middleware: what would silently not run is refused", () => {
  it("app.hono refuses what would be added after bootstrap, and says where it goes", async () => {
    const app = await bootstrap({ controllers: [Ordered] });
    const late = recorder("late");
    const attempts: [string, () => unknown][] = [
      ["use", () => app.hono.use("*", late)],
      ["all", () => app.hono.all("*", late)],
      ["on", () => app.hono.on("GET", "/x", late)],
      ["get", () => app.hono.get("/x", late)],
      ["post", () => app.hono.post("/x", late)],
      ["notFound", () => app.hono.notFound((c) => c.text("mine", 404))],
      ["onError", () => app.hono.onError((_e, c) => c.text("mine", 500))],
    ];
    for (const [method, attempt] of attempts) {
      assert.throws(
        attempt,
        (error: unknown) =>
          error instanceof TypeError && error.message.includes(`app.hono.${method}()`) &&
          error.message.includes("bootstrap({ middleware") &&
          error.message.includes("@UseMiddleware"),
        method,
      );
    }
    // The app still serves, and mounts in another as it is.
    const { Hono } = await import("hono");
    const parent = new Hono().route("/api", app.hono);
    const events0 = events.length;
    const mounted = await parent.fetch(new Request("http://x/api/ordered/one"));
    assert.equal(mounted.status, 200);
    assert.ok(events.length > events0);
  });

  it("a subclass that maps a method again keeps its parent's method middleware, and adds its own", async () => {
    class BaseController {
      @GetMapping("/secret")
      @UseMiddleware(recorder("parent-guard"))
      secret(): string {
        return "s";
      }
      @GetMapping("/inherited")
      inherited(): string {
        return "i";
      }
    }
    @RestController()
    class Sub extends BaseController {
      @GetMapping("/secret2")
      @UseMiddleware(recorder("child"))
      override secret(): string {
        return "s2";
      }
      @UseMiddleware(recorder("added"))
      override inherited(): string {
        return "i2";
      }
    }
    const app = await bootstrap({ controllers: [Sub] });
    events.length = 0;
    assert.equal(await (await app.fetch(new Request("http://x/secret2"))).text(), "s2");
    assert.deepEqual(events, ["parent-guard>", "child>", "<child", "<parent-guard"]);
    events.length = 0;
    assert.equal((await app.fetch(new Request("http://x/inherited"))).status, 200);
    assert.deepEqual(events, ["added>", "<added"]);
  });

  it("a middleware bean that is not registered is a startup error naming the route", async () => {
    await assert.rejects(
      bootstrap({ controllers: [Secured] }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("Secured.secured (GET /secured)") &&
        error.message.includes("AuthGuard"),
    );
  });

  it("a global middleware bean that is not registered names the option", async () => {
    await assert.rejects(
      bootstrap({ controllers: [Ordered], middleware: [AuthGuard] }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("bootstrap({ middleware }) item 1") &&
        error.message.includes("AuthGuard"),
    );
  });

  it("a middleware class without handle(c, next) is a startup error", async () => {
    @Component()
    class NoHandle {
      check(): void {}
    }
    @RestController()
    @UseMiddleware(NoHandle as never)
    class Guarded {
      @GetMapping("/g")
      g(): string {
        return "g";
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Guarded], components: [NoHandle] }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("NoHandle has no handle(c, next)"),
    );
  });

  it("@UseMiddleware on a method without a mapping is a startup error", async () => {
    @RestController()
    class Unmapped {
      @GetMapping("/u")
      u(): string {
        return "u";
      }
      @UseMiddleware(recorder("never"))
      helper(): void {}
    }
    await assert.rejects(
      bootstrap({ controllers: [Unmapped] }),
      (error: unknown) =>
        error instanceof DefinitionError && error.message.includes("Unmapped.helper") &&
        error.message.includes("without a mapping"),
    );
  });

  it("@UseMiddleware on a bean that is not a controller is a startup error", async () => {
    @Component()
    @UseMiddleware(recorder("never"))
    class NotAController {}
    await assert.rejects(
      bootstrap({ components: [NotAController] }),
      (error: unknown) =>
        error instanceof DefinitionError && error.message.includes("NotAController") &&
        error.message.includes("not a @RestController"),
    );
  });

  it("@UseMiddleware refuses what is not a function, and an empty list", () => {
    assert.throws(() => UseMiddleware(), TypeError);
    assert.throws(() => UseMiddleware("cors" as never), /item 1 is a string/);
    assert.throws(() => UseMiddleware(recorder("a"), null as never), /item 2 is a null/);
  });
});
