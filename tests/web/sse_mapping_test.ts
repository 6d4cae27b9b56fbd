// `@SseMapping` through `app.fetch`: an event stream that binders, guards, middleware, exception
// handlers and the errorController treat as any route, and that the request timeout does not cut.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import {
  bootstrap,
  Component,
  type ErrorController,
  ExceptionHandler,
  GetMapping,
  HttpException,
  type HttpRequest,
  HttpStatus,
  PathVariable,
  RequestHeader,
  RequestMapping,
  ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { heartbeatOf, SseMapping } from "../../src/web/sse_mapping.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { memoryLogger } from "../helpers.ts";
import { deferred } from "../deferred.ts";

const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  new Request(`http://localhost${path}`, { headers, method });

class FeedDown extends Error {}

// What a feed that fails before its first event gives: the error, thrown as it is asked for.
const down = (error: Error): string[] => {
  throw error;
};

const guard = async (c: Context, next: Next): Promise<Response | void> => {
  if (c.req.header("authorization") !== "yes") return c.text("no", 401);
  c.header("x-guarded", "passed");
  await next();
};

const late = deferred<void>();
const finallies: string[] = [];
/** What the finally of `/events/cleans-up` did, in order, across its await. */
const cleanedUp: string[] = [];

@RestController()
@RequestMapping("/events")
class Events {
  @SseMapping("/framed")
  async *framed() {
    yield { data: "line 1\nline 2", event: "note", id: "n-1", retry: 2500 };
    yield { data: { user: "ada" } };
    yield [1, 2];
    yield "plain";
  }

  @SseMapping("/resume", RequestHeader("Last-Event-ID", { required: false }))
  async *resume(lastId: string | undefined) {
    yield { id: String(Number(lastId ?? 0) + 1), data: `after ${lastId ?? "none"}` };
  }

  @SseMapping("/numbers/{n}", PathVariable("n", Number))
  async *numbers(n: number) {
    for (let i = 1; i <= n; i++) yield i;
  }

  // Nothing to send: done before a first event.
  @SseMapping("/empty")
  async *empty() {
    finallies.push("empty");
    yield* [];
  }

  @SseMapping("/fails-first")
  async *failsFirst() {
    yield* down(new FeedDown("the feed is down"));
  }

  @SseMapping("/refused")
  async *refused() {
    yield* down(new HttpException(HttpStatus.FORBIDDEN, "not your feed"));
  }

  @SseMapping("/fails-later")
  async *failsLater() {
    try {
      yield "one";
      throw new Error("lost the feed");
    } finally {
      finallies.push("fails-later");
    }
  }

  @SseMapping("/bad-id")
  async *badId() {
    try {
      yield { data: "ok", id: "1" };
      yield { data: "x", id: "2\nevent: forged" };
    } finally {
      finallies.push("bad-id");
    }
  }

  @SseMapping("/guarded")
  @UseMiddleware(guard)
  async *guarded() {
    yield "secret";
  }

  @SseMapping("/slow")
  async *slow() {
    yield "first";
    await late.promise;
    yield "after the timeout";
  }

  @SseMapping("/cleans-up")
  async *cleansUp() {
    try {
      yield "open";
      yield "never read";
    } finally {
      cleanedUp.push("begun");
      await new Promise((resolve) => setTimeout(resolve, 10));
      cleanedUp.push("ended");
    }
  }

  @SseMapping("/waits")
  async *waits() {
    yield "first";
    await new Promise(() => {});
  }

  @SseMapping("/never-first")
  neverFirst(): AsyncIterable<unknown> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<unknown>>(() => {}),
        return: () => {
          finallies.push("never-first");
          return Promise.resolve({ done: true, value: undefined });
        },
      }),
    };
  }

  // A return() that never settles: a HEAD answer must not wait on it.
  @SseMapping("/stuck-return")
  stuckReturn(): AsyncIterable<unknown> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ done: false, value: "x" }),
        return: () => {
          finallies.push("stuck-return");
          return new Promise<IteratorResult<unknown>>(() => {});
        },
      }),
    };
  }

  @SseMapping("/failing-return")
  failingReturn(): AsyncIterable<unknown> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ done: false, value: "x" }),
        return: () => Promise.reject(new Error("the feed would not close")),
      }),
    };
  }

  @SseMapping("/not-iterable")
  notIterable() {
    return { data: "x" } as unknown as AsyncIterable<unknown>;
  }

  @GetMapping("/hang")
  hang(): Promise<string> {
    return new Promise(() => {});
  }

  @ExceptionHandler(FeedDown)
  feedDown(_error: FeedDown): ResponseEntity {
    return ResponseEntity.status(502).withJson({ feed: "down" });
  }
}

