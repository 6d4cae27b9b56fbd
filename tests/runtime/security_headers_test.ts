// The headers `bootstrap({ middleware })` sets (Hono's secureHeaders() and cors(), and a header set
// ahead of `next()`) on every kind of answer, over a real socket to `listen(app)` on whichever
// runtime runs the suite: an early answer of a guard or of a listed middleware (`new Response`,
// `c.text`, `c.json`), a route's return value of each kind, Thaw's own answers (400, 404, 405,
// 413, 415, OPTIONS, HEAD) and a thrown error's (the errorController's), each with no `Origin`,
// the allowed one and another. A server that sends a copy of the answer made before the last
// middleware changed it loses these headers on some answers only, which no single case shows.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, MiddlewareHandler, Next } from "hono";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";
import {
  bootstrap,
  Component,
  type ErrorController,
  GetMapping,
  HttpException,
  type HttpRequest,
  type HttpStatus,
  type Middleware,
  PostMapping,
  RequestBody,
  ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { exchange, request } from "./raw_client.ts";

const PAGE = "https://page.test";
const SECURE = ["strict-transport-security", "x-frame-options", "x-content-type-options"];

// A controller's guard: answers early in the way `?guard=` names.
const guard = async (c: Context, next: Next): Promise<Response | void> => {
  switch (c.req.query("guard")) {
    case "response":
      return new Response("refused", { status: 403, headers: { "x-own": "kept" } });
    case "text":
      return c.text("refused", 403);
    case "json":
      return c.json({ refused: true }, 403);
  }
  await next();
};

@Component()
class TokenGuard implements Middleware {
  async handle(c: Context, next: Next): Promise<Response | void> {
    if (c.req.query("bean") !== undefined) return new Response("no token", { status: 401 });
    await next();
  }
}

// The last of the listed middleware: answers early, ahead of routing, in the way `?early=` names.
const early = async (c: Context, next: Next): Promise<Response | void> => {
  switch (c.req.query("early")) {
    case "response":
      return new Response("early", { status: 429 });
    case "text":
      return c.text("early", 429);
    case "json":
      return c.json({ early: true }, 429);
  }
  await next();
};

@RestController()
@UseMiddleware(guard, TokenGuard)
class Kinds {
  @GetMapping("/response")
  response(): Response {
    return new Response("raw");
  }
  @GetMapping("/response-headers")
  async responseHeaders(): Promise<Response> {
    await Promise.resolve();
    return new Response("raw", { headers: { "x-own": "kept" } });
  }
  @GetMapping("/response-json")
  responseJson(): Response {
    return Response.json({ ok: true });
  }
  @GetMapping("/response-stream")
  responseStream(): Response {
    return new Response(new Blob(["streamed"]).stream());
  }
  @GetMapping("/object")
  object(): { ok: boolean } {
    return { ok: true };
  }
  @GetMapping("/string")
  string(): string {
    return "text";
  }
  @GetMapping("/entity")
  entity(): ResponseEntity {
    return ResponseEntity.ok("entity").withHeader("x-own", "kept");
  }
  @GetMapping("/empty")
  empty(): void {}
  @GetMapping("/bytes")
  bytes(): Uint8Array {
    return new TextEncoder().encode("bytes");
  }
  @GetMapping("/throws")
  throws(): string {
    throw new Error("boom");
  }
  @GetMapping("/conflict")
  conflict(): string {
    throw new HttpException(409, "taken");
  }
  @PostMapping("/echo", RequestBody())
  echo(body: unknown): unknown {
    return { body };
  }
}

@Component("errorController")
class JsonErrors implements ErrorController {
  handleError(_request: HttpRequest, response: ResponseEntity, status: HttpStatus): void {
    response.withJson({ status: status.getValue() });
  }
}

const tooLarge = "x".repeat(200);
const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

interface Kind {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers?: readonly string[];
  readonly body?: string;
  /** The route's own headers, which the middleware's must not replace. */
  readonly own?: Readonly<Record<string, string>>;
}

const KINDS: readonly Kind[] = [
  {
    name: "guard: new Response",
    method: "GET",
    path: "/string?guard=response",
    status: 403,
    own: { "x-own": "kept" },
  },
  { name: "guard: c.text", method: "GET", path: "/string?guard=text", status: 403 },
  { name: "guard: c.json", method: "GET", path: "/string?guard=json", status: 403 },
  { name: "bean guard: new Response", method: "GET", path: "/string?bean", status: 401 },
  {
    name: "listed middleware: new Response",
    method: "GET",
    path: "/x?early=response",
    status: 429,
  },
  { name: "listed middleware: c.text", method: "GET", path: "/x?early=text", status: 429 },
  { name: "listed middleware: c.json", method: "GET", path: "/x?early=json", status: 429 },
  { name: "handler: new Response", method: "GET", path: "/response", status: 200 },
  {
    name: "handler: new Response with headers, async",
    method: "GET",
    path: "/response-headers",
    status: 200,
    own: { "x-own": "kept" },
  },
  { name: "handler: Response.json", method: "GET", path: "/response-json", status: 200 },
  { name: "handler: a streamed Response", method: "GET", path: "/response-stream", status: 200 },
  { name: "handler: object", method: "GET", path: "/object", status: 200 },
  { name: "handler: string", method: "GET", path: "/string", status: 200 },
  {
    name: "handler: ResponseEntity",
    method: "GET",
    path: "/entity",
    status: 200,
    own: { "x-own": "kept" },
  },
  { name: "handler: undefined (204)", method: "GET", path: "/empty", status: 204 },
  { name: "handler: bytes", method: "GET", path: "/bytes", status: 200 },
  { name: "handler: JSON body read", method: "POST", ...json('{"a":1}'), status: 200 },
  { name: "thrown Error: errorController", method: "GET", path: "/throws", status: 500 },
  { name: "thrown HttpException", method: "GET", path: "/conflict", status: 409 },
  { name: "Thaw: 404", method: "GET", path: "/missing", status: 404 },
  { name: "Thaw: 405", method: "DELETE", path: "/string", status: 405 },
  { name: "Thaw: HEAD", method: "HEAD", path: "/string", status: 200 },
  { name: "Thaw: OPTIONS", method: "OPTIONS", path: "/string", status: 204 },
  { name: "Thaw: 400 (malformed JSON)", method: "POST", ...json('{"a":'), status: 400 },
  { name: "Thaw: 413 (declared length)", method: "POST", ...json(tooLarge), status: 413 },
  {
    name: "Thaw: 413 (chunked)",
    method: "POST",
    path: "/echo",
    headers: ["Content-Type: application/json", "Transfer-Encoding: chunked"],
    body: chunked(tooLarge),
    status: 413,
  },
  {
    name: "Thaw: 415",
    method: "POST",
    path: "/echo",
    headers: ["Content-Type: text/plain", "Content-Length: 2"],
    body: "hi",
    status: 415,
  },
];

function json(body: string): Pick<Kind, "path" | "headers" | "body"> {
  return {
    path: "/echo",
    headers: ["Content-Type: application/json", `Content-Length: ${body.length}`],
    body,
  };
}

interface Setup {
  readonly name: string;
  readonly middleware: MiddlewareHandler[];
  /** The headers every answer carries, by the request's `Origin`. */
  expected(origin: string | undefined): Record<string, string | null>;
  /** Whether `cors()` runs ahead of secureHeaders() and answers OPTIONS without it. */
  readonly corsFirst?: boolean;
}

const secure = (): Record<string, string | null> =>
  Object.fromEntries(SECURE.map((name) => [name, "<any>"]));

const SETUPS: readonly Setup[] = [
  {
    name: "cors({ origin }), secureHeaders()",
    middleware: [cors({ origin: PAGE }), secureHeaders(), early],
    expected: (origin) => ({
      ...secure(),
      "access-control-allow-origin": origin === PAGE ? PAGE : null,
    }),
    corsFirst: true,
  },
  {
    name: "cors(), secureHeaders()",
    middleware: [cors(), secureHeaders(), early],
    expected: () => ({ ...secure(), "access-control-allow-origin": "*" }),
    corsFirst: true,
  },
  {
    name: "secureHeaders(), cors({ origin })",
    middleware: [secureHeaders(), cors({ origin: PAGE }), early],
    expected: (origin) => ({
      ...secure(),
      "access-control-allow-origin": origin === PAGE ? PAGE : null,
    }),
  },
  {
    name: "a header set ahead of next(), secureHeaders()",
    middleware: [
      async (c, next) => {
        c.header("x-tag", "tagged");
        c.header("set-cookie", "tag=1");
        await next();
      },
      secureHeaders(),
      early,
    ],
    // Once each: an early answer made by `c.text()` holds the cookie already.
    expected: () => ({ ...secure(), "x-tag": "tagged", "set-cookie": "tag=1" }),
  },
];

// The head's fields by lowercase name, repeated ones joined as `Headers` joins them.
function fieldsOf(head: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    fields.set(name, fields.has(name) ? `${fields.get(name)}, ${value}` : value);
  }
  return fields;
}

