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
