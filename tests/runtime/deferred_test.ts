import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Deferred } from "../../src/runtime/deferred.ts";
import { propertyOptions } from "../property.ts";

// How a promise settled, read without waiting on a rejection unhandled.
async function settled<T>(promise: Promise<T>): Promise<{ value: T } | { reason: unknown }> {
  try {
    return { value: await promise };
  } catch (reason) {
    return { reason };
  }
}

describe("Deferred", () => {
  it("resolves its promise with the value given", async () => {
    const ready = new Deferred<string>();
    ready.resolve("done");
    assert.equal(await ready.promise, "done");
  });

  it("rejects its promise with the reason given", async () => {
    const ready = new Deferred<string>();
    const failure = new Error("failed");
    ready.reject(failure);
    await assert.rejects(ready.promise, (error) => error === failure);
  });

  it("resolves with no value where it holds none", async () => {
    const ready = new Deferred();
    ready.resolve();
    assert.equal(await ready.promise, undefined);
  });

  it("settles as a promise it is resolved with settles", async () => {
    const ready = new Deferred<number>();
    const failure = new Error("later");
    ready.resolve(Promise.reject(failure));
    await assert.rejects(ready.promise, (error) => error === failure);
  });

  it("is still pending until it is settled", async () => {
    const ready = new Deferred<number>();
    const first = await Promise.race([ready.promise, Promise.resolve("pending")]);
    assert.equal(first, "pending");
    ready.resolve(1);
    assert.equal(await Promise.race([ready.promise, Promise.resolve(0)]), 1);
  });

  it("settles through resolve and reject passed on as callbacks, unbound", async () => {
    const resolved = new Deferred<number>();
    const rejected = new Deferred<number>();
    const failure = new Error("called back");
    const { resolve } = resolved;
    const { reject } = rejected;
    queueMicrotask(() => resolve(7));
    queueMicrotask(() => reject(failure));
    assert.equal(await resolved.promise, 7);
    await assert.rejects(rejected.promise, (error) => error === failure);
  });

  it("keeps what the first call settled it with, whatever calls follow", async () => {
    const call = fc.oneof(
      fc.record({ kind: fc.constant("resolve" as const), value: fc.integer() }),
      fc.record({ kind: fc.constant("reject" as const), value: fc.integer() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 8 }), async (calls) => {
        const ready = new Deferred<number>();
        for (const { kind, value } of calls) {
          if (kind === "resolve") ready.resolve(value);
          else ready.reject(value);
        }
        const [first] = calls;
        assert.deepEqual(
          await settled(ready.promise),
          first.kind === "resolve" ? { value: first.value } : { reason: first.value },
        );
      }),
      propertyOptions(),
    );
  });
});
