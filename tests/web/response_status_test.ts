import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import {
  bootstrap,
  ControllerAdvice,
  DeleteMapping,
  ExceptionHandler,
  GetMapping,
  HttpException,
  HttpStatus,
  PostMapping,
  RequestBody,
  ResponseEntity,
  ResponseStatus,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { call, reach, TRANSPORTS } from "../helpers.ts";

class Missing extends Error {}

const tagged = async (c: Context, next: Next) => {
  c.header("x-tag", "yes");
  await next();
};

@RestController()
class Orders {
  @ResponseStatus(HttpStatus.CREATED)
  @PostMapping("/orders", RequestBody())
  create(body: unknown) {
    return { made: body };
  }

  @ResponseStatus(201)
  @PostMapping("/text")
  text(): string {
    return "made";
  }

  @ResponseStatus(HttpStatus.ACCEPTED)
  @PostMapping("/nothing")
  nothing(): void {}

  @ResponseStatus(201)
  @GetMapping("/later")
  async later(): Promise<{ later: boolean }> {
    await new Promise((r) => setTimeout(r, 1));
    return { later: true };
  }

  // The entity says its own status, as in Spring.
  @ResponseStatus(201)
  @GetMapping("/entity")
  entity(): ResponseEntity {
    return ResponseEntity.ok().withJson({ entity: true });
  }

  @ResponseStatus(201)
  @GetMapping("/response")
  response(): Response {
    return new Response("raw", { status: 203 });
  }

  @ResponseStatus(201)
  @GetMapping("/bytes")
  bytes(): Uint8Array {
    return new Uint8Array([1, 2, 3]);
  }

  @ResponseStatus(201)
  @GetMapping("/blob")
  blob(): Blob {
    return new Blob(["b"], { type: "text/x-b" });
  }

  @ResponseStatus(201)
  @GetMapping("/form")
  form(): URLSearchParams {
    return new URLSearchParams({ a: "1" });
  }

  // A 204 has no content: what the method returns is not sent.
  @ResponseStatus(HttpStatus.NO_CONTENT)
  @DeleteMapping("/orders")
  remove() {
    return { removed: true };
  }

  @ResponseStatus(HttpStatus.NO_CONTENT)
  @DeleteMapping("/stream")
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array([1]));
        controller.close();
      },
    });
  }

  @ResponseStatus(201)
  @GetMapping("/fails")
  fails(): never {
    throw new HttpException(HttpStatus.CONFLICT, "taken");
  }

  @ResponseStatus(201)
  @GetMapping("/missing")
  missing(): never {
    throw new Missing();
  }

  @ResponseStatus(201)
  @UseMiddleware(tagged)
  @GetMapping("/guarded")
  guarded() {
    return { guarded: true };
  }

  @ResponseStatus(HttpStatus.NOT_FOUND)
  @ExceptionHandler(Missing)
  onMissing() {
    return { missing: true };
  }
}

@RestController()
class BaseController {
  @ResponseStatus(201)
  @PostMapping("/base")
  make() {
    return { base: true };
  }
  @ResponseStatus(201)
  @PostMapping("/replaced")
  replaced(): object {
    return { base: true };
  }
}

@RestController()
class DerivedController extends BaseController {
  @ResponseStatus(202)
  @PostMapping("/replaced")
  override replaced(): object {
    return { derived: true };
  }
}

class Gone extends Error {}

@ControllerAdvice()
class Advice {
  @ResponseStatus(HttpStatus.GONE)
  @ExceptionHandler(Gone)
  gone(): string {
    return "gone";
  }
}

@RestController()
class Thrower {
  @GetMapping("/gone")
  gone(): never {
    throw new Gone();
  }
}