@Component("errorController")
class Errors implements ErrorController {
  handleError(
    _request: HttpRequest,
    response: ResponseEntity,
    status: HttpStatus,
    error: unknown,
  ): void {
    response.withJson({ status: status.getValue(), handled: (error as Error).message });
  }
}

async function app(config: Record<string, unknown> = {}) {
  const logger = memoryLogger();
  const app = await bootstrap({
    controllers: [Events],
    components: [Errors],
    logger,
    config,
  });
  return { app, logger };
}

describe("@SseMapping", () => {
  it("answers a text/event-stream, not cached nor buffered, one frame per item", async () => {
    const { app: a } = await app();
    const res = await a.fetch(get("/events/framed"));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.equal(res.headers.get("x-accel-buffering"), "no");
    assert.equal(
      await res.text(),
      "event: note\nid: n-1\nretry: 2500\ndata: line 1\ndata: line 2\n\n" +
        'data: {"user":"ada"}\n\n' +
        "data: [1,2]\n\n" +
        "data: plain\n\n",
    );
    assert.equal(
      await (await a.fetch(get("/events/numbers/3"))).text(),
      "data: 1\n\ndata: 2\n\ndata: 3\n\n",
    );
  });

  it("gives the method Last-Event-ID through RequestHeader", async () => {
    const { app: a } = await app();
    const again = await a.fetch(get("/events/resume", { "Last-Event-ID": "41" }));
    assert.equal(await again.text(), "id: 42\ndata: after 41\n\n");
    const first = await a.fetch(get("/events/resume"));
    assert.equal(await first.text(), "id: 1\ndata: after none\n\n");
  });

  it("answers an error before the first event as any error: exception handler, errorController, binder", async () => {
    const { app: a, logger } = await app();
    const handled = await a.fetch(get("/events/fails-first"));
    assert.equal(handled.status, 502);
    assert.deepEqual(await handled.json(), { feed: "down" });
    const refused = await a.fetch(get("/events/refused"));
    assert.equal(refused.status, 403);
    assert.deepEqual(await refused.json(), { status: 403, handled: "not your feed" });
    const badPath = await a.fetch(get("/events/numbers/abc"));
    assert.equal(badPath.status, 400);
    assert.match(badPath.headers.get("content-type") ?? "", /json/);
    const notIterable = await a.fetch(get("/events/not-iterable"));
    assert.equal(notIterable.status, 500);
    assert.match((await notIterable.json()).handled, /not an AsyncIterable/);
    assert.deepEqual(logger.lines.map(([line]) => line), [
      "[thaw] Events.notIterable (GET /events/not-iterable) failed:",
    ]);
  });

  it("answers 204 to a stream that ends before its first event: EventSource stops there", async () => {
    const { app: a, logger } = await app();
    const res = await a.fetch(get("/events/empty"));
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("content-type"), null);
    assert.equal(await res.text(), "");
    assert.ok(finallies.includes("empty"));
    assert.deepEqual(logger.lines, []);
  });

  it("ends the stream on an error after the first event, logs it, and runs the finally", async () => {
    const { app: a, logger } = await app();
    const res = await a.fetch(get("/events/fails-later"));
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "data: one\n\n");
    assert.deepEqual(logger.lines[0], [
      "[thaw] Events.failsLater (GET /events/fails-later): the event stream failed after it " +
      "began, and ended:",
      new Error("lost the feed"),
    ]);
    assert.ok(finallies.includes("fails-later"));
  });

  it("refuses an id with a line break after the first event: the stream ends, nothing forged", async () => {
    const { app: a, logger } = await app();
    const res = await a.fetch(get("/events/bad-id"));
    const text = await res.text();
    assert.equal(text, "id: 1\ndata: ok\n\n");
    assert.match(String((logger.lines[0][1] as Error).message), /id must not hold CR, LF or NUL/);
    assert.ok(finallies.includes("bad-id"));
  });

  it("runs a route's middleware around it: a guard refuses, a header it set stays", async () => {
    const { app: a } = await app();
    assert.equal((await a.fetch(get("/events/guarded"))).status, 401);
    const res = await a.fetch(get("/events/guarded", { authorization: "yes" }));
    assert.equal(res.headers.get("x-guarded"), "passed");
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(await res.text(), "data: secret\n\n");
  });

  it("answers HEAD with the head alone, never asking for an event", async () => {
    const { app: a } = await app();
    const res = await a.fetch(get("/events/framed", {}, "HEAD"));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(await res.text(), "");
  });

  it("answers HEAD without waiting on the iterator's return(), and logs its failure", async () => {
    const logged = deferred<unknown[]>();
    const logger = { error: (...line: unknown[]) => logged.resolve(line) };
    const a = await bootstrap({ controllers: [Events], components: [Errors], logger });
    const stuck = await a.fetch(get("/events/stuck-return", {}, "HEAD"));
    assert.equal(stuck.status, 200);
    assert.equal(await stuck.text(), "");
    assert.ok(finallies.includes("stuck-return"));
    const failing = await a.fetch(get("/events/failing-return", {}, "HEAD"));
    assert.equal(failing.status, 200);
    assert.equal(await failing.text(), "");
    assert.deepEqual(await logged.promise, [
      "[thaw] Events.failingReturn (GET /events/failing-return): the iterator's return() failed " +
      "after a HEAD answer:",
      new Error("the feed would not close"),
    ]);
  });

  it("is answered 503 by the request timeout before it began, and its iterator returned", async () => {
    const { app: a } = await app({ server: { "request-timeout": 5 } });
    const res = await a.fetch(get("/events/never-first"));
    assert.equal(res.status, 503);
    assert.equal((await res.json()).handled, "No answer within 5 ms");
    assert.ok(finallies.includes("never-first"));
  });

  it("is not cut by the request timeout once it has begun", async () => {
    const { app: a, logger } = await app({ server: { "request-timeout": 5 } });
    const res = await a.fetch(get("/events/slow"));
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    assert.equal(decoder.decode((await reader.read()).value), "data: first\n\n");
    // A request begun after it, with the same timeout, has timed out: so has the stream's time.
    assert.equal((await a.fetch(get("/events/hang"))).status, 503);
    late.resolve();
    assert.equal(decoder.decode((await reader.read()).value), "data: after the timeout\n\n");
    assert.equal((await reader.read()).done, true);
    assert.deepEqual(logger.lines.map(([line]) => line), [
      "[thaw] GET /events/hang did not answer within 5 ms (server.request-timeout): answered " +
      "503, and what it still does is left to run, unread",
    ]);
  });
});

