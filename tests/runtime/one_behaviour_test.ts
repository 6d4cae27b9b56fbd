// Where the runtimes used to part ways, over a real socket on whichever runtime runs the suite: the
// same request must get the same answer, and the same log, on Deno, Bun and Node.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { format } from "node:util";
import fc from "fast-check";
import type { MiddlewareHandler } from "hono";
import {
  bootstrap,
  DeleteMapping,
  GetMapping,
  PatchMapping,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestBody,
  RequestMapping,
  RequestParam,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { propertyOptions } from "../property.ts";
import { RUNTIME } from "../runtime.ts";
import { exchange, jsonPost, request } from "./raw_client.ts";

@RestController()
@RequestMapping("/users")
class Users {
  @GetMapping("/search")
  search(): string {
    return "search";
  }
  @PutMapping("/{id}", PathVariable("id"))
  put(id: string): string {
    return `put ${id}`;
  }
  @DeleteMapping("/{id}", PathVariable("id"))
  remove(id: string): string {
    return `delete ${id}`;
  }
}

@RestController()
class Parent {
  @GetMapping("/who")
  who(): string {
    return "parent";
  }
  @PatchMapping("/who")
  async patch(): Promise<string> {
    return await Promise.resolve("parent patch");
  }
}

// Overrides the mapped methods without mapping them again: Spring, and every runtime, runs these.
@RestController()
class Child extends Parent {
  override who(): string {
    return "child";
  }
  override async patch(): Promise<string> {
    return await Promise.resolve("child patch");
  }
}

@RestController()
class Bodies {
  @PostMapping("/raw-read", RequestBody())
  rawRead(body: unknown): unknown {
    return { body };
  }
  @PostMapping("/kept-read", RequestBody())
  keptRead(body: unknown): unknown {
    return { body };
  }
  // A header value from the client, as a careless handler would set it: CR LF in it makes the
  // runtime's own `TypeError`, which quotes the value on Deno and Node.
  @GetMapping("/forge-response", RequestParam("v"))
  forgeResponse(v: string): Response {
    return new Response("ok", { headers: { "X-Echo": v } });
  }
  @GetMapping("/forge-middleware")
  forgeMiddleware(): string {
    return "ok";
  }
  @GetMapping("/forge-throw", RequestParam("v"))
  forgeThrow(v: string): never {
    throw new Error(`no such user: ${v}`);
  }
}

// Reads the body through the platform's request, which keeps nothing for the handler.
const rawReader: MiddlewareHandler = async function rawReader(c, next) {
  if (c.req.path === "/raw-read") await c.req.raw.text();
  if (c.req.path === "/kept-read") await c.req.json();
  await next();
};

const headerSetter: MiddlewareHandler = async function headerSetter(c, next) {
  await next();
  if (c.req.path === "/forge-middleware") c.header("X-Echo", c.req.query("v") ?? "");
};

// Each logged call as a console prints it, lines and all.
const logged: string[] = [];
const logger = {
  error: (message: string, ...details: unknown[]) => void logged.push(format(message, ...details)),
};

describe(`one behaviour on every runtime, over a real socket on ${RUNTIME}`, () => {
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({
      controllers: [Users, Child, Bodies],
      middleware: [rawReader, headerSetter],
      logger,
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true });
    port = server.port;
  });
  after(() => server.close());

  it("OPTIONS and 405 list the methods of the most specific path that matches", async () => {
    const options = await exchange(port, request("OPTIONS", "/users/search"));
    assert.equal(options.status, 204);
    assert.match(options.head, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    const patch = await exchange(port, request("PATCH", "/users/search"));
    assert.equal(patch.status, 405);
    assert.match(patch.head, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    // A less specific path still serves its own methods on the same path.
    const put = await exchange(port, request("PUT", "/users/search", ["Content-Length: 0"]));
    assert.equal(put.status, 200);
    assert.equal(put.body, "put search");
    const other = await exchange(port, request("OPTIONS", "/users/7"));
    assert.match(other.head, /\r\nallow: PUT, DELETE, OPTIONS\r\n/i);
  });

  it("a subclass's override of a mapped method answers, mapped again or not", async () => {
    assert.equal((await exchange(port, request("GET", "/who"))).body, "child");
    assert.equal(
      (await exchange(port, request("PATCH", "/who", ["Content-Length: 0"]))).body,
      "child patch",
    );
  });

  it("a body a middleware used up through c.req.raw is a logged 500 naming it", async () => {
    logged.length = 0;
    const answer = await exchange(port, jsonPost("/raw-read", '{"a":1}'));
    assert.equal(answer.status, 500, answer.head);
    assert.equal(logged.length, 1);
    assert.match(logged[0], /Bodies\.rawRead \(POST \/raw-read\): the request body was read/);
    assert.match(logged[0], /\(rawReader, headerSetter\)/);
    assert.match(logged[0], /c\.req\.raw\.clone\(\)/);
  });

  it("a body a middleware read through c.req is the handler's too", async () => {
    const answer = await exchange(port, jsonPost("/kept-read", '{"a":1}'));
    assert.equal(answer.status, 200, answer.head);
    assert.deepEqual(JSON.parse(answer.body), { body: { a: 1 } });
  });

  // What a rendered log line may hold: printable text, and the line breaks and tabs of a stack
  // (Bun prints the source around the frame, tabs and all). Nothing the client sent starts a line.
  function assertUnforged(text: string, marker: string): void {
    // deno-lint-ignore no-control-regex
    const bad = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    assert.ok(!bad.test(text), `a control character reached the log: ${JSON.stringify(text)}`);
    for (const line of text.split("\n")) {
      assert.ok(!line.trimStart().startsWith(marker), `a forged line: ${JSON.stringify(text)}`);
    }
  }

  it("a CR LF in a header value or a thrown message never starts a log line", async () => {
    const marker = "FORGED";
    for (const path of ["/forge-response", "/forge-middleware", "/forge-throw"]) {
      logged.length = 0;
      const value = encodeURIComponent(`ok\r\n${marker} line \u001b[31m\u2028${marker}`);
      const answer = await exchange(port, request("GET", `${path}?v=${value}`));
      assert.equal(answer.status, 500, `${path}: ${answer.head}`);
      assert.equal(logged.length, 1, path);
      assertUnforged(logged[0], marker);
    }
  });

  it("any text in a header value or a thrown message stays on its line (property)", async () => {
    const marker = "FORGED";
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 24 }),
        fc.constantFrom("/forge-response", "/forge-middleware", "/forge-throw"),
        async (text, path) => {
          logged.length = 0;
          // A string of any code points; lone surrogates cannot travel as UTF-8, so they go as
          // U+FFFD, which is what a server would decode them to.
          const value = encodeURIComponent(`${text.toWellFormed()}\n${marker}`);
          const answer = await exchange(port, request("GET", `${path}?v=${value}`));
          // Headers trim the line break when nothing but whitespace is before it: then it is sent.
          assert.ok([200, 500].includes(answer.status), `${path}: ${answer.head}`);
          for (const line of logged) assertUnforged(line, marker);
        },
      ),
      propertyOptions(40),
    );
  });
});
