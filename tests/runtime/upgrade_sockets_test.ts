// What an app that maps a `@WebSocketMapping` does with the requests that are not a WebSocket's,
// over real sockets on whichever runtime runs the suite: an upgrade to another protocol (the h2c
// upgrade Java's HttpClient and `curl --http2` send on `http://`) is served as plain HTTP/1.1 by
// the route, and the connection kept alive goes on serving (on a Node that serves an offer with a
// body itself, it closes after that answer). Deno's server refuses such an offer
// that carries a body with its own 400, whatever the app maps: an answer at once, not a hang.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  bootstrap,
  GetMapping,
  PathVariable,
  PostMapping,
  RequestBody,
  RestController,
  type WebSocketHandlers,
  WebSocketMapping,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { RUNTIME } from "../runtime.ts";
import { keptAlive } from "./raw_client.ts";

@RestController()
class Mixed {
  @GetMapping("/hello")
  hello(): string {
    return "hello";
  }
  @GetMapping("/say/{word}", PathVariable("word"))
  say(word: string): string {
    return word;
  }
  @PostMapping("/say/{word}", PathVariable("word"))
  sayPosted(word: string): string {
    return word;
  }
  @PostMapping("/echo", RequestBody())
  echo(body: unknown): unknown {
    return body;
  }
  @WebSocketMapping("/socket")
  socket(): WebSocketHandlers {
    return { onMessage: (event, ws) => ws.send(String(event.data)) };
  }
}

// What Java's HttpClient sends on `http://` by default: an offer to switch to HTTP/2.
const H2C = [
  "Connection: Upgrade, HTTP2-Settings",
  "Upgrade: h2c",
  "HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA",
];

// A give-up only, for a server that never answers: a healthy one answers long before.
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within 30 s: ${what}`)), 30_000);
  });
  return Promise.race([promise, giveUp]).finally(() => clearTimeout(timer));
}

// Node 22.21 and 24.9 on serve an offer with a body themselves (Thaw's listener cannot have its
// body back), and drop what came after it in its packet: the connection closes after its answer.
const NODE_SERVES_OFFERS = RUNTIME === "node" && (() => {
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 24 || (major === 24 && minor >= 9) || (major === 22 && minor >= 21);
})();

const head = (method: string, path: string, headers: string[]) =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => `${h}\r\n`).join("")}\r\n`;

