// On Bun, an `@SseMapping` answer has no idle timeout while its stream runs (its heartbeats bound
// its silences); once the stream has ended, or the route answered an error before its first event,
// the kept-alive connection is closed for idleness as any other answer's is (about 12 s: Bun's
// 10 s, ticking every 4 s).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { bootstrap, RestController, SseMapping } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";

@RestController()
class Ends {
  @SseMapping("/one")
  async *one() {
    yield "x";
  }

  @SseMapping("/refused")
  async *refused() {
    yield 10n; // no JSON form: a 500 before the stream begins
  }
}

/** Resolves once the server closes a kept-alive connection left idle after `GET path`. */
function closedWhenIdle(port: number, path: string): Promise<boolean> {
  // No deadline of its own: a connection never closed fails the test at the runner's timeout.
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    socket.on("data", () => {});
    socket.on("error", () => {});
    socket.on("close", () => resolve(true));
  });
}

if (RUNTIME === "bun") {
  describe("@SseMapping on Bun: the idle timeout after the answer", () => {
    let server: Server;
    before(async () => {
      const app = await bootstrap({ controllers: [Ends], logger: memoryLogger() });
      server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    });
    after(() => server.close());

    it("closes an idle kept-alive connection once the stream has ended", async () => {
      assert.equal(await closedWhenIdle(server.port, "/one"), true);
    });

    it("closes an idle kept-alive connection after an error answered before the first event", async () => {
      assert.equal(await closedWhenIdle(server.port, "/refused"), true);
    });
  });
}