const dropped = { replaced: deferred<void>(), thrown: deferred<void>() };

// Middleware that answers in the route's place once it has answered.
const replace = async (c: Context, next: Next): Promise<void> => {
  await next();
  c.res = new Response("replaced");
};
const throwAfter = async (c: Context, next: Next): Promise<void> => {
  await next();
  if (c.req.path === "/dropped/thrown") throw new Error("refused after the route");
};
// Middleware that answers with the route's body, piped through a stream of its own (as
// compress() does): the stream is read.
const pipe = async (c: Context, next: Next): Promise<void> => {
  await next();
  const piped = c.res.body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>());
  c.res = new Response(piped, { headers: { "x-piped": "yes" } });
};

@RestController()
@RequestMapping("/dropped")
class Dropped {
  @SseMapping("/replaced")
  @UseMiddleware(replace)
  async *replaced() {
    try {
      yield "first";
      await new Promise(() => {});
    } finally {
      dropped.replaced.resolve();
    }
  }

  @SseMapping("/thrown")
  async *thrown() {
    try {
      yield "first";
      await new Promise(() => {});
    } finally {
      dropped.thrown.resolve();
    }
  }

  @SseMapping("/piped")
  @UseMiddleware(pipe)
  async *piped() {
    yield "one";
    yield "two";
  }
}

