// How long `listen(app)` lets a connection take, over real sockets, on whichever runtime runs the
// suite: a slow handler is waited for, and what the client is slow to send is bounded.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { bootstrap, GetMapping, PostMapping, RequestBody, RestController } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { assertStillServes, dribble, exchange, request } from "./raw_client.ts";

// Bun closes a connection idle for 10 s by default, and a handler still running counted as idle;
// its timer ticks every 4 s, so the cut came between 10 and 14 s.
const PAST_BUNS_IDLE_TIMEOUT_MS = 15_000;

@RestController()
class Slow {
  @GetMapping("/slow")
  async slow(): Promise<string> {
    await delay(PAST_BUNS_IDLE_TIMEOUT_MS);
    return "slow done";
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

  it("answers a handler that takes longer than Bun's default idle timeout", async () => {
    const answer = await exchange(port, request("GET", "/slow"));
    assert.equal(answer.status, 200, answer.bytes);
    assert.equal(answer.body, "slow done");
  });
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
