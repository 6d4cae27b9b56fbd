// Hostile and careless clients against `listen(app)` over a real socket, on whichever runtime runs
// the suite (Deno, Bun, Node). Each case asserts the answer the README documents and then that
// the server still answers an ordinary request.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  GetMapping,
  HttpRequest,
  PathVariable,
  PostMapping,
  RequestBody,
  RequestHeader,
  RequestMapping,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { User } from "../../examples/users/src/user.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { assertStillServes, errorOf, exchange, jsonPost, request } from "./raw_client.ts";

@RestController()
@RequestMapping("/acc")
class Accounts {
  @GetMapping("/{id}", PathVariable("id", Number))
  get(id: number): string {
    return `get:${id}`;
  }
  @GetMapping("/conflict")
  conflict(): string {
    return "conflict";
  }
}

@RestController()
class Targets {
  @GetMapping("/health")
  health(): string {
    return "up";
  }
  @GetMapping("/boom")
  boom(): never {
    throw new Error("secret in /srv/app/db.ts");
  }
  @GetMapping("/path", HttpRequest)
  path(request: HttpRequest): string {
    return `${request.getPath()}?${request.getUrl().searchParams}`;
  }
  @GetMapping("/count", RequestHeader("x-count", { type: Number }))
  count(n: number): number {
    return n;
  }
  @PostMapping("/json", RequestBody())
  json(body: unknown): unknown {
    return { body };
  }
  @PostMapping("/user", RequestBody(User))
  user(user: User): unknown {
    return { email: user.getEmail() };
  }
  @PostMapping("/merge", HttpRequest)
  async merge(request: HttpRequest): Promise<unknown> {
    const target: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(await request.json() as object)) {
      target[k] ??= {};
      Object.assign(target[k], v);
    }
    return { polluted: ({} as Record<string, unknown>).polluted ?? null };
  }
}

