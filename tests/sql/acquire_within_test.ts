import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { acquireWithin } from "../../src/sql/acquire_within.ts";
import { DataError } from "../../src/sql/data_error.ts";

describe("acquire_within", () => {
  it("gives the connection that comes in time", async () => {
    assert.equal(await acquireWithin("main", 10_000, () => Promise.resolve("c"), () => {}), "c");
  });

  it("rejects naming the datasource when none comes in time, and gives back one that comes later", async () => {
    let arrive!: (connection: string) => void;
    const given: string[] = [];
    const waiting = acquireWithin(
      "reports",
      10,
      () => new Promise<string>((resolve) => arrive = resolve),
      (late) => given.push(late),
    );
    await assert.rejects(waiting, (error: unknown) => {
      assert.ok(error instanceof DataError);
      assert.equal(error.reason, "timeout");
      assert.match(error.message, /^datasource "reports": no connection was free within 10 ms/);
      // The keys the user writes, not the code's names for them.
      assert.match(error.message, /within 10 ms \(pool\.acquire-timeout\)/);
      assert.match(error.message, /raise pool\.max-size/);
      assert.doesNotMatch(error.message, /acquireTimeoutMs|maxSize/);
      return true;
    });
    arrive("late");
    await Promise.resolve();
    assert.deepEqual(given, ["late"]);
  });

  it("passes on a failure that comes in time", async () => {
    const failure = new Error("refused");
    await assert.rejects(
      acquireWithin("main", 10_000, () => Promise.reject(failure), () => {}),
      failure,
    );
  });
});