describe("@ResponseStatus: the status of what a handler returns", () => {
  for (const transport of TRANSPORTS) {
    it(`gives a plain returned value its status (${transport})`, async () => {
      const app = await bootstrap({ controllers: [Orders] });
      const client = await reach(app, transport);
      try {
        const json = await client.send("POST", "/orders", { json: { n: 1 } });
        assert.equal(json.status, 201);
        assert.equal(json.headers.get("content-type"), "application/json");
        assert.deepEqual(await json.json(), { made: { n: 1 } });

        const text = await client.send("POST", "/text");
        assert.equal(text.status, 201);
        assert.equal(await text.text(), "made");

        // `undefined` is 204 without it; with it, its status and no body.
        const nothing = await client.send("POST", "/nothing");
        assert.equal(nothing.status, 202);
        assert.equal(await nothing.text(), "");

        const later = await client.send("GET", "/later");
        assert.equal(later.status, 201);
        assert.deepEqual(await later.json(), { later: true });

        const bytes = await client.send("GET", "/bytes");
        assert.equal(bytes.status, 201);
        assert.deepEqual([...new Uint8Array(await bytes.arrayBuffer())], [1, 2, 3]);

        const blob = await client.send("GET", "/blob");
        assert.equal(blob.status, 201);
        assert.equal(blob.headers.get("content-type"), "text/x-b");
        assert.equal(await blob.text(), "b");

        const form = await client.send("GET", "/form");
        assert.equal(form.status, 201);
        assert.equal(await form.text(), "a=1");

        const head = await client.send("HEAD", "/later");
        assert.equal(head.status, 201);
        assert.equal(await head.text(), "");
      } finally {
        await client.close();
      }
    });

    it(`drops the body of a 204 (${transport})`, async () => {
      const app = await bootstrap({ controllers: [Orders] });
      const client = await reach(app, transport);
      try {
        for (const path of ["/orders", "/stream"]) {
          const gone = await client.send("DELETE", path);
          assert.equal(gone.status, 204, path);
          assert.equal(await gone.text(), "", path);
          assert.equal(gone.headers.get("content-type"), null, path);
        }
      } finally {
        await client.close();
      }
    });
  }

  it("leaves a ResponseEntity's or a Response's own status alone", async () => {
    const app = await bootstrap({ controllers: [Orders] });
    const entity = await call(app, "GET", "/entity");
    assert.equal(entity.status, 200);
    assert.deepEqual(await entity.json(), { entity: true });
    const response = await call(app, "GET", "/response");
    assert.equal(response.status, 203);
    assert.equal(await response.text(), "raw");
  });

  it("leaves errors their own status", async () => {
    const app = await bootstrap({ controllers: [Orders] });
    const failed = await call(app, "GET", "/fails");
    assert.equal(failed.status, 409);
  });

  it("holds behind middleware, which keeps its headers", async () => {
    const app = await bootstrap({ controllers: [Orders] });
    const guarded = await call(app, "GET", "/guarded");
    assert.equal(guarded.status, 201);
    assert.equal(guarded.headers.get("x-tag"), "yes");
    assert.deepEqual(await guarded.json(), { guarded: true });

    const global = await bootstrap({ controllers: [Orders], middleware: [tagged] });
    const made = await call(global, "POST", "/orders", { json: 2 });
    assert.equal(made.status, 201);
    assert.equal(made.headers.get("x-tag"), "yes");
    assert.deepEqual(await made.json(), { made: 2 });
  });

  it("gives an @ExceptionHandler's answer its status, in a controller and in an advice", async () => {
    const app = await bootstrap({ controllers: [Orders, Thrower], components: [Advice] });
    const missing = await call(app, "GET", "/missing");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { missing: true });
    const gone = await call(app, "GET", "/gone");
    assert.equal(gone.status, 410);
    assert.equal(await gone.text(), "gone");
  });

  it("is inherited with the mapping, and a subclass's own replaces it", async () => {
    const app = await bootstrap({ controllers: [DerivedController] });
    assert.equal((await call(app, "POST", "/base")).status, 201);
    const replaced = await call(app, "POST", "/replaced");
    assert.equal(replaced.status, 202);
    assert.deepEqual(await replaced.json(), { derived: true });
  });

  it("refuses a status that is no final answer, and a second status on one method", () => {
    for (const bad of [99, 100, 199, 600, 201.5, Number.NaN]) {
      assert.throws(() => ResponseStatus(bad), /@ResponseStatus: status must be 200 to 599/);
    }
    assert.throws(
      () => ResponseStatus("201" as unknown as number),
      /@ResponseStatus: status must be 200 to 599/,
    );
    assert.throws(() => {
      class Twice {
        @ResponseStatus(201)
        @ResponseStatus(202)
        make() {}
      }
      return Twice;
    }, /@ResponseStatus given twice on make/);
    assert.throws(() => {
      class Static {
        @ResponseStatus(201)
        static make() {}
      }
      return Static;
    }, /@ResponseStatus on make: it decorates instance methods/);
  });
});
