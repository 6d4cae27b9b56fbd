import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bodyLimit } from "hono/body-limit";
import type { Context, Next } from "hono";
import {
  bootstrap,
  GetMapping,
  PathVariable,
  PostMapping,
  RequestMapping,
  ResponseEntity,
  RestController,
} from "../../mod.ts";
import { logging } from "../../logging.ts";
import {
  type AccessLogEntry,
  accessLogLine,
  accessLogObserver,
} from "../../src/observe/access_log.ts";
import { observeFetch, RouteMarks } from "../../src/observe/request_observer.ts";
import { propertyOptions } from "../property.ts";
import { reach } from "../helpers.ts";
import { listen } from "../../src/runtime/listen.ts";
import { exchange, request } from "../runtime/raw_client.ts";
import { clientSource } from "../../src/observe/client_source.ts";
import { clientAddress } from "../../src/runtime/client_address.ts";

// What may not stand raw in a line: anything a log viewer takes for a line break or hides.
// deno-lint-ignore no-control-regex
const UNSAFE_RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function entry(method: string, path: string): AccessLogEntry {
  return { time: "t", method, route: "UNKNOWN", path, status: 404, duration_ms: 1 };
}

@RestController()
class ItemController {
  @GetMapping("/items/{id}", PathVariable("id"))
  get(id: string) {
    return { id };
  }

  @PostMapping("/items")
  create(): string {
    return "made";
  }
}

@RestController()
@RequestMapping("/bytes")
class BytesController {
  @GetMapping("/json")
  json() {
    return { name: "Zoë", list: [1, 2, 3] };
  }

  @GetMapping("/text")
  text(): string {
    // Two bytes, four (a pair) and three (a lone surrogate, sent as U+FFFD) per character.
    return "héllo wörld 🎉 \ud800";
  }

  @GetMapping("/entity")
  entity(): ResponseEntity {
    return ResponseEntity.ok({ total: "€12" });
  }

  @PostMapping("/created")
  created(): ResponseEntity {
    return ResponseEntity.created("/bytes/1").withJson({ id: 1, label: "naïve" });
  }

  @GetMapping("/xml")
  xml(): ResponseEntity {
    return ResponseEntity.ok().withXml({ item: { name: "ü" } });
  }

  @GetMapping("/bytes")
  bytes(): Uint8Array {
    return new Uint8Array([1, 2, 3, 4, 5]);
  }

  @GetMapping("/replaced")
  replaced(): string {
    return "the handler's own answer, longer than what replaces it";
  }

  @GetMapping("/stream")
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array([1, 2, 3]));
        controller.close();
      },
    });
  }
}

// Sets a header before the route runs (the headers every answer gets), and replaces one answer
// after it as Hono's own middleware may, keeping the handler's headers.
async function framing(c: Context, next: Next): Promise<void> {
  c.header("x-served-by", "thaw");
  await next();
  if (c.req.path === "/bytes/replaced") c.res = new Response("short", c.res);
}

async function loggedApp(enabled: boolean, strategy?: string) {
  const lines: string[] = [];
  const app = await bootstrap({
    logging: logging(),
    controllers: [ItemController],
    config: {
      logging: { access: { enabled } },
      ...(strategy === undefined ? {} : { server: { "forward-headers-strategy": strategy } }),
    },
    logger: { error: () => {}, info: (line: string) => void lines.push(line) },
  });
  return { app, lines };
}

describe("the access log line", () => {
  it("keeps every UTF-16 code unit a client sends on its one line, and gives it back", () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = `a${String.fromCharCode(unit)}b`;
      const line = accessLogLine(entry(text, `/${text}`));
      assert.doesNotMatch(line, UNSAFE_RAW, `U+${unit.toString(16)}`);
      const back = JSON.parse(line) as AccessLogEntry;
      assert.equal(back.method, text, `U+${unit.toString(16)}`);
      assert.equal(back.path, `/${text}`);
    }
  });

  it("is one line of JSON that parses back to its entry, whatever the strings (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.string({ unit: "binary" }),
        (method, path) => {
          const line = accessLogLine(entry(method, path));
          assert.doesNotMatch(line, UNSAFE_RAW);
          assert.deepEqual(JSON.parse(line), entry(method, path));
        },
      ),
      propertyOptions(),
    );
  });
});

