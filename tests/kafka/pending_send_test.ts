// A send from its call until its caller is answered: answered once, whatever comes after; its
// rejection explained; its bound answering it unless it was answered first.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PendingSend } from "../../src/kafka/pending_send.ts";

const RECORD = { topic: "t", key: undefined, value: undefined, headers: [], partition: undefined };
const SENT = [{ topic: "t", partition: 0, offset: 4n }];
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PendingSend", () => {
  it("resolves once: a later resolve or reject changes nothing", async () => {
    const send = new PendingSend([RECORD], (error) => error);
    assert.equal(send.settled, false);
    send.resolve(SENT);
    send.reject(new Error("late"));
    send.resolve([]);
    assert.equal(send.settled, true);
    assert.deepEqual(await send.answer, SENT);
  });

  it("rejects with the error explained, once", async () => {
    const explained: unknown[] = [];
    const send = new PendingSend([RECORD], (error) => {
      explained.push(error);
      return new Error("explained", { cause: error });
    });
    const refused = new Error("refused");
    send.reject(refused);
    send.reject(new Error("again"));
    send.resolve(SENT);
    await assert.rejects(send.answer, (error: Error) => error.cause === refused);
    assert.deepEqual(explained, [refused]);
  });

  it("answers its caller even when the explanation throws: with the client's error", async () => {
    const send = new PendingSend([RECORD], () => {
      throw new TypeError("explaining failed");
    });
    const refused = new Error("refused");
    send.reject(refused);
    assert.equal(send.settled, true);
    await assert.rejects(send.answer, (error) => error === refused);
  });

  it("runs its bound unless answered first, and keeps the last failure for it", async () => {
    const bounded = new PendingSend([RECORD], (error) => error);
    const first = new Error("first try");
    const last = new Error("last try");
    bounded.failed(first);
    bounded.failed(last);
    bounded.bound(5, () => bounded.reject(bounded.lastFailure));
    await assert.rejects(bounded.answer, (error) => error === last);

    const answered = new PendingSend([RECORD], (error) => error);
    let ran = false;
    answered.bound(5, () => ran = true);
    answered.resolve(SENT);
    await wait(20);
    assert.equal(ran, false);
  });

  it("waits a bound past a timer's longest as that longest, not at once", async () => {
    const send = new PendingSend([RECORD], (error) => error);
    let ran = false;
    send.bound(2 ** 40, () => ran = true);
    await wait(20);
    assert.equal(ran, false);
    send.resolve(SENT);
  });
});
