import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeldConnections } from "../../src/sql/held_connections.ts";

describe("held_connections", () => {
  it("resolves none() once every connection taken is given back", async () => {
    const held = new HeldConnections();
    await held.none();
    held.take();
    held.take();
    let done = false;
    const none = held.none().then(() => done = true);
    held.give();
    await Promise.resolve();
    assert.equal(done, false);
    held.give();
    await none;
    assert.equal(done, true);
  });
});