describe("@SseMapping behind middleware that answers in its place", () => {
  // No heartbeat: a stream left open holds no timer, and the test fails rather than hangs.
  const config = { server: { sse: { heartbeat: 0 } } };

  it("ends the stream, its finally run, when a route's middleware replaces the answer", async () => {
    const a = await bootstrap({ controllers: [Dropped], logger: memoryLogger(), config });
    const res = await a.fetch(get("/dropped/replaced"));
    assert.equal(await res.text(), "replaced");
    await dropped.replaced.promise;
    // One that reads the route's body keeps the stream.
    const piped = await a.fetch(get("/dropped/piped"));
    assert.equal(piped.headers.get("x-piped"), "yes");
    assert.equal(await piped.text(), "data: one\n\ndata: two\n\n");
  });

  it("ends the stream when a global middleware throws after the route answered", async () => {
    const logger = memoryLogger();
    const a = await bootstrap({ controllers: [Dropped], middleware: [throwAfter], logger, config });
    const res = await a.fetch(get("/dropped/thrown"));
    assert.equal(res.status, 500);
    await res.body?.cancel();
    await dropped.thrown.promise;
  });
});

describe("server.sse.heartbeat and the app's close", () => {
  it("sends a comment while the method waits, and app.close() ends the stream", async () => {
    // The generator waits on a promise that never settles: its return() cannot run, and the
    // close, which waits for it within server.shutdown-timeout, reports it once that is over.
    const { app: a } = await app({ server: { sse: { heartbeat: "1ms" }, "shutdown-timeout": 1 } });
    const res = await a.fetch(get("/events/waits"));
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    assert.equal(decoder.decode((await reader.read()).value), "data: first\n\n");
    assert.equal(decoder.decode((await reader.read()).value), ":\n\n");
    await assert.rejects(a.close(), {
      message: /the return\(\) of 1 event stream iterator\(s\) did not finish within 1000 ms/,
    });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      assert.equal(decoder.decode(chunk.value), ":\n\n");
    }
  });

  it("app.close() waits for a generator's finally that awaits, before the beans stop", async () => {
    const { app: a } = await app();
    const res = await a.fetch(get("/events/cleans-up"));
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: open\n\n");
    await a.close();
    assert.deepEqual(cleanedUp, ["begun", "ended"]);
  });
});

describe("server.sse.heartbeat", () => {
  const settings = (sse: unknown) =>
    readSettings(resolveConfig({ server: { sse } }, () => undefined));

  it("is 15 s unless set, a duration as Spring Boot reads it, 0 for none", () => {
    assert.equal(heartbeatOf(readSettings(resolveConfig({}, () => undefined))), 15_000);
    assert.equal(heartbeatOf(settings({ heartbeat: "30s" })), 30_000);
    assert.equal(heartbeatOf(settings({ heartbeat: "PT1M" })), 60_000);
    assert.equal(heartbeatOf(settings({ heartbeat: 500 })), 500);
    assert.equal(heartbeatOf(settings({ heartbeat: "0" })), 0);
  });

  it("refuses what is not a duration, naming the key, and a typo of the key", async () => {
    assert.throws(() => heartbeatOf(settings({ heartbeat: "soon" })), {
      name: "ConfigError",
      message: 'config: server.sse.heartbeat: give milliseconds (250) or a duration ("250ms", ' +
        '"5s", "10m", "1h"), got "soon"',
    });
    await assert.rejects(
      bootstrap({ controllers: [Events], config: { server: { sse: { heartbeat: -1 } } } }),
      ConfigError,
    );
    assert.throws(() => settings({ hearbeat: "15s" }), {
      message: "config: server.sse.hearbeat: unknown key; did you mean server.sse.heartbeat?",
    });
  });
});
