import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type DenoHost, serveWithHeaderTimeout } from "../../src/runtime/deno_listener.ts";

const options = {
  port: 0,
  hostname: "127.0.0.1",
  headerTimeoutMs: 1000,
  onError: () => new Response(null, { status: 500 }),
};
const handler = () => new Response("x");

describe("serveWithHeaderTimeout", () => {
  it("listens on nothing and leaves Deno.serve to serve where Deno lacks the internal it needs", () => {
    const internal = Symbol("Deno.internal");
    const hosts: DenoHost[] = [
      { listen: () => assert.fail("listened without internals") },
      { listen: () => assert.fail("listened without serveHttpOnConnection"), internal },
      Object.assign(
        { listen: () => assert.fail("listened with a serveHttpOnConnection of another kind") },
        { internal, [internal]: { serveHttpOnConnection: "not a function" } },
      ),
    ];
    for (const host of hosts) {
      assert.equal(serveWithHeaderTimeout(host, handler, options), undefined);
    }
  });
});

describe("serveWithHeaderTimeout's sweep", () => {
  it("still closes a silent connection after the wall clock steps back an hour", async () => {
    const internal = Symbol("Deno.internal");
    let aborted: AbortSignal | undefined;
    // One connection, then an accept that waits until the listener closes.
    let accepted = false;
    let closed: (error: Error) => void = () => {};
    const listener = {
      addr: { port: 1, hostname: "127.0.0.1" },
      accept: () => {
        if (accepted) return new Promise<never>((_, reject) => closed = reject);
        accepted = true;
        return Promise.resolve({ close() {} });
      },
      close: () => closed(new Error("closed")),
    };
    const host = Object.assign({ listen: () => listener, internal }, {
      [internal]: {
        serveHttpOnConnection: (_conn: unknown, signal: AbortSignal) => {
          aborted = signal;
          return { finished: new Promise<void>(() => {}), shutdown: () => Promise.resolve() };
        },
      },
    });
    // The wall clock as the listener reads it, moved by the test; each read counted, so that
    // the test waits on sweeps having run, not on time.
    const realNow = Date.now;
    let clock = realNow();
    let reads = 0;
    Date.now = () => (reads++, clock);
    // Liveness only: a listener that never serves, or a sweep that stopped reading this clock,
    // fails here rather than hanging the run (performance.now(), which the test leaves alone).
    const until = async (done: () => boolean, what: string) => {
      const deadline = performance.now() + 30_000;
      while (!done()) {
        if (performance.now() > deadline) assert.fail(`never ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const sweepsRun = (n: number) => {
      const target = reads + n;
      return until(() => reads >= target, `saw ${n} more reads of the clock`);
    };
    const served = serveWithHeaderTimeout(host as unknown as DenoHost, handler, options);
    try {
      assert.ok(served !== undefined);
      await until(() => aborted !== undefined, "served the connection");
      clock -= 3_600_000;
      await sweepsRun(2);
      assert.equal(aborted?.aborted, false, "closed before the bound");
      clock += options.headerTimeoutMs;
      await sweepsRun(3);
      assert.equal(aborted?.aborted, true, "a silent connection outlived the bound");
    } finally {
      Date.now = realNow;
      await served?.stop.graceful();
    }
  });
});
