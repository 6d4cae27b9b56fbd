// @ExceptionHandler on controllers and @ControllerAdvice beans: which handler takes an error, from
// where errors come (handlers, binders, middleware), and what falls through to the errorController.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import { HTTPException } from "hono/http-exception";
import {
  bootstrap,
  Component,
  ControllerAdvice,
  DefinitionError,
  ExceptionHandler,
  GetMapping,
  HttpException,
  type HttpRequest,
  HttpStatus,
  PathVariable,
  ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { type Client, memoryLogger, reach, TRANSPORTS } from "../helpers.ts";

class DomainError extends Error {}
class OrderNotFound extends DomainError {}
class OrderLocked extends OrderNotFound {}
class Unrelated extends Error {}

const throwing = (error: unknown) => (): never => {
  throw error;
};

@RestController()
class Orders {
  @GetMapping("/orders/missing")
  missing(): never {
    throw new OrderNotFound("order 7");
  }
  @GetMapping("/orders/locked")
  locked(): never {
    throw new OrderLocked("order 8");
  }
  @GetMapping("/orders/domain")
  async domain(): Promise<never> {
    await Promise.resolve();
    throw new DomainError("rule broken");
  }
  @GetMapping("/orders/generic")
  generic(): never {
    throw new Error("plain");
  }
  @GetMapping("/orders/{id}", PathVariable("id", Number))
  one(id: number): { id: number } {
    return { id };
  }
  @GetMapping("/orders/guarded")
  @UseMiddleware(throwing(new OrderNotFound("from middleware")))
  guarded(): string {
    return "never";
  }
  @GetMapping("/orders/late")
  @UseMiddleware(async (_c: Context, next: Next) => {
    await next();
    throw new DomainError("after next");
  })
  late(): ResponseEntity {
    return ResponseEntity.ok("body").withHeader("x-from-route", "1");
  }
  @GetMapping("/orders/string")
  @UseMiddleware(throwing("a string"))
  string(): string {
    return "never";
  }

  @ExceptionHandler(OrderNotFound)
  notFound(error: OrderNotFound, request: HttpRequest): ResponseEntity {
    return ResponseEntity.status(404).withJson({
      own: "notFound",
      error: error.message,
      path: request.getPath(),
    });
  }
  @ExceptionHandler(DomainError)
  domainError(error: DomainError): ResponseEntity {
    return ResponseEntity.status(409).withJson({ own: "domainError", error: error.message });
  }
}

@RestController()
class Others {
  @GetMapping("/others/domain")
  domain(): never {
    throw new OrderNotFound("elsewhere");
  }
  @GetMapping("/others/unrelated")
  unrelated(): never {
    throw new Unrelated("unrelated");
  }
  @GetMapping("/others/handler-fails")
  fails(): never {
    throw new RangeError("taken by a failing handler");
  }
}

@ControllerAdvice()
class Advice {
  @ExceptionHandler(Error)
  anyError(error: Error): ResponseEntity {
    return ResponseEntity.status(500).withJson({
      advice: "anyError",
      type: error.constructor.name,
    });
  }
  @ExceptionHandler(HttpException)
  http(error: HttpException): ResponseEntity {
    return ResponseEntity.status(error.status).withJson({ advice: "http", error: error.message });
  }
  @ExceptionHandler(RangeError)
  failing(): never {
    throw new Error("the handler itself failed");
  }
}

for (const transport of TRANSPORTS) {
  describe(`exception handlers over ${transport}`, () => {
    const logger = memoryLogger();
    let client: Client;
    before(async () => {
      const app = await bootstrap({
        controllers: [Orders, Others],
        components: [Advice],
        middleware: [async (c: Context, next: Next) => {
          if (c.req.header("x-fail") === "global") throw new Unrelated("global middleware");
          await next();
        }],
        logger,
      });
      client = await reach(app, transport);
    });
    after(() => client.close());

    const json = async (path: string, headers?: Record<string, string>) => {
      const response = await client.send("GET", path, { headers });
      return { status: response.status, headers: response.headers, body: await response.json() };
    };

    it("the handler of the nearest class in the error's prototype chain wins", async () => {
      const missing = await json("/orders/missing");
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, {
        own: "notFound",
        error: "order 7",
        path: "/orders/missing",
      });
      // OrderLocked extends OrderNotFound extends DomainError: OrderNotFound is nearer.
      assert.equal((await json("/orders/locked")).body.own, "notFound");
      const domain = await json("/orders/domain");
      assert.equal(domain.status, 409);
      assert.deepEqual(domain.body, { own: "domainError", error: "rule broken" });
    });

    it("a controller's own handler beats an advice's @ExceptionHandler(Error), and only for its routes", async () => {
      assert.equal((await json("/orders/missing")).body.own, "notFound");
      // The same error from another controller: only the advice has a handler there.
      assert.deepEqual((await json("/others/domain")).body, {
        advice: "anyError",
        type: "OrderNotFound",
      });
      assert.deepEqual((await json("/others/unrelated")).body, {
        advice: "anyError",
        type: "Unrelated",
      });
      // An error the controller has no handler for goes on to the advice.
      assert.deepEqual((await json("/orders/generic")).body, { advice: "anyError", type: "Error" });
    });

    it("a binder's 400 and the framework's 404 reach the advice's handler", async () => {
      const bad = await json("/orders/abc");
      assert.equal(bad.status, 400);
      assert.equal(bad.body.advice, "http");
      assert.match(bad.body.error, /id/);
      const none = await json("/nowhere");
      assert.equal(none.status, 404);
      assert.equal(none.body.advice, "http");
    });

    it("an error thrown in a route's middleware reaches the controller's handler", async () => {
      const guarded = await json("/orders/guarded");
      assert.equal(guarded.status, 404);
      assert.equal(guarded.body.error, "from middleware");
    });

    it("an error thrown in global middleware reaches the advice", async () => {
      const failed = await json("/orders/missing", { "x-fail": "global" });
      assert.deepEqual(failed.body, { advice: "anyError", type: "Unrelated" });
    });

    it("an error thrown after next() replaces the route's answer, its headers included", async () => {
      const late = await json("/orders/late");
      assert.equal(late.status, 409);
      assert.equal(late.body.error, "after next");
      assert.equal(late.headers.get("x-from-route"), null);
    });

    it("a thrown value that is not an Error falls through to the errorController", async () => {
      logger.lines.length = 0;
      const response = await client.send("GET", "/orders/string");
      assert.equal(response.status, 500);
      const body = await response.json();
      assert.equal(body.status, 500);
      assert.equal(body.error, null);
      assert.equal(logger.lines.length, 1);
      assert.equal(logger.lines[0][1], "a string");
    });

    it("a handler that throws falls back to the errorController, and the log names it", async () => {
      logger.lines.length = 0;
      const response = await client.send("GET", "/others/handler-fails");
      assert.equal(response.status, 500);
      const body = await response.json();
      assert.equal(body.message, "Internal Server Error");
      assert.equal(logger.lines.length, 1);
      assert.match(String(logger.lines[0][0]), /Others\.fails .*in Advice\.failing/);
      assert.equal((logger.lines[0][1] as Error).message, "the handler itself failed");
    });

    it("HEAD is answered by the handler without a body", async () => {
      const response = await client.send("HEAD", "/orders/missing");
      assert.equal(response.status, 404);
      assert.equal(await response.text(), "");
    });
  });
}

