// `@SseMapping` over real sockets to `listen(app)`, on whichever runtime runs the suite: a client
// that leaves ends the iterator, a shutdown ends every open stream, and a client that reads
// nothing holds the iterator back.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { bootstrap, RestController, SseMapping } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { deferred } from "../deferred.ts";
import { RUNTIME } from "../runtime.ts";
import { request, until } from "./raw_client.ts";

// Large events, so that what the sockets' buffers hold is a few of them, whatever the runtime.
const EVENT_BYTES = 256 * 1024;
// Bun closes a connection silent for 10 s, its timer ticking every 4 s: past that.
const PAST_BUNS_IDLE_TIMEOUT_MS = 15_000;
// Past what the kernel's buffers of a loopback connection and a server's own take (a few MiB).
const BOUND = 64;

// A feed that fails as it is asked for its first event.
const feedDown = (): string[] => {
  throw new Error("the feed is down");
};

const state = { pulls: 0, ended: deferred<string>(), left: deferred<void>() };

@RestController()
class Feeds {
  @SseMapping("/endless")
  async *endless() {
    try {
      for (let n = 1;; n++) {
        state.pulls++;
        yield { id: String(n), data: "x".repeat(EVENT_BYTES) };
      }
    } finally {
      state.ended.resolve("finally ran");
    }
  }

  // A feed with nothing to send, or none yet: a browser told 200 would reconnect without end.
  @SseMapping("/empty")
  async *empty() {
    yield* [];
  }

  @SseMapping("/down")
  async *down() {
    await Promise.resolve();
    yield* feedDown();
  }

  @SseMapping("/silent")
  async *silent() {
    yield "before";
    await delay(PAST_BUNS_IDLE_TIMEOUT_MS);
    yield "after";
  }

  // Waits for what never comes: only the end of the stream ends it, through its return(). An
  // iterator of its own, as a subscription's is: a generator waiting on a promise that never
  // settles could not be returned, and a shutdown waits for that within server.shutdown-timeout.
  @SseMapping("/quiet")
  quiet(): AsyncIterable<string> {
    let first = true;
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          if (!first) return new Promise<IteratorResult<string>>(() => {});
          first = false;
          return Promise.resolve({ done: false, value: "hello" });
        },
        return: () => {
          state.left.resolve();
          return Promise.resolve({ done: true, value: undefined });
        },
      }),
    };
  }
}

function reset(): void {
  state.pulls = 0;
  state.ended = deferred<string>();
  state.left = deferred<void>();
}

/** A connection that sends `GET path` and reads nothing until told to. */
function silentClient(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.pause();
      socket.write(request("GET", path));
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

describe(`@SseMapping over sockets on ${RUNTIME}`, () => {
  let server: Server;
  let base: string;
  const logger = memoryLogger();

  before(async () => {
    const app = await bootstrap({ controllers: [Feeds], logger });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    base = `http://127.0.0.1:${server.port}`;
  });
  after(() => server.close());

  it("answers a stream that ends or fails before its first event with a status that stops EventSource", async () => {
    const empty = await fetch(`${base}/empty`);
    assert.equal(empty.status, 204);
    assert.equal(await empty.text(), "");
    const down = await fetch(`${base}/down`);
    assert.equal(down.status, 500);
    await down.body?.cancel();
  });

  it("ends the iterator, its finally run, when the client leaves", async () => {
    reset();
    const abort = new AbortController();
    const res = await fetch(`${base}/endless`, { signal: abort.signal });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body!.getReader();
    assert.ok((await reader.read()).value!.length > 0);
    abort.abort();
    await reader.cancel().catch(() => {});
    assert.equal(await state.ended.promise, "finally ran");
  });

  it("pulls the iterator no further ahead than the sockets take while the client reads nothing", async () => {
    reset();
    const socket = await silentClient(server.port, "/endless");
    // Until the pulls stop: the server waits on the socket, and the iterator on the server.
    let last = -1;
    let still = 0;
    while (still < 10) {
      await delay(50);
      assert.ok(state.pulls <= BOUND, `pulled ${state.pulls} events of ${EVENT_BYTES} bytes ahead`);
      still = state.pulls === last ? still + 1 : 0;
      last = state.pulls;
    }
    const held = state.pulls;
    // Reading lets it go on.
    socket.resume();
    await until(() => Promise.resolve(state.pulls > held + BOUND), "the iterator pulled again");
    socket.destroy();
    assert.equal(await state.ended.promise, "finally ran");
  });

  it("ends every open stream on shutdown, well within server.shutdown-timeout", async () => {
    reset();
    const lines = memoryLogger();
    const app = await bootstrap({ controllers: [Feeds], logger: lines });
    const own = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    const res = await fetch(`http://127.0.0.1:${own.port}/quiet`);
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: hello\n\n");
    // The shutdown-timeout is 30 s: a stream left open would hold the close that long, and be cut.
    const closed = own.close();
    assert.equal((await reader.read()).done, true);
    await closed;
    assert.deepEqual(lines.lines, []);
  });

  it("keeps a stream open through a silence longer than Bun's idle timeout", async () => {
    const app = await bootstrap({
      controllers: [Feeds],
      logger: memoryLogger(),
      config: { server: { sse: { heartbeat: 0 } } },
    });
    const own = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    try {
      const res = await fetch(`http://127.0.0.1:${own.port}/silent`);
      assert.equal(await res.text(), "data: before\n\ndata: after\n\n");
    } finally {
      await own.close();
    }
  });
});
