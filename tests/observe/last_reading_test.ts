// A gauge's figure from a slow source: one read at a time, a collection waiting for it a bounded
// time and answering the last figure a read finished with, a failed read leaving that figure.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { LastReading } from "../../src/observe/last_reading.ts";
import { Deferred } from "../../src/runtime/deferred.ts";

describe("LastReading", () => {
  it("answers a read that finishes within the time", async () => {
    const reading = new LastReading(0, 1000);
    assert.equal(await reading.value(() => Promise.resolve(7)), 7);
    assert.equal(reading.underway, false);
    assert.equal(await reading.value(() => Promise.resolve(8)), 8);
  });

  it("answers the last figure past the time, and waits for the same read next time", async () => {
    const reading = new LastReading(1, 10);
    const slow = new Deferred<number>();
    let reads = 0;
    const read = () => {
      reads++;
      return slow.promise;
    };
    assert.equal(await reading.value(read), 1);
    assert.equal(reading.underway, true);
    const next = reading.value(read);
    slow.resolve(5);
    assert.equal(await next, 5);
    assert.equal(reads, 1);
    assert.equal(reading.underway, false);
  });

  it("keeps the last figure when a read fails", async () => {
    const reading = new LastReading<number | undefined>(undefined, 1000);
    assert.equal(await reading.value(() => Promise.resolve(3)), 3);
    assert.equal(await reading.value(() => Promise.reject(new Error("gone"))), 3);
    assert.equal(reading.underway, false);
  });
});