describe("exception handlers: Hono's HTTPException", () => {
  it("goes to the errorController with its status and its challenge header", async () => {
    @RestController()
    @UseMiddleware(throwing(
      new HTTPException(401, {
        message: "token missing",
        res: new Response("no", { headers: { "www-authenticate": 'Bearer realm="api"' } }),
      }),
    ))
    class Guarded {
      @GetMapping("/g")
      g(): string {
        return "g";
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Guarded], logger });
    const response = await app.fetch(new Request("http://x/g"));
    assert.equal(response.status, 401);
    assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="api"');
    const body = await response.json();
    assert.equal(body.error, "token missing");
    assert.equal(body.message, "Unauthorized");
    assert.deepEqual(logger.lines, []);
  });

  it("can be taken by an @ExceptionHandler(HTTPException)", async () => {
    @ControllerAdvice()
    class HonoErrors {
      @ExceptionHandler(HTTPException)
      hono(error: HTTPException): ResponseEntity {
        return ResponseEntity.status(error.status).withJson({ hono: error.status });
      }
    }
    @RestController()
    @UseMiddleware(throwing(new HTTPException(403)))
    class Guarded {
      @GetMapping("/g")
      g(): string {
        return "g";
      }
    }
    const app = await bootstrap({ controllers: [Guarded], components: [HonoErrors] });
    const response = await app.fetch(new Request("http://x/g"));
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), { hono: 403 });
  });

  it("a code without a name answers as its class: 400 or 500", async () => {
    for (const [code, expected] of [[499, 400], [420, 400], [599, 500]]) {
      @RestController()
      @UseMiddleware(throwing(new HTTPException(code as never, { message: "odd code" })))
      class Coded {
        @GetMapping("/c")
        c(): string {
          return "c";
        }
      }
      const logger = memoryLogger();
      const app = await bootstrap({ controllers: [Coded], logger });
      const response = await app.fetch(new Request("http://x/c"));
      assert.equal(response.status, expected, String(code));
      assert.equal((await response.json()).error, "odd code");
      assert.deepEqual(logger.lines, []);
    }
  });

  it("a status outside 400-599 is a 500", async () => {
    @RestController()
    @UseMiddleware(throwing(new HTTPException(302 as never, { message: "odd" })))
    class Odd {
      @GetMapping("/o")
      o(): string {
        return "o";
      }
    }
    const app = await bootstrap({ controllers: [Odd], logger: memoryLogger() });
    const response = await app.fetch(new Request("http://x/o"));
    assert.equal(response.status, 500);
    assert.equal((await response.json()).error, null);
  });
});