describe(`upgrades other than a WebSocket's, with one mapped, on ${RUNTIME}`, () => {
  let server: Server;

  before(async () => {
    const app = await bootstrap({ controllers: [Mixed] });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
  });
  after(() => server.close());

  const cases: { what: string; request: string; body: string; withBody?: true }[] = [
    { what: "an h2c GET", request: head("GET", "/hello", H2C), body: "hello" },
    {
      what: "an h2c POST with its body",
      request: head("POST", "/echo", [
        ...H2C,
        "Content-Type: application/json",
        "Content-Length: 9",
      ]) + '{"a":"b"}',
      body: '{"a":"b"}',
      withBody: true,
    },
    {
      what: "an h2c POST with a chunked body",
      request: head("POST", "/echo", [
        ...H2C,
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
      ]) + '4\r\n{"a"\r\n5\r\n:"b"}\r\n0\r\n\r\n',
      body: '{"a":"b"}',
      withBody: true,
    },
    {
      what: "an upgrade to an unknown protocol",
      request: head("GET", "/hello", ["Connection: upgrade", "Upgrade: thaw-unknown/1"]),
      body: "hello",
    },
  ];
  for (const { what, request, body, withBody } of cases) {
    it(`answers ${what} with the route's 200, and the connection serves on`, async () => {
      const connection = keptAlive(server.port);
      try {
        await connection.connected;
        connection.write(request);
        const [first] = await within(connection.answers(1), what);
        if (withBody && RUNTIME === "deno") {
          assert.match(first, /^HTTP\/1\.1 400 /, first);
          return await within(connection.closedByServer(), `the close after ${what}`);
        }
        assert.match(first, /^HTTP\/1\.1 200 /, first);
        assert.ok(first.endsWith(`\r\n\r\n${body}`), first);
        if (withBody && NODE_SERVES_OFFERS) {
          return await within(connection.closedByServer(), `the close after ${what}`);
        }
        // The next request on the same connection, once the first was answered, as clients do.
        connection.send("/hello");
        const [, second] = await within(connection.answers(2), `the request after ${what}`);
        assert.match(second, /^HTTP\/1\.1 200 /, second);
        assert.ok(second.endsWith("\r\n\r\nhello"), second);
      } finally {
        connection.destroy();
      }
    });
  }

  // A client that pipelines (or a proxy that does) matches answers to requests by their order: a
  // request the server drops while it answers those after it would have each later answer taken
  // for the one before. Node 22.21 and later, serving an upgrade offer itself, drops what came in
  // the same packet after it: the connection then closes after the offer's answer instead.
  const offers = [
    { what: "an h2c offer", request: head("GET", "/say/one", H2C), withBody: false },
    {
      what: "an h2c offer with a body",
      request: head("POST", "/say/one", [...H2C, "Content-Length: 2"]) + "{}",
      withBody: true,
    },
  ];
  for (const offer of offers) {
    it(`never answers a request pipelined after ${offer.what} out of its turn`, async () => {
      const connection = keptAlive(server.port);
      try {
        await connection.connected;
        connection.write(offer.request + head("GET", "/say/two", []));
        const [first] = await within(connection.answers(1), offer.what);
        if (offer.withBody && RUNTIME === "deno") {
          assert.match(first, /^HTTP\/1\.1 400 /, first);
          return await within(connection.closedByServer(), `the close after ${offer.what}`);
        }
        connection.write(head("GET", "/say/three", []));
        // All three answered, or the connection closed: a give-up for neither only.
        await within(connection.answers(3).catch(() => []), "three answers or a close");
        const words = connection.received().split(/HTTP\/1\.1 /).slice(1).map((answer) =>
          answer.slice(answer.indexOf("\r\n\r\n") + 4)
        );
        assert.ok(words.length >= 1, connection.received());
        assert.deepEqual(
          words,
          ["one", "two", "three"].slice(0, words.length),
          connection.received(),
        );
      } finally {
        connection.destroy();
      }
    });
  }

  // Node keeps the first 1,000 headers of a request (`maxHeadersCount`) and drops the rest
  // silently: a request given back to the server from what Node kept would lose a
  // `Content-Length` past them, and its body, read as the next request, would be answered, a
  // request no proxy in front saw. Each runtime answers the offer, or closes: never the body.
  for (const framing of ["Content-Length", "Transfer-Encoding"]) {
    it(`never answers the body of an offer with over 1,000 headers (${framing}) as a request`, async () => {
      const hidden = head("GET", "/say/SMUGGLED", []);
      const [declared, body] = framing === "Content-Length"
        ? [`Content-Length: ${hidden.length}`, hidden]
        : ["Transfer-Encoding: chunked", `${hidden.length.toString(16)}\r\n${hidden}\r\n0\r\n\r\n`];
      const filler = Array.from({ length: 2000 }, () => "a: b");
      const connection = keptAlive(server.port);
      try {
        await connection.connected;
        connection.write(head("POST", "/say/first", [...H2C, ...filler, declared]) + body);
        connection.write(head("GET", "/say/last", []));
        // Two answers (the offer's and the next one's), or the close.
        const answers = await within(
          connection.answers(2).catch(() => []),
          "two answers or a close",
        );
        assert.ok(!connection.received().includes("\r\n\r\nSMUGGLED"), connection.received());
        if (answers.length === 2) assert.ok(answers[1].endsWith("\r\n\r\nlast"), answers[1]);
      } finally {
        connection.destroy();
      }
    });
  }
});