for (const setup of SETUPS) {
  describe(`bootstrap({ middleware: [${setup.name}] }) over a socket`, () => {
    let server: Server;
    before(async () => {
      const app = await bootstrap({
        controllers: [Kinds],
        components: [TokenGuard, JsonErrors],
        middleware: setup.middleware,
        config: { server: { "max-body-size": 64 } },
        logger: memoryLogger(),
      });
      server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    });
    after(() => server.close());

    it("puts the middleware's headers on every kind of answer, with or without an Origin", async () => {
      const missing: string[] = [];
      for (const kind of KINDS) {
        // A preflight is cors()'s own answer, made before secureHeaders() runs.
        if (kind.method === "OPTIONS" && setup.corsFirst) continue;
        for (const origin of [undefined, PAGE, "https://other.test"]) {
          const headers = [...kind.headers ?? []];
          if (origin !== undefined) headers.push(`Origin: ${origin}`);
          const answer = await exchange(
            server.port,
            request(kind.method, kind.path, headers, kind.body),
          );
          const where = `${kind.name}, Origin ${origin ?? "none"}`;
          assert.equal(answer.status, kind.status, `${where}: ${answer.head}`);
          const fields = fieldsOf(answer.head);
          const expected = { ...setup.expected(origin), ...kind.own };
          for (const [name, value] of Object.entries(expected)) {
            const got = fields.get(name) ?? null;
            const ok = value === "<any>" ? got !== null : got === value;
            if (!ok) missing.push(`${where}: ${name} is ${got}, not ${value}`);
          }
        }
      }
      assert.deepEqual(missing, []);
    });
  });
}