describe(`a hostile client against listen(app) on ${RUNTIME}`, () => {
  const logger = memoryLogger();
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({ controllers: [Accounts, Targets], logger });
    server = await listen(app, { port: 0, hostname: "127.0.0.1" });
    port = server.port;
  });
  after(() => server.close());

  const stillServes = () => assertStillServes(port);

  it("routes a literal before a variable", async () => {
    const answer = await exchange(port, request("GET", "/acc/conflict"));
    assert.equal(answer.body, "conflict");
    await stillServes();
  });

  it("a failing handler and a failing logger give the default 500 JSON, never a server page", async () => {
    const throwing = {
      error(): void {
        throw new Error("log sink down");
      },
    };
    const app = await bootstrap({ controllers: [Targets], logger: throwing });
    const own = await listen(app, { port: 0, hostname: "127.0.0.1" });
    try {
      const answer = await exchange(own.port, request("GET", "/boom"));
      assert.equal(answer.status, 500);
      assert.match(answer.head, /content-type: application\/json/i);
      assert.equal(errorOf(answer).error, null);
      assert.doesNotMatch(answer.body, /secret|srv|<html|log sink/i);
    } finally {
      await own.close();
    }
  });

  it("a body key naming a method is 400", async () => {
    const answer = await exchange(port, jsonPost("/user", '{"getEmail":1}'));
    assert.deepEqual(errorOf(answer), {
      status: 400,
      error: 'Request body property "getEmail" is not a settable property of User',
    });
    await stillServes();
  });

  it("__proto__ in a body read by HttpRequest.json() pollutes nothing", async () => {
    const answer = await exchange(port, jsonPost("/merge", '{"__proto__":{"polluted":1}}'));
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { polluted: null });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("a body cut short by a half-close is 400 (Bun closes instead), and is not logged", async () => {
    const before = logger.lines.length;
    const head = ["Content-Type: application/json", "Content-Length: 100"];
    for (
      const framing of [head, ["Content-Type: application/json", "Transfer-Encoding: chunked"]]
    ) {
      const body = framing === head ? '{"a":' : '5\r\n{"a":';
      const answer = await exchange(port, request("POST", "/json", framing, body), "half-close");
      // Bun keeps no half-open connection: it closes as the client's FIN arrives, before any
      // answer could be sent (oven-sh/bun#6556 describes the same parser-level close).
      assert.equal(answer.status, RUNTIME === "bun" ? 0 : 400, answer.head);
      await stillServes();
    }
    assert.deepEqual(logger.lines.slice(before), []);
  });

  it("a client that resets mid-body leaves no log entry and no stuck server", async () => {
    const before = logger.lines.length;
    for (let i = 0; i < 20; i++) {
      const head = ["Content-Type: application/json", "Content-Length: 1000"];
      await exchange(port, request("POST", "/json", head, '{"a":'), "reset");
    }
    await stillServes();
    assert.deepEqual(logger.lines.slice(before), []);
  });

  it("nesting past 512 levels is one 400, with or without escapes", async () => {
    for (const inner of ["1", '"\\u0041"']) {
      const deep = "[".repeat(20_000) + inner + "]".repeat(20_000);
      const answer = await exchange(port, jsonPost("/json", deep));
      assert.deepEqual(errorOf(answer), {
        status: 400,
        error: "Malformed JSON in request body: nested deeper than 512 levels",
      });
    }
    await stillServes();
  });

  it("no body and no Content-Type is 400; two Content-Types are 400", async () => {
    for (const headers of [["Content-Length: 0"], []]) {
      const answer = await exchange(port, request("POST", "/json", headers));
      assert.deepEqual(errorOf(answer), { status: 400, error: "Required request body is missing" });
    }
    const twice = await exchange(
      port,
      request("POST", "/json", [
        "Content-Type: application/json",
        "Content-Type: text/plain",
        "Content-Length: 2",
      ], "{}"),
    );
    assert.deepEqual(errorOf(twice), {
      status: 400,
      error: 'Content-Type must be given once, got "application/json, text/plain"',
    });
    await stillServes();
  });

  it("dot segments are resolved before routing, plain or percent-encoded", async () => {
    for (const path of ["/x/../health", "/x/%2e%2e/health", "/x/%2E%2e/health", "/./health"]) {
      const answer = await exchange(port, request("GET", path));
      assert.equal(answer.status, 200, path);
      assert.equal(answer.body, "up", path);
    }
    const above = await exchange(port, request("GET", "/../../health"));
    assert.equal(above.body, "up");
  });

  it("a method outside RFC 9110 and PATCH is 501 (Bun closes the connection), CONNECT too", async () => {
    for (const method of ["FOO", "get", "PROPFIND"]) {
      const answer = await exchange(port, request(method, "/health"));
      // Bun's parser drops methods it does not know before any JavaScript runs
      // (oven-sh/bun#6556); PROPFIND it knows.
      const closes = RUNTIME === "bun" && method !== "PROPFIND";
      assert.equal(answer.status, closes ? 0 : 501, method);
      await stillServes();
    }
    const connectAnswer = await exchange(
      port,
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n",
    );
    assert.equal(connectAnswer.status, 501);
    await stillServes();
  });

  it("a 404 echoes at most 100 characters of the path", async () => {
    const answer = await exchange(port, request("GET", "/" + "a".repeat(6000)));
    assert.equal(answer.status, 404);
    assert.ok(answer.body.length < 400, `${answer.body.length} bytes`);
    await stillServes();
  });

  it("a head over the runtime's limit is refused before the app runs", async () => {
    const big = await exchange(port, request("GET", "/health", [`X-Big: ${"a".repeat(100_000)}`]));
    // Node and Bun refuse a head over 16 KiB with 431, Deno one over 64 KiB with 400.
    assert.equal(big.status, RUNTIME === "deno" ? 400 : 431);
    const path = await exchange(port, request("GET", "/" + "a".repeat(100_000)));
    assert.equal(path.status, RUNTIME === "deno" ? 400 : 431);
    await stillServes();
  });

  it("repeated headers are joined, and a joined number is a 400", async () => {
    const answer = await exchange(port, request("GET", "/count", ["X-Count: 1", "X-Count: 2"]));
    assert.equal(errorOf(answer).status, 400);
    const lengths = await exchange(
      port,
      request("POST", "/json", [
        "Content-Type: application/json",
        "Content-Length: 2",
        "Content-Length: 3",
      ], "{} "),
    );
    assert.equal(lengths.status, 400);
    await stillServes();
  });

  it("a slow client is answered, and others are served meanwhile", async () => {
    const body = '{"slow":true}';
    const slow = exchange(
      port,
      request("POST", "/json", [
        "Content-Type: application/json",
        `Content-Length: ${body.length}`,
      ]),
      "keep",
      [...body],
    );
    await stillServes();
    const answer = await slow;
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { body: { slow: true } });
  });

  const withHost = (path: string, host: string | null, version = "1.1") =>
    `GET ${path} HTTP/${version}\r\n${host === null ? "" : `Host: ${host}\r\n`}` +
    "Connection: close\r\n\r\n";

  it("a Host that would move the path or the query is 400, never another route", async () => {
    for (const host of ["h?x=5&", "h/health#", "a b", "x<s>", "h/acc/conflict?"]) {
      const answer = await exchange(port, withHost("/path?x=1", host));
      if (RUNTIME === "deno" && host === "h/acc/conflict?") {
        // The one case Thaw cannot see on Deno, which builds request.url as "http://" + Host +
        // target: a Host with "/" reads as a path. The README says so, and what to put in front.
        assert.equal(answer.body, "conflict");
        continue;
      }
      assert.equal(answer.status, 400, host);
      assert.doesNotMatch(answer.body, /conflict|up|x=5/, host);
    }
    await stillServes();
  });

  it("a request without Host (HTTP/1.0) is routed by its own path", async () => {
    assert.equal((await exchange(port, withHost("/zz/health", null, "1.0"))).status, 404);
    const own = await exchange(port, withHost("/path?x=1", null, "1.0"));
    assert.equal(own.status, 200);
    assert.equal(own.body, "/path?x=1");
  });

  it("a backslash in the path is 400 (Bun turns it into / before any code runs)", async () => {
    for (const path of ["/x\\..\\health", "/health\\", "/a%5Cb"]) {
      const answer = await exchange(port, request("GET", path));
      const bunRewrites = RUNTIME === "bun" && !path.includes("%5C");
      assert.equal(answer.status, bunRewrites ? (path === "/health\\" ? 404 : 200) : 400, path);
    }
    await stillServes();
  });

  it("a Content-Type with an open quote cannot hide a second one", async () => {
    for (const second of ["text/html", 'text/html; b="']) {
      const answer = await exchange(
        port,
        request("POST", "/json", [
          'Content-Type: application/json; a="',
          `Content-Type: ${second}`,
          "Content-Length: 7",
        ], '{"a":1}'),
      );
      assert.equal(answer.status, 400, second);
    }
    await stillServes();
  });

  it("a CONNECT whose client resets at once leaves the server serving", async () => {
    for (let i = 0; i < 5; i++) {
      await exchange(port, "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", "reset");
    }
    await stillServes();
  });

  it("a Host or target that is no valid http authority is 400, never served as another host", async () => {
    for (const host of ["a:b:c", "[::1", "%2F", "localhost:abc", "evil:99999"]) {
      const answer = await exchange(port, withHost("/path", host));
      assert.equal(answer.status, 400, host);
    }
    for (const target of ["ftp://e/path", "http://e:99999/path", "*"]) {
      const answer = await exchange(port, withHost(target, "x"));
      // Bun builds the URL of an absolute-form http target from the Host header and the target's
      // path, so this one is served as http://x/path; the others refuse it.
      const bunUsesHost = RUNTIME === "bun" && target.startsWith("http:");
      assert.equal(answer.status, bunUsesHost ? 200 : 400, target);
    }
    await stillServes();
  });

  it("a request without Host whose path starts with // keeps that path", async () => {
    const answer = await exchange(port, withHost("//evil/path", null, "1.0"));
    assert.equal(answer.status, 404);
    assert.doesNotMatch(answer.body, /Internal/);
  });

  it("a body of declared length 0 given twice, without Content-Type, is 400", async () => {
    const answer = await exchange(
      port,
      request("POST", "/json", ["Content-Length: 0", "Content-Length: 0"]),
    );
    assert.equal(answer.status, 400);
    await stillServes();
  });
});
