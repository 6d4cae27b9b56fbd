// onWorkerd: workerd's user agent, and nothing else, is workerd (the real one: tests/edge/).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { onWorkerd, WORKERD_USER_AGENT } from "../../src/runtime/on_workerd.ts";

function withUserAgent<T>(userAgent: unknown, body: () => T): T {
  const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { userAgent }, configurable: true });
  try {
    return body();
  } finally {
    if (had === undefined) delete (globalThis as { navigator?: unknown }).navigator;
    else Object.defineProperty(globalThis, "navigator", had);
  }
}

describe("onWorkerd", () => {
  it("is false on the runtime the test runs on", () => {
    assert.equal(onWorkerd(), false);
  });

  it("is true for workerd's user agent, false for others", () => {
    assert.equal(withUserAgent(WORKERD_USER_AGENT, onWorkerd), true);
    assert.equal(withUserAgent("Node.js/22", onWorkerd), false);
    assert.equal(withUserAgent(undefined, onWorkerd), false);
  });
});
