// The password checks' queue against a reference: never more than `parallel` running, a check
// refused exactly when every place is taken, the waiting ones run in the order they came.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { PasswordCheckQueue } from "../../src/security/password_check_queue.ts";
import { propertyOptions } from "../property.ts";

describe("PasswordCheckQueue", () => {
  it("runs at most `parallel`, queues `waiting`, refuses past them, in order (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        // true: a new check comes; false: the oldest running one ends.
        fc.array(fc.boolean(), { maxLength: 40 }),
        async (parallel, waiting, steps) => {
          const queue = new PasswordCheckQueue(parallel, waiting);
          const running: { id: number; end: () => void }[] = [];
          const started: number[] = [];
          let modelRunning = 0, modelWaiting = 0, next = 0;
          const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
          for (const comes of steps) {
            if (comes) {
              const id = next++;
              const full = modelRunning >= parallel && modelWaiting >= waiting;
              const run = queue.run(() =>
                new Promise<void>((resolve) => {
                  started.push(id);
                  running.push({ id, end: resolve });
                })
              );
              assert.equal(run === undefined, full, `check ${id} refused only when full`);
              if (!full) {
                if (modelRunning < parallel) modelRunning++;
                else modelWaiting++;
              }
            } else if (running.length > 0) {
              running.shift()!.end();
              if (modelWaiting > 0) modelWaiting--;
              else modelRunning--;
            }
            await settle();
            assert.ok(running.length <= parallel, `${running.length} running of ${parallel}`);
            assert.equal(running.length, modelRunning);
          }
          assert.deepEqual(started, [...started].sort((a, b) => a - b), "in the order they came");
        },
      ),
      propertyOptions(60),
    );
  });

  it("refuses a parallel or a queue length out of range", () => {
    assert.throws(() => new PasswordCheckQueue(0, 1), RangeError);
    assert.throws(() => new PasswordCheckQueue(1, -1), RangeError);
    assert.throws(() => new PasswordCheckQueue(1.5, 1), RangeError);
  });

  it("frees a place when a check throws", async () => {
    const queue = new PasswordCheckQueue(1, 0);
    await assert.rejects(queue.run(() => Promise.reject(new Error("boom")))!, /boom/);
    assert.equal(await queue.run(() => Promise.resolve("again")), "again");
  });
});
