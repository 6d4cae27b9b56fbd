import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  Bean,
  bootstrap,
  Component,
  Configuration,
  DefinitionError,
  DuplicateBeanError,
  type ErrorController,
  GetMapping,
  HttpException,
  type HttpRequest,
  HttpStatus,
  type MethodInterceptor,
  type MethodInvocation,
  PathVariable,
  PostMapping,
  RequestBody,
  type ResponseEntity,
  RestController,
  UseInterceptors,
} from "../../mod.ts";
import { call, memoryLogger } from "../helpers.ts";

@RestController()
class Failing {
  @GetMapping("/boom")
  boom(): never {
    throw new Error("secret connection string");
  }
  @GetMapping("/async-boom")
  async asyncBoom(): Promise<never> {
    await Promise.resolve();
    throw new Error("secret async");
  }
  @GetMapping("/string")
  throwsString(): never {
    throw "a string";
  }
  @GetMapping("/undefined")
  throwsUndefined(): never {
    throw undefined;
  }
  @GetMapping("/http")
  http(): never {
    throw new HttpException(HttpStatus.CONFLICT, "already there");
  }
  @GetMapping("/http-5xx")
  http5xx(): never {
    throw new HttpException(503, "maintenance until noon");
  }
  @GetMapping("/n/{id}", PathVariable("id", Number))
  n(id: number): number {
    return id;
  }
  @PostMapping("/body", RequestBody())
  body(b: unknown): unknown {
    return b;
  }
}

interface Seen {
  status: number;
  path: string;
  error: unknown;
}

function recordingController(seen: Seen[]): ErrorController {
  return {
    handleError(
      request: HttpRequest,
      response: ResponseEntity,
      status: HttpStatus,
      error?: unknown,
    ) {
      seen.push({ status: status.getValue(), path: request.getPath(), error });
      response.withJson({ custom: true, status: status.getValue() }).withHeader("X-Handled", "yes");
    },
  };
}

const logger = memoryLogger();
let cached: Application | undefined;
const appOf = async () =>
  cached ??= await bootstrap({ controllers: [Failing], logger, maxBodySize: 10 });

// An errorController that fails on every error.
@Component("errorController")
class Broken implements ErrorController {
  handleError(): void {
    throw new Error("broken handler");
  }
}

describe("the default error controller", () => {
  it("answers {timestamp, status, message, error} and hides internal 5xx messages", async () => {
    const app = await appOf();
    const res = await call(app, "GET", "/boom");
    assert.equal(res.status, 500);
    const body = await res.json();
    assert.deepEqual(Object.keys(body), ["timestamp", "status", "message", "error"]);
    assert.equal(body.status, 500);
    assert.equal(body.message, "Internal Server Error");
    assert.equal(body.error, null);
    assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
    const text = JSON.stringify(body);
    assert.ok(!text.includes("secret") && !text.includes("at "), text);
    assert.match(String(logger.lines.at(-1)?.[0]), /Failing\.boom \(GET \/boom\) failed/);
    assert.equal((logger.lines.at(-1)?.[1] as Error).message, "secret connection string");
  });

  it("hides async failures too", async () => {
    const app = await appOf();
    const res = await call(app, "GET", "/async-boom");
    assert.equal(res.status, 500);
    assert.ok(!(await res.text()).includes("secret"));
  });

  it("a thrown non-Error value is a 500", async () => {
    const app = await appOf();
    for (const path of ["/string", "/undefined"]) {
      const res = await call(app, "GET", path);
      assert.equal(res.status, 500, path);
      assert.equal((await res.json()).error, null);
    }
  });

  it("an HttpException gives its status and message, even on 5xx", async () => {
    const app = await appOf();
    const res = await call(app, "GET", "/http");
    assert.equal(res.status, 409);
    assert.deepEqual((({ timestamp: _, ...rest }) => rest)(await res.json()), {
      status: 409,
      message: "Conflict",
      error: "already there",
    });
    const res5 = await call(app, "GET", "/http-5xx");
    assert.equal(res5.status, 503);
    assert.equal((await res5.json()).error, "maintenance until noon");
  });
});

