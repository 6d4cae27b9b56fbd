// How long `listen(app)` lets a connection take, over real sockets, on whichever runtime runs the
// suite: a slow handler is waited for, and what the client is slow to send is bounded.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import {
  bootstrap,
  GetMapping,
  HttpRequest,
  PostMapping,
  RequestBody,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import {
  assertStillServes,
  dribble,
  exchange,
  jsonPost,
  keptAlive,
  request,
} from "./raw_client.ts";

// Bun closes a connection idle for 10 s by default, and a handler still running counted as idle;
// its timer ticks every 4 s, so the cut came between 10 and 14 s.
const PAST_BUNS_IDLE_TIMEOUT_MS = 15_000;
// Past the 1 s server.header-timeout below, with its checks (every 125 ms) and some to spare.
const PAST_HEADER_TIMEOUT_MS = 2500;

@RestController()
class Slow {
  @GetMapping("/slow")
  async slow(): Promise<string> {
    await delay(PAST_BUNS_IDLE_TIMEOUT_MS);
    return "slow done";
  }
  @PostMapping("/slow", HttpRequest)
  async slowAfterBody(request: HttpRequest): Promise<unknown> {
    // Some work before the body is read (a lookup, say): all of it has arrived by then, or not.
    await delay(100);
    const body = await request.json();
    await delay(PAST_BUNS_IDLE_TIMEOUT_MS);
    return { body };
  }
  @GetMapping("/past-header-timeout")
  async pastHeaderTimeout(): Promise<string> {
    await delay(PAST_HEADER_TIMEOUT_MS);
    return "done";
  }
  @GetMapping("/health")
  health(): string {
    return "up";
  }
  @PostMapping("/echo", RequestBody())
  echo(body: unknown): unknown {
    return { body };
  }
}

describe(`time bounds of a connection to listen(app) on ${RUNTIME}`, () => {
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({ controllers: [Slow], logger: memoryLogger() });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    port = server.port;
  });
  after(() => server.close());

  it("answers a handler that takes longer than Bun's default idle timeout, its body read or none", async () => {
    const [answer, afterBody] = await Promise.all([
      exchange(port, request("GET", "/slow")),
      exchange(port, jsonPost("/slow", JSON.stringify({ n: 1 }))),
    ]);
    assert.equal(answer.status, 200, answer.bytes);
    assert.equal(answer.body, "slow done");
    assert.equal(afterBody.status, 200, afterBody.bytes);
    assert.equal(afterBody.body, '{"body":{"n":1}}');
  });

  // Without server.request-timeout, only a runtime's own bound applies to a client silent mid-body:
  // Bun's idle timeout (10 s here, the cut between 10 and 14 s), none on Deno, and Node's
  // requestTimeout (300 s), far past a test. 50 such clients at once, each with 5 of 100 bytes.
  it(
    RUNTIME === "bun"
      ? "closes clients silent mid-body at Bun's idle timeout, serving others"
      : "waits for a body whose client falls silent past Bun's idle timeout (no bound on " +
        `${RUNTIME} without server.request-timeout)`,
    async () => {
      const body = JSON.stringify({ text: "x".repeat(89) });
      assert.equal(body.length, 100);
      const head = request("POST", "/echo", [
        "Content-Type: application/json",
        `Content-Length: ${body.length}`,
      ]);
      // On Bun, every other client sends its body chunked, of no declared length: 5 bytes of a
      // 100-byte chunk.
      const chunked = request("POST", "/echo", [
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
      ]) + "64\r\n";
      const connections = await Promise.all(
        Array.from({ length: RUNTIME === "bun" ? 50 : 1 }, async (_, i) => {
          const connection = keptAlive(port);
          await connection.connected;
          connection.write((i % 2 === 0 ? head : chunked) + body.slice(0, 5));
          return connection;
        }),
      );
      try {
        await assertStillServes(port);
        if (RUNTIME === "bun") {
          // A give-up only: the bound is seconds.
          let giveUp: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            Promise.all(connections.map((connection) => connection.closedByServer())),
            new Promise((_, reject) => {
              giveUp = setTimeout(() => reject(new Error("still open after 60 s")), 60_000);
            }),
          ]).finally(() => clearTimeout(giveUp));
          connections.forEach((connection, i) => {
            assert.match(connection.received(), /^$|^HTTP\/1\.1 (400|408) /, `connection ${i}`);
          });
        } else {
          // The silence is the input: longer than Bun lets it last.
          await delay(PAST_BUNS_IDLE_TIMEOUT_MS);
          connections[0].write(body.slice(5));
          const [answer] = await connections[0].answers(1);
          assert.match(answer, /^HTTP\/1\.1 200 [^]*\r\n\r\n\{"body":\{"text":"x{89}"\}\}$/);
        }
      } finally {
        connections.forEach((connection) => connection.destroy());
      }
      await assertStillServes(port);
    },
  );
});

