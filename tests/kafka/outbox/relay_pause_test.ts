// The relay's waits: a commit ends a wakeable wait (or the next one, at once), never one after a
// failure; the close ends any wait, and none lasts until the relay opens again.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RelayPause } from "../../../src/kafka/outbox/relay_pause.ts";

const LONG = 60_000;

// Whether `wait` ended within a few turns of the event loop.
async function ended(wait: Promise<void>): Promise<boolean> {
  let done = false;
  void wait.then(() => done = true);
  await new Promise((resolve) => setTimeout(resolve, 5));
  return done;
}

describe("RelayPause", () => {
  it("waits its time when nothing wakes it", async () => {
    const pause = new RelayPause();
    const started = performance.now();
    await pause.sleep(20, true);
    assert.ok(performance.now() - started >= 15);
  });

  it("ends a wakeable wait at a poke, and not one after a failure", async () => {
    const pause = new RelayPause();
    const wakeable = pause.sleep(LONG, true);
    pause.poke();
    assert.equal(await ended(wakeable), true);

    pause.passStarts();
    const held = pause.sleep(LONG, false);
    pause.poke();
    assert.equal(await ended(held), false);
    pause.close();
    assert.equal(await ended(held), true);
  });

  it("ends the next wakeable wait at once after a poke, until a pass starts", async () => {
    const pause = new RelayPause();
    pause.poke();
    assert.equal(await ended(pause.sleep(LONG, true)), true);
    pause.passStarts();
    const wait = pause.sleep(LONG, true);
    assert.equal(await ended(wait), false);
    pause.close();
    await wait;
  });

  it("lets no wait last once closed, until opened again", async () => {
    const pause = new RelayPause();
    pause.close();
    assert.equal(pause.closing, true);
    assert.equal(await ended(pause.sleep(LONG, false)), true);
    pause.open();
    assert.equal(pause.closing, false);
    const wait = pause.sleep(LONG, false);
    assert.equal(await ended(wait), false);
    pause.close();
    await wait;
  });
});
