import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { closing, gracefulClose, InFlight } from "../../src/runtime/shutdown.ts";
import { propertyOptions } from "../property.ts";

function logger() {
  const lines: string[] = [];
  return { lines, error: (message: string) => void lines.push(message) };
}

describe("InFlight", () => {
  it("names the requests whose handler has not answered, and only those", async () => {
    const inFlight = new InFlight();
    let release!: (r: Response) => void;
    const fetch = inFlight.track((request) =>
      new URL(request.url).pathname === "/slow"
        ? new Promise<Response>((resolve) => release = resolve)
        : new Response("fast")
    );
    const slow = fetch(new Request("http://x/slow?q=secret"));
    await fetch(new Request("http://x/fast"));
    assert.deepEqual(inFlight.running(), ["GET /slow"]);
    release(new Response("done"));
    await slow;
    assert.deepEqual(inFlight.running(), []);
  });

  it("passes every answer, sync and async, through finish before the drain's close", async () => {
    const inFlight = new InFlight();
    const finish = (request: Request, response: Response) => {
      const headers = new Headers(response.headers);
      headers.set("x-finished", new URL(request.url).pathname);
      return new Response(response.body, { status: response.status, headers });
    };
    const fetch = inFlight.track(
      (request) =>
        request.method === "POST" ? Promise.resolve(new Response("a")) : new Response("s"),
      finish,
    );
    assert.equal((await fetch(new Request("http://x/s"))).headers.get("x-finished"), "/s");
    const post = await fetch(new Request("http://x/a", { method: "POST" }));
    assert.equal(post.headers.get("x-finished"), "/a");
    assert.equal(await post.text(), "a");
    inFlight.drain();
    const drained = await fetch(new Request("http://x/a", { method: "POST" }));
    assert.equal(drained.headers.get("x-finished"), "/a");
    assert.equal(drained.headers.get("connection"), "close");
    assert.deepEqual(inFlight.running(), []);
  });

  it("forgets a request whose handler rejected", async () => {
    const inFlight = new InFlight();
    const fetch = inFlight.track(() => Promise.reject(new Error("boom")));
    await assert.rejects(Promise.resolve(fetch(new Request("http://x/a"))), /boom/);
    assert.deepEqual(inFlight.running(), []);
  });

  it("answers with Connection: close once draining, sync and async alike", async () => {
    const inFlight = new InFlight();
    const sync = inFlight.track(() => new Response("a", { headers: { "x-a": "1" } }));
    const async = inFlight.track(() => Promise.resolve(new Response("b", { status: 201 })));
    assert.equal((await sync(new Request("http://x/"))).headers.get("connection"), null);
    inFlight.drain();
    const a = await sync(new Request("http://x/"));
    assert.equal(a.headers.get("connection"), "close");
    assert.equal(a.headers.get("x-a"), "1");
    assert.equal(await a.text(), "a");
    const b = await async(new Request("http://x/"));
    assert.equal(b.headers.get("connection"), "close");
    assert.equal(b.status, 201);
  });

  it("writes a client's path into the log as printable ASCII only, whatever its bytes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0x10ffff }), { maxLength: 300 }),
        (codes) => {
          const inFlight = new InFlight();
          const path = String.fromCodePoint(...codes.filter((c) => c < 0xd800 || c > 0xdfff));
          const fetch = inFlight.track(() => new Promise<Response>(() => {}));
          let request: Request;
          try {
            request = new Request(`http://x/${path}`);
          } catch {
            return;
          }
          void fetch(request);
          const [line] = inFlight.running();
          assert.match(line, /^GET \/[\x21-\x7e]*$/);
          assert.ok(line.length <= 4 + 100 + 3 + 3 * 100);
        },
      ),
      propertyOptions(300),
    );
  });
});