describe("logging.access.enabled", () => {
  it("writes nothing by default", async () => {
    const { app, lines } = await loggedApp(false);
    await app.fetch(new Request("http://localhost/items/1"));
    assert.deepEqual(lines, []);
  });

  it("writes one line per request: route template, path, status, and Thaw's own answers", async () => {
    const { app, lines } = await loggedApp(true);
    await app.fetch(new Request("http://localhost/items/7?secret=1"));
    await app.fetch(new Request("http://localhost/nothing"));
    await app.fetch(new Request("http://localhost/items/7", { method: "DELETE" }));
    const entries = lines.map((line) => JSON.parse(line));
    assert.deepEqual(
      entries.map(({ method, route, path, status }) => ({ method, route, path, status })),
      [
        { method: "GET", route: "/items/{id}", path: "/items/7", status: 200 },
        { method: "GET", route: "NOT_FOUND", path: "/nothing", status: 404 },
        { method: "DELETE", route: "UNKNOWN", path: "/items/7", status: 405 },
      ],
    );
    for (const e of entries) {
      assert.equal(typeof e.duration_ms, "number");
      assert.ok(e.duration_ms >= 0);
      assert.ok(!Number.isNaN(Date.parse(e.time)));
    }
  });

  it("over a socket, writes every byte of a hostile path escaped on one line", async () => {
    const { app, lines } = await loggedApp(true);
    const client = await reach(app, "socket");
    try {
      // Every byte value a URL's path can carry to the server, percent-encoded as a client must.
      for (let byte = 0; byte < 256; byte++) {
        const encoded = `%${byte.toString(16).padStart(2, "0")}`;
        await client.send("GET", `/items/a${encoded}b`);
      }
    } finally {
      await client.close();
    }
    assert.equal(lines.length, 256);
    for (const line of lines) {
      assert.doesNotMatch(line, UNSAFE_RAW);
      assert.equal(line.split("\n").length, 1);
      const parsed = JSON.parse(line);
      assert.match(parsed.path, /^\/items\/a/);
    }
  });

  for (const transport of ["app.fetch", "socket"] as const) {
    it(`gives the bytes of an answer the app built, as sent (${transport})`, async () => {
      for (const middleware of [[], [framing]]) {
        const lines: string[] = [];
        const app = await bootstrap({
          logging: logging(),
          controllers: [BytesController],
          config: { logging: { access: { enabled: true } } },
          middleware,
          logger: { error: () => {}, info: (line: string) => void lines.push(line) },
        });
        const client = await reach(app, transport);
        const sent = new Map<string, number>();
        try {
          for (
            const [method, path] of [
              ["GET", "/bytes/json"],
              ["GET", "/bytes/text"],
              ["GET", "/bytes/entity"],
              ["POST", "/bytes/created"],
              ["GET", "/bytes/xml"],
              ["GET", "/bytes/bytes"],
              ["GET", "/bytes/replaced"],
              ["GET", "/bytes/stream"],
            ]
          ) {
            const response = await client.send(method, path);
            sent.set(path, (await response.arrayBuffer()).byteLength);
          }
        } finally {
          await client.close();
        }
        const logged = new Map(
          lines.map((line) => JSON.parse(line) as AccessLogEntry).map((e) => [e.path, e.bytes]),
        );
        const where = `${transport}, ${middleware.length} middleware`;
        for (const [path, bytes] of sent) {
          if (path === "/bytes/stream") {
            // A stream's length is known only once it is sent: not given, never guessed.
            assert.equal(logged.get(path), undefined, `${path}, ${where}`);
          } else if (path === "/bytes/replaced" && middleware.length > 0) {
            // What replaced the handler's answer: its length, or none, never the handler's.
            assert.ok([bytes, undefined].includes(logged.get(path)), `${path}, ${where}`);
          } else {
            assert.equal(logged.get(path), bytes, `${path}, ${where}`);
          }
        }
      }
    });
  }

  it("names the route of a request that middleware replaced on its way (Hono's bodyLimit)", async () => {
    const lines: string[] = [];
    const app = await bootstrap({
      logging: logging(),
      controllers: [ItemController],
      config: { logging: { access: { enabled: true } } },
      middleware: [bodyLimit({ maxSize: 1000 })],
      logger: { error: () => {}, info: (line: string) => void lines.push(line) },
    });
    const res = await app.fetch(
      new Request("http://localhost/items", { method: "POST", body: "x" }),
    );
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(lines[0]).route, "/items");
  });

  it("writes a 500 line for a fetch that threw, and lets the error pass", async () => {
    const lines: string[] = [];
    const fetch = observeFetch(
      () => {
        throw new TypeError("adapter broke");
      },
      [accessLogObserver((entry) => void lines.push(accessLogLine(entry)))],
      new RouteMarks(),
    );
    await assert.rejects(
      Promise.resolve().then(() => fetch(new Request("http://localhost/x"))),
      TypeError,
    );
    assert.deepEqual(
      (({ route, path, status }) => ({ route, path, status }))(JSON.parse(lines[0])),
      { route: "UNKNOWN", path: "/x", status: 500 },
    );
  });

  it("does not fail the request when the logger throws", async () => {
    const app = await bootstrap({
      logging: logging(),
      controllers: [ItemController],
      config: { logging: { access: { enabled: true } } },
      logger: {
        error: () => {},
        info: () => {
          throw new Error("disk full");
        },
      },
    });
    const res = await app.fetch(new Request("http://localhost/items/1"));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: "1" });
  });

  it("is refused with the key's line when it is not a flag", async () => {
    await assert.rejects(
      bootstrap({ logging: logging(), config: { logging: { access: { enabled: "sometimes" } } } }),
      /logging\.access\.enabled/,
    );
  });

  it("refuses a misspelt key under logging.access", async () => {
    await assert.rejects(
      bootstrap({ logging: logging(), config: { logging: { access: { enabeld: true } } } }),
      /logging\.access\.enabeld.*did you mean logging\.access\.enabled/,
    );
  });
});

