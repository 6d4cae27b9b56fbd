import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { closeWithin } from "../../src/kafka/client_connections.ts";

/** A client whose own close does what `close` says; counts the cuts of its connections. */
function client(close: () => Promise<void>) {
  const state = { cuts: 0 };
  return {
    state,
    client: {
      connections: {
        close: () => {
          state.cuts++;
          return Promise.resolve();
        },
      },
    },
    close,
  };
}

describe("closeWithin", () => {
  it("leaves the connections to a close that ended", async () => {
    const { state, client: c, close } = client(() => Promise.resolve());
    await closeWithin(c, close, 60_000);
    assert.equal(state.cuts, 0);
  });

  it("cuts the connections of a close that failed", async () => {
    const { state, client: c, close } = client(() => Promise.reject(new Error("no coordinator")));
    await closeWithin(c, close, 60_000);
    assert.equal(state.cuts, 1);
  });

  it("cuts the connections of a close still waiting past its bound, and ends", async () => {
    const { state, client: c, close } = client(() => new Promise(() => {}));
    await closeWithin(c, close, 1);
    assert.equal(state.cuts, 1);
  });

  it("ends when cutting the connections fails too", async () => {
    const c = { connections: { close: () => Promise.reject(new Error("socket gone")) } };
    await closeWithin(c, () => Promise.reject(new Error("no coordinator")), 60_000);
  });
});
