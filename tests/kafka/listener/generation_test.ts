// A generation of a member's lanes: its pause ends when woken or ended, never on its own before.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Generation } from "../../../src/kafka/listener/generation.ts";

describe("Generation", () => {
  it("ends a pause when woken, and a wake with none under way does nothing", async () => {
    const generation = new Generation(7);
    generation.wake();
    let ended = false;
    const paused = generation.pause(60_000).then(() => ended = true);
    await Promise.resolve();
    assert.equal(ended, false);
    generation.wake();
    await paused;
    assert.equal(ended, true);
    assert.equal(generation.active, true);
  });

  it("ends a pause, and itself, at end()", async () => {
    const generation = new Generation(8);
    const paused = generation.pause(60_000);
    generation.end();
    await paused;
    assert.equal(generation.active, false);
    assert.equal(generation.id, 8);
  });

  it("does not pause once ended: a fetch loop that looked before the end goes on at once", async () => {
    const generation = new Generation(9);
    generation.end();
    // Ends within the microtasks that follow, before any timer: none is set.
    const first = await Promise.race([
      generation.pause(60_000).then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("waiting"), 0)),
    ]);
    generation.wake();
    assert.equal(first, "ended");
  });
});