describe("gracefulClose", () => {
  it("stops, then closes the app, and reports a clean end", async () => {
    const order: string[] = [];
    const log = logger();
    const clean = await gracefulClose({
      graceful: () => {
        order.push("stop");
        return Promise.resolve();
      },
      cut: () => order.push("cut"),
    }, {
      timeoutMs: 60_000,
      inFlight: new InFlight(),
      logger: log,
      starting: () => order.push("starting"),
      closed: () => {
        order.push("closed");
        return Promise.resolve();
      },
    });
    assert.equal(clean, true);
    assert.deepEqual(order, ["starting", "stop", "closed"]);
    assert.deepEqual(log.lines, []);
  });

  it("with a delay, turns readiness DOWN and answers with Connection: close before it stops", async () => {
    const order: string[] = [];
    const inFlight = new InFlight();
    const fetch = inFlight.track(() => new Response("served"));
    const connection = () =>
      (fetch(new Request("http://x/")) as Response).headers.get("connection");
    const closing = gracefulClose({
      graceful: () => {
        order.push("stop");
        return Promise.resolve();
      },
    }, {
      timeoutMs: 60_000,
      delayMs: 1,
      inFlight,
      logger: logger(),
      starting: () => order.push("starting"),
    });
    // The delay has begun: not stopped yet, and serving.
    assert.deepEqual(order, ["starting"]);
    assert.equal(connection(), "close");
    assert.equal(await closing, true);
    assert.deepEqual(order, ["starting", "stop"]);
  });

  it("without a delay, stops as soon as readiness is DOWN", () => {
    const order: string[] = [];
    void gracefulClose({
      graceful: () => {
        order.push("stop");
        return Promise.resolve();
      },
    }, {
      timeoutMs: 60_000,
      inFlight: new InFlight(),
      logger: logger(),
      starting: () => order.push("starting"),
    });
    assert.deepEqual(order, ["starting", "stop"]);
  });

  it("cuts what outlives the timeout, names the requests, still closes the app", async () => {
    const order: string[] = [];
    const log = logger();
    const inFlight = new InFlight();
    void inFlight.track(() => new Promise<Response>(() => {}))(new Request("http://x/hang"));
    const clean = await gracefulClose({
      graceful: () => new Promise<void>(() => {}),
      cut: () => order.push("cut"),
    }, {
      timeoutMs: 1,
      inFlight,
      logger: log,
      closed: () => {
        order.push("closed");
        return Promise.resolve();
      },
    });
    assert.equal(clean, false);
    assert.deepEqual(order, ["cut", "closed"]);
    assert.deepEqual(log.lines, [
      "Shutdown: requests still running after 1 ms were cut: GET /hang",
    ]);
  });

  it("names at most twenty cut requests, and counts the rest", async () => {
    const log = logger();
    const inFlight = new InFlight();
    const hang = inFlight.track(() => new Promise<Response>(() => {}));
    for (let i = 0; i < 25; i++) void hang(new Request(`http://x/r${i}`));
    await gracefulClose({ graceful: () => new Promise<void>(() => {}) }, {
      timeoutMs: 1,
      inFlight,
      logger: log,
    });
    const named = Array.from({ length: 20 }, (_, i) => `GET /r${i}`).join(", ");
    assert.deepEqual(log.lines, [
      `Shutdown: requests still running after 1 ms were cut: ${named} and 5 more`,
    ]);
  });

  it("reports a failing app close as an unclean end, logged", async () => {
    const log = logger();
    const clean = await gracefulClose({ graceful: () => Promise.resolve() }, {
      timeoutMs: 60_000,
      inFlight: new InFlight(),
      logger: log,
      closed: () => Promise.reject(new AggregateError([new Error("x")], "one hook failed")),
    });
    assert.equal(clean, false);
    assert.deepEqual(log.lines, ["Shutdown: closing the application failed"]);
  });
});

describe("closing", () => {
  it("keeps status, headers and body, and adds Connection: close", async () => {
    const cookies = new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x-a", "1"]]);
    const copy = closing(
      new Response("body", { status: 418, statusText: "Teapot", headers: cookies }),
    );
    assert.equal(copy.status, 418);
    assert.equal(copy.statusText, "Teapot");
    assert.deepEqual(copy.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(copy.headers.get("connection"), "close");
    assert.equal(await copy.text(), "body");
  });
});