describe(`server.request-timeout of listen(app) on ${RUNTIME}`, () => {
  const logger = memoryLogger();
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({
      controllers: [Slow],
      logger,
      config: { server: { "request-timeout": 500 } },
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    port = server.port;
  });
  after(() => server.close());

  it("answers 503 to a request whose small body is still arriving, and serves on", async () => {
    const body = JSON.stringify({ text: "x".repeat(200) });
    const head = request("POST", "/echo", [
      "Content-Type: application/json",
      `Content-Length: ${body.length}`,
    ]);
    // A byte every 100 ms: the whole body would take 20 s, the timeout is half a second.
    const answer = await dribble(port, body, 100, head);
    assert.equal(answer.status, 503, answer.bytes);
    assert.equal(JSON.parse(answer.body).error, "No answer within 500 ms");
    assert.ok(answer.written < body.length, `the whole body was sent: ${answer.written} bytes`);
    assert.match(
      String(logger.lines.at(-1)?.[0]),
      /^\[thaw\] POST \/echo did not answer within 500 ms/,
    );
    await assertStillServes(port);
  });
});

describe(`server.header-timeout of listen(app) on ${RUNTIME}`, () => {
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({
      controllers: [Slow],
      logger: memoryLogger(),
      config: { server: { "header-timeout": 1000 } },
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    port = server.port;
  });
  after(() => server.close());

  it("closes 400 clients that dribble a request head (or answers them 408), serving others", async () => {
    // Each sends a head that never ends, a byte every 250 ms: 250 s of it, were it let through.
    const head = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    const clients = Array.from({ length: 400 }, () => dribble(port, "a".repeat(1000), 250, head));
    await assertStillServes(port);
    const answers = await Promise.all(clients);
    const odd = answers.filter((a) => !(a.status === 0 && a.bytes === "") && a.status !== 408);
    assert.deepEqual(odd.map((a) => a.bytes.slice(0, 40)), []);
    await assertStillServes(port);
  });

  it("serves the next request on a kept-alive connection whose last answer took longer than it", async () => {
    const connection = keptAlive(port);
    try {
      await connection.connected;
      connection.send("/past-header-timeout");
      await connection.answers(1);
      // Sent once the answer is in, as any client that keeps a connection sends its next one.
      connection.send("/health");
      const answers = await connection.answers(2);
      assert.match(answers[0], /\r\n\r\ndone$/);
      assert.match(answers[1], /^HTTP\/1\.1 200 [^]*\r\n\r\nup$/);
    } finally {
      connection.destroy();
    }
  });

  it("closes kept-alive connections whose next head is dribbled (or answers them 408)", async () => {
    const connections = await Promise.all(Array.from({ length: 20 }, async () => {
      const connection = keptAlive(port);
      await connection.connected;
      connection.send("/health");
      await connection.answers(1);
      return connection;
    }));
    const answered = connections.map((connection) => connection.received().length);
    for (const connection of connections) connection.write("GET /health HTTP/1.1\r\nX-Slow: ");
    const trickle = setInterval(() => connections.forEach((c) => c.write("a")), 250);
    // A give-up only: every bound is seconds.
    let giveUp: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        Promise.all(connections.map((connection) => connection.closedByServer())),
        new Promise((_, reject) => {
          giveUp = setTimeout(() => reject(new Error("still open after 60 s")), 60_000);
        }),
      ]);
    } finally {
      clearInterval(trickle);
      clearTimeout(giveUp);
      connections.forEach((connection) => connection.destroy());
    }
    connections.forEach((connection, i) => {
      const after = connection.received().slice(answered[i]);
      assert.match(after, /^$|^HTTP\/1\.1 408 /, `connection ${i}: ${after}`);
    });
    await assertStillServes(port);
  });
});