describe("a custom errorController", () => {
  it("receives every framework error and every unhandled error", async () => {
    const seen: Seen[] = [];
    @Component("errorController")
    class Errors implements ErrorController {
      handleError(...args: Parameters<ErrorController["handleError"]>): void {
        recordingController(seen).handleError(...args);
      }
    }
    const app = await bootstrap({
      controllers: [Failing],
      components: [Errors],
      logger: memoryLogger(),
      maxBodySize: 10,
    });
    const cases: [string, string, number, RequestInit?][] = [
      ["GET", "/n/abc", 400],
      ["GET", "/nope", 404],
      ["DELETE", "/boom", 405],
      ["POST", "/body", 413, {
        body: '{"a":"0123456789"}',
        headers: { "content-type": "application/json" },
      }],
      ["POST", "/body", 415, { body: "x", headers: { "content-type": "text/plain" } }],
      ["GET", "/boom", 500],
      ["GET", "/string", 500],
    ];
    for (const [method, path, status, init] of cases) {
      const res = await app.fetch(new Request(`http://localhost${path}`, { method, ...init }));
      assert.equal(res.status, status, `${method} ${path}`);
      assert.equal(res.headers.get("x-handled"), "yes");
      assert.deepEqual(await res.json(), { custom: true, status });
    }
    assert.deepEqual(seen.map((s) => [s.status, s.path]), cases.map(([, p, s]) => [s, p]));
    assert.equal(seen.at(-1)?.error, "a string");
    assert.ok(seen[0].error instanceof HttpException);
  });

  it("a 405 keeps its Allow header", async () => {
    @Component("errorController")
    class Errors implements ErrorController {
      handleError(_q: HttpRequest, r: ResponseEntity): void {
        r.withJson({});
      }
    }
    const app = await bootstrap({ controllers: [Failing], components: [Errors] });
    assert.equal((await call(app, "POST", "/boom")).headers.get("allow"), "GET, HEAD, OPTIONS");
  });

  it("may answer at once through an async interceptor of its class", async () => {
    // The docs' timing interceptor: Thaw awaits what handleError answers.
    @Component()
    class Timing implements MethodInterceptor {
      readonly timed: string[] = [];
      async intercept(invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        try {
          return await next();
        } finally {
          this.timed.push(invocation.method);
        }
      }
    }
    @Component("errorController")
    @UseInterceptors(Timing)
    class Errors implements ErrorController {
      handleError(_q: HttpRequest, r: ResponseEntity, status: HttpStatus): void {
        r.withJson({ custom: true, status: status.getValue() });
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Failing], components: [Timing, Errors], logger });
    const res = await call(app, "GET", "/http");
    assert.equal(res.status, 409);
    assert.deepEqual(await res.json(), { custom: true, status: 409 });
    assert.deepEqual(app.getBean(Timing).timed, ["handleError"]);
  });

  it("can be a @Bean named errorController, and may be async", async () => {
    const seen: Seen[] = [];
    @Configuration()
    class Cfg {
      @Bean("errorController")
      errors(): ErrorController {
        return {
          async handleError(req, res, status, error) {
            await Promise.resolve();
            recordingController(seen).handleError(req, res, status, error);
          },
        };
      }
    }
    const app = await bootstrap({ controllers: [Failing], components: [Cfg] });
    assert.equal((await call(app, "GET", "/http")).status, 409);
    assert.equal(seen[0].status, 409);
  });

  it("two errorController beans reject bootstrap with DuplicateBeanError", async () => {
    @Component("errorController")
    class A implements ErrorController {
      handleError(): void {}
    }
    @Configuration()
    class Cfg {
      @Bean("errorController")
      errors(): ErrorController {
        return { handleError() {} };
      }
    }
    await assert.rejects(
      bootstrap({ components: [A, Cfg] }),
      (e: unknown) =>
        e instanceof DuplicateBeanError && e.beanName === "errorController" &&
        e.message.includes("class A") && e.message.includes("@Bean Cfg.errors()"),
    );
  });

  it("an errorController without handleError is a startup error", async () => {
    @Component("errorController")
    class NotOne {}
    await assert.rejects(
      bootstrap({ components: [NotOne] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        /errorController bean \(class NotOne\) has no handleError/.test(e.message),
    );
  });

  it("a failing errorController still yields a bare 500, and is logged", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Failing], components: [Broken], logger });
    const res = await call(app, "GET", "/http");
    assert.equal(res.status, 500);
    assert.equal((await res.json()).error, null);
    assert.ok(logger.lines.some(([m]) => /errorController failed/.test(String(m))));
  });

  it("an errorController tripping over a client's bad query answers its 400, unlogged", async () => {
    @Component("errorController")
    class Localised implements ErrorController {
      handleError(request: HttpRequest, response: ResponseEntity, status: HttpStatus): void {
        response.withJson({ status: status.getValue(), lang: request.getQueryParam("lang") });
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Failing], components: [Localised], logger });
    const fine = await call(app, "GET", "/nowhere?lang=de");
    assert.deepEqual(await fine.json(), { status: 404, lang: "de" });
    const bad = await call(app, "GET", "/nowhere?lang=%FF");
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).status, 400);
    assert.deepEqual(logger.lines, []);
  });

  it("a log line names the request without a control character or line break of the client's", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Failing], components: [Broken], logger });
    for (const path of ["/a%C2%85b%E2%80%A8c", "/a%00b", "/" + "x".repeat(5000)]) {
      await call(app, "GET", path);
    }
    const messages = logger.lines.map(([m]) => String(m));
    assert.equal(messages.length, 3);
    for (const message of messages) {
      assert.doesNotMatch(message, /[\p{Cc}\u2028\u2029]/u, JSON.stringify(message));
      assert.ok(message.length < 400, `${message.length} characters`);
    }
  });

  it("a logger that throws still yields an answer: nothing escapes app.fetch", async () => {
    const throwing = {
      error(): void {
        throw new Error("log sink is down");
      },
    };
    for (const components of [[], [Broken]]) {
      const app = await bootstrap({ controllers: [Failing], components, logger: throwing });
      for (const path of ["/boom", "/async-boom", "/http", "/nowhere"]) {
        const res = await call(app, "GET", path);
        if (components.length === 0 && path === "/http") assert.equal(res.status, 409);
        else if (components.length === 0 && path === "/nowhere") assert.equal(res.status, 404);
        else assert.equal(res.status, 500, path);
        const body = await res.json();
        assert.equal(body.status, res.status, path);
        assert.doesNotMatch(JSON.stringify(body), /secret|log sink|broken handler/);
      }
    }
  });

  it("an errorController that answers with something unserialisable still yields a bare 500", async () => {
    @Component("errorController")
    class Cyclic implements ErrorController {
      handleError(_r: HttpRequest, response: ResponseEntity): void {
        const loop: Record<string, unknown> = {};
        loop.self = loop;
        response.withJson(loop);
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Failing], components: [Cyclic], logger });
    const res = await call(app, "GET", "/boom");
    assert.equal(res.status, 500);
    assert.equal((await res.json()).error, null);
  });
});
