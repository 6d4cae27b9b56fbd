import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { rawBodyOf, requestHeader } from "../../src/runtime/node_incoming.ts";

describe("rawBodyOf", () => {
  it("finds Node's incoming.rawBody bytes in the env, and nothing in anything else", () => {
    const bytes = new Uint8Array([1]);
    const node = (extra: object) => ({ incoming: { headers: {}, rawHeaders: [], ...extra } });
    assert.equal(rawBodyOf(node({ rawBody: bytes })), bytes);
    for (
      const env of [
        undefined,
        null,
        "x",
        {},
        { incoming: null },
        { incoming: "x" },
        node({ rawBody: "text" }),
        node({ rawBody: [1, 2] }),
        // Not a Node request: an edge runtime's binding that happens to be called `incoming`.
        { incoming: { rawBody: bytes } },
        JSON.parse(
          '{"__proto__": {"incoming": {"headers": {}, "rawHeaders": [], "rawBody": [1]}}}',
        ),
      ]
    ) {
      assert.equal(rawBodyOf(env), undefined, JSON.stringify(env));
    }
  });
});

describe("requestHeader", () => {
  const request = new Request("http://localhost/", { headers: { "content-type": "text/plain" } });

  it("reads Node's parsed headers when the env holds a Node request", () => {
    const env = {
      incoming: {
        headers: { "content-type": "application/json", accept: ["a", "b"] },
        rawHeaders: ["Content-Type", "application/json", "Accept", "a", "Accept", "b"],
      },
    };
    assert.equal(requestHeader(request, env, "content-type"), "application/json");
    assert.equal(requestHeader(request, env, "accept"), "a, b");
    assert.equal(requestHeader(request, env, "x-missing"), null);
    // Node keeps only the first Content-Type in `incoming.headers`; both must be seen.
    const twice = {
      incoming: {
        headers: { "content-type": "application/json" },
        rawHeaders: ["Content-Type", "application/json", "content-type", "text/plain"],
      },
    };
    assert.equal(requestHeader(request, twice, "content-type"), "application/json, text/plain");
  });

  it("reads the request's own headers with any other env", () => {
    for (
      const env of [
        undefined,
        {},
        { incoming: { headers: { "content-type": "application/json" } } },
        { incoming: { headers: null, rawHeaders: [] } },
        JSON.parse(
          '{"__proto__": {"incoming": {"headers": {"content-type": "x/y"}, "rawHeaders": []}}}',
        ),
      ]
    ) {
      assert.equal(requestHeader(request, env, "content-type"), "text/plain", JSON.stringify(env));
    }
  });
});