describe("exception handlers: what cannot work is a startup error", () => {
  it("two handlers for one class in a controller", async () => {
    @RestController()
    class Twice {
      @GetMapping("/t")
      t(): string {
        return "t";
      }
      @ExceptionHandler(DomainError)
      a(): string {
        return "a";
      }
      @ExceptionHandler(Unrelated, DomainError)
      b(): string {
        return "b";
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Twice] }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("Two exception handlers for DomainError") &&
        error.message.includes("Twice.a") && error.message.includes("Twice.b"),
    );
  });

  it("two handlers for one class across advice beans", async () => {
    @ControllerAdvice()
    class First {
      @ExceptionHandler(DomainError)
      a(): string {
        return "a";
      }
    }
    @ControllerAdvice()
    class Second {
      @ExceptionHandler(DomainError)
      b(): string {
        return "b";
      }
    }
    await assert.rejects(
      bootstrap({ components: [First, Second] }),
      (error: unknown) =>
        error instanceof DefinitionError && error.message.includes("First.a") &&
        error.message.includes("Second.b"),
    );
  });

  it("the same error class in a controller and in an advice is allowed: the controller's wins", async () => {
    @ControllerAdvice()
    class Global {
      @ExceptionHandler(DomainError)
      global(): string {
        return "advice";
      }
    }
    @RestController()
    class Local {
      @GetMapping("/l")
      l(): never {
        throw new DomainError("x");
      }
      @ExceptionHandler(DomainError)
      local(): string {
        return "controller";
      }
    }
    const app = await bootstrap({ controllers: [Local], components: [Global] });
    assert.equal(await (await app.fetch(new Request("http://x/l"))).text(), "controller");
  });

  it("a subclass controller inherits its parent's handlers, and may replace one by name", async () => {
    class BaseController {
      @ExceptionHandler(DomainError)
      domain(): string {
        return "base domain";
      }
      @ExceptionHandler(Unrelated)
      unrelated(): string {
        return "base unrelated";
      }
    }
    @RestController()
    class Child extends BaseController {
      @GetMapping("/c/domain")
      d(): never {
        throw new DomainError("x");
      }
      @GetMapping("/c/unrelated")
      u(): never {
        throw new Unrelated("x");
      }
      @ExceptionHandler(Unrelated)
      override unrelated(): string {
        return "child unrelated";
      }
    }
    const app = await bootstrap({ controllers: [Child] });
    assert.equal(await (await app.fetch(new Request("http://x/c/domain"))).text(), "base domain");
    assert.equal(
      await (await app.fetch(new Request("http://x/c/unrelated"))).text(),
      "child unrelated",
    );
  });

  it("@ExceptionHandler on a bean that is neither a controller nor an advice", async () => {
    @Component()
    class Stray {
      @ExceptionHandler(DomainError)
      a(): string {
        return "a";
      }
    }
    await assert.rejects(
      bootstrap({ components: [Stray] }),
      (error: unknown) =>
        error instanceof DefinitionError && error.message.includes("Stray") &&
        error.message.includes("would never run"),
    );
  });

  it("@ExceptionHandler refuses no classes and what is not a class", () => {
    assert.throws(() => ExceptionHandler(), TypeError);
    assert.throws(() => ExceptionHandler("Error" as never), /argument 1 is not a class/);
  });

  it("a custom errorController still gets what no handler takes", async () => {
    @Component("errorController")
    class Errors {
      handleError(_r: HttpRequest, response: ResponseEntity, status: HttpStatus): void {
        response.withJson({ custom: status.getValue() });
      }
    }
    @RestController()
    class Plain {
      @GetMapping("/p")
      p(): never {
        throw new Unrelated("u");
      }
      @ExceptionHandler(DomainError)
      d(): string {
        return "d";
      }
    }
    const app = await bootstrap({
      controllers: [Plain],
      components: [Errors],
      logger: memoryLogger(),
    });
    const response = await app.fetch(new Request("http://x/p"));
    assert.equal(response.status, HttpStatus.INTERNAL_SERVER_ERROR.getValue());
    assert.deepEqual(await response.json(), { custom: 500 });
  });
});
