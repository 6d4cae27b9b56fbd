// `server.request-timeout`: a request whose handler or middleware never answers is answered 503
// through the error path, over app.fetch and over a real socket on whichever runtime runs the suite.
import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import {
  bootstrap,
  Component,
  type ErrorController,
  GetMapping,
  type HttpRequest,
  type HttpStatus,
  type ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { type Client, memoryLogger, reach, TRANSPORTS } from "../helpers.ts";

const never = () => new Promise<never>(() => {});

// What a test releases, and what tells it that the work the timeout left behind has ended.
let release: () => void = () => {};
let released = Promise.resolve();
let chainEnded: () => void = () => {};
function reset(): Promise<void> {
  released = new Promise<void>((resolve) => release = resolve);
  return new Promise<void>((resolve) => chainEnded = resolve);
}

const stalls = async (_c: Context, _next: Next): Promise<void> => await never();

@RestController()
class Slow {
  @GetMapping("/hang/{id}")
  hang(): Promise<string> {
    return never();
  }

  @GetMapping("/late")
  async late(): Promise<string> {
    await released;
    return "late";
  }

  @GetMapping("/late-failure")
  async lateFailure(): Promise<string> {
    await released;
    throw new Error("failed after the timeout");
  }

  @GetMapping("/guarded")
  @UseMiddleware(stalls)
  guarded(): string {
    return "never reached";
  }

  @GetMapping("/fast")
  fast(): string {
    return "fast";
  }
}

// Sets a header before the route (kept on the 503), one after it (never on the 503), and says
// when the rest of the chain has ended.
const around = async (c: Context, next: Next): Promise<void> => {
  c.header("x-before", "set");
  if (c.req.path === "/stalled-globally") await never();
  await next();
  c.header("x-after", "set");
  chainEnded();
};

const TIMEOUT = 200;
const LINE = (route: string) =>
  `[thaw] ${route} did not answer within ${TIMEOUT} ms (server.request-timeout): answered 503, ` +
  "and what it still does is left to run, unread";

let client: Client | undefined;
afterEach(async () => {
  release();
  await client?.close();
  client = undefined;
});

for (const transport of TRANSPORTS) {
  describe(`server.request-timeout over ${transport}`, () => {
    async function start(components: (new () => unknown)[] = []) {
      const log = memoryLogger();
      const app = await bootstrap({
        controllers: [Slow],
        components,
        middleware: [around],
        config: { server: { "request-timeout": TIMEOUT } },
        logger: log,
      });
      client = await reach(app, transport);
      return { client, log };
    }

    it("answers a handler that never settles 503, keeping the middleware's headers, logged with the route", async () => {
      const { client, log } = await start();
      const res = await client.send("GET", "/hang/7");
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("x-before"), "set");
      assert.equal(res.headers.get("x-after"), null);
      const body = await res.json();
      assert.equal(body.status, 503);
      assert.equal(body.error, `No answer within ${TIMEOUT} ms`);
      assert.deepEqual(log.lines.map(([line]) => line), [LINE("GET /hang/{id}")]);
    });

    it("answers a route's middleware that never calls next 503, named by the route", async () => {
      const { client, log } = await start();
      const res = await client.send("GET", "/guarded");
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("x-before"), "set");
      await res.body?.cancel();
      assert.deepEqual(log.lines.map(([line]) => line), [LINE("GET /guarded")]);
    });

    it("answers global middleware that never calls next 503, named by the path when no route matches", async () => {
      const { client, log } = await start();
      const res = await client.send("GET", "/stalled-globally");
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("x-before"), "set");
      await res.body?.cancel();
      assert.deepEqual(log.lines.map(([line]) => line), [LINE("GET /stalled-globally (no route)")]);
    });

    it("ignores what a handler answers after the timeout", async () => {
      const { client, log } = await start();
      const ended = reset();
      const res = await client.send("GET", "/late");
      assert.equal(res.status, 503);
      release();
      await ended;
      assert.equal(res.headers.get("x-after"), null);
      assert.equal((await res.json()).status, 503);
      assert.deepEqual(log.lines.map(([line]) => line), [LINE("GET /late")]);
    });

    it("reports a failure after the timeout where it happens, and nothing else", async () => {
      const { client, log } = await start();
      const ended = reset();
      const res = await client.send("GET", "/late-failure");
      assert.equal(res.status, 503);
      await res.body?.cancel();
      release();
      await ended;
      assert.deepEqual(log.lines.map(([line]) => line), [
        LINE("GET /late-failure"),
        "[thaw] Slow.lateFailure (GET /late-failure) failed:",
      ]);
    });

    it("gives the 503 to the errorController bean", async () => {
      @Component("errorController")
      class Errors implements ErrorController {
        handleError(
          request: HttpRequest,
          response: ResponseEntity,
          status: HttpStatus,
        ): void {
          response.withJson({ path: request.getPath(), status: status.getValue() });
        }
      }
      const { client } = await start([Errors]);
      const res = await client.send("GET", "/hang/1");
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("x-before"), "set");
      assert.deepEqual(await res.json(), { path: "/hang/1", status: 503 });
    });

    it("leaves a request answered in time as it is", async () => {
      const { client, log } = await start();
      const res = await client.send("GET", "/fast");
      assert.equal(res.status, 200);
      assert.equal(await res.text(), "fast");
      assert.equal(res.headers.get("x-after"), "set");
      assert.deepEqual(log.lines, []);
    });
  });
}

describe("server.request-timeout", () => {
  it("is off by default: the app adds no middleware for it", async () => {
    const app = await bootstrap({ controllers: [Slow] });
    const res = await app.fetch(new Request("http://x/fast"));
    assert.equal(await res.text(), "fast");
    // Hono's one-handler path: no middleware matched the route.
    assert.equal(app.hono.routes.filter((r) => r.method === "ALL").length, 0);
  });

  it("refuses a value that is not a whole number of milliseconds, naming the key", async () => {
    await assert.rejects(
      bootstrap({ controllers: [Slow], config: { server: { "request-timeout": "soon" } } }),
      /server\.request-timeout/,
    );
  });
});