describe("the access log's client", () => {
  const spoof = { "x-forwarded-for": "6.6.6.6, 203.0.113.7", "user-agent": "probe/1" };

  it("is the socket's address over a real listen, with the user agent", async () => {
    const { app, lines } = await loggedApp(true);
    const client = await reach(app, "socket");
    try {
      await client.send("GET", "/items/1", { headers: spoof });
    } finally {
      await client.close();
    }
    const entry = JSON.parse(lines[0]) as AccessLogEntry;
    // A forwarded header is no one's to trust by default.
    assert.equal(entry.client_address, "127.0.0.1");
    assert.equal(entry.user_agent, "probe/1");
  });

  it("is the proxy's right-most entry with server.forward-headers-strategy: framework", async () => {
    const { app, lines } = await loggedApp(true, "framework");
    const client = await reach(app, "socket");
    try {
      await client.send("GET", "/items/1", { headers: spoof });
      await client.send("GET", "/items/1", { headers: { "user-agent": "probe/2" } });
    } finally {
      await client.close();
    }
    const entries = lines.map((line) => JSON.parse(line) as AccessLogEntry);
    assert.deepEqual(
      entries.map(({ client_address, user_agent }) => ({ client_address, user_agent })),
      [
        { client_address: "203.0.113.7", user_agent: "probe/1" },
        { client_address: "127.0.0.1", user_agent: "probe/2" },
      ],
    );
  });

  it("is left out where nothing tells it (app.fetch with no runtime's env)", async () => {
    const { app, lines } = await loggedApp(true);
    await app.fetch(new Request("http://localhost/items/1"));
    const entry = JSON.parse(lines[0]) as AccessLogEntry;
    assert.equal("client_address" in entry, false);
    assert.equal("user_agent" in entry, false);
  });

  it("is left out by an app served with neither listen nor the actuator (a worker)", async () => {
    const handed = clientSource.address;
    delete clientSource.address;
    try {
      const { app, lines } = await loggedApp(true, "native");
      await app.fetch(
        new Request("http://localhost/items/1", {
          headers: { "cf-connecting-ip": "198.51.100.1", "user-agent": "edge/1" },
        }),
        {},
      );
      const entry = JSON.parse(lines[0]) as AccessLogEntry;
      assert.equal(entry.client_address, undefined);
      assert.equal(entry.user_agent, "edge/1");
    } finally {
      if (handed !== undefined) clientSource.address = handed;
    }
  });

  it("refuses at bootstrap a strategy Spring Boot does not name, in an app that imports listen", async () => {
    // This file imports listen, whose module declares the key.
    await assert.rejects(loggedApp(true, "trust-all"), {
      name: "ConfigError",
      message:
        'config: server.forward-headers-strategy must be none or native or framework, got "trust-all"',
    });
  });

  it("writes every byte of a hostile User-Agent and X-Forwarded-For escaped on one line", async () => {
    const { app, lines } = await loggedApp(true, "framework");
    const server = await listen(app, {
      port: 0,
      hostname: "127.0.0.1",
      quiet: true,
      signals: false,
    });
    let served = 0;
    try {
      for (let byte = 0; byte < 256; byte++) {
        const text = `a${String.fromCharCode(byte)}b`;
        const answer = await exchange(
          server.port,
          request("GET", "/items/1", [`User-Agent: ${text}`, `X-Forwarded-For: ${text}`]),
        );
        // A runtime refuses some bytes in a header (CR, LF, NUL): no line then, or a 400 one.
        if (answer.status === 200) served++;
      }
    } finally {
      await server.close();
    }
    assert.ok(served > 200, `${served} of 256 served`);
    for (const line of lines) {
      assert.doesNotMatch(line, UNSAFE_RAW);
      assert.equal(line.split("\n").length, 1);
      const entry = JSON.parse(line) as AccessLogEntry;
      if (entry.status !== 200) continue;
      // What the runtime made of the byte (a character, or U+FFFD), between the two letters.
      assert.match(entry.user_agent!, /^a.*b$/s);
      // The list's last entry is no address, whatever the byte: the socket's peer stands in.
      assert.equal(entry.client_address, "127.0.0.1");
    }
  });

  it("escapes lone surrogates a Node host may hand over in its raw headers", async () => {
    // What listen and the actuator hand in.
    clientSource.address = clientAddress;
    const lines: string[] = [];
    const fetch = observeFetch(
      (_request: Request, _env: unknown) => new Response("ok"),
      [accessLogObserver((entry) => void lines.push(accessLogLine(entry)), "framework")],
      new RouteMarks(),
    );
    const env = {
      incoming: {
        headers: {},
        rawHeaders: ["User-Agent", "a\ud800b\udc00", "X-Forwarded-For", "1.2.3.4, \udfff\u202e"],
        socket: { remoteAddress: "127.0.0.1" },
      },
    };
    await fetch(new Request("http://localhost/x"), env);
    assert.doesNotMatch(lines[0], UNSAFE_RAW);
    assert.doesNotMatch(lines[0], /[\ud800-\udfff]/);
    const entry = JSON.parse(lines[0]) as AccessLogEntry;
    assert.equal(entry.user_agent, "a\ud800b\udc00");
    // Not an address: the socket's peer.
    assert.equal(entry.client_address, "127.0.0.1");
  });
});
