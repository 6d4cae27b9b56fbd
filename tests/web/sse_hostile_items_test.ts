// The event stream against an iterator that breaks the iterator protocol, and an
// `id` the UTF-8 encoding would change without a word.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { openEventStream } from "../../src/web/sse_stream.ts";
import { sseFrame } from "../../src/web/sse_frame.ts";
import { FakeClock, settle } from "../fake_clock.ts";

describe("openEventStream against a hostile iterator", () => {
  it("rejects begun when next() resolves to something that is not an object", async () => {
    // `for await` throws a TypeError here; the stream reads `result.done` outside its try, so
    // the first pull rejects unobserved (`void step()`) and begun never settles.
    const iterator = {
      next: () => Promise.resolve(undefined as unknown as IteratorResult<unknown>),
    };
    const failed: unknown[] = [];
    const clock = new FakeClock();
    const stream = openEventStream(iterator, {
      heartbeatMs: 0,
      clock,
      failed: (e) => void failed.push(e),
    });
    let outcome = "pending";
    stream.begun.then(() => outcome = "resolved", () => outcome = "rejected");
    await settle();
    assert.equal(outcome, "rejected");
  });

  it("rejects begun when the result's done getter throws", async () => {
    const iterator = {
      next: () =>
        Promise.resolve({
          get done(): boolean {
            throw new Error("done getter");
          },
          value: 1,
        } as IteratorResult<unknown>),
    };
    const stream = openEventStream(iterator, {
      heartbeatMs: 0,
      clock: new FakeClock(),
      failed: () => {},
    });
    let outcome = "pending";
    stream.begun.then(() => outcome = "resolved", () => outcome = "rejected");
    await settle();
    assert.equal(outcome, "rejected");
  });
});

describe("sseFrame and lone surrogates", () => {
  it("refuses an id with a lone surrogate, which UTF-8 would turn into U+FFFD", () => {
    // docs/streaming.md: an id is refused rather than changed, "so that no id changes without a
    // word"; TextEncoder sends "a\uD800" as "a\uFFFD", and the client echoes that back.
    assert.throws(() => sseFrame({ data: "x", id: "a\uD800" }), TypeError);
  });

  it("refuses one in an event name or in data, either half; a whole pair goes as it is", () => {
    for (const lone of ["\uD800", "\uDC00", "a\uDBFFb", "\uDC00\uD800"]) {
      assert.throws(() => sseFrame({ data: "x", event: lone }), /lone surrogate/);
      assert.throws(() => sseFrame({ data: lone }), /lone surrogate/);
    }
    assert.equal(sseFrame({ data: "\uD83D\uDE00", id: "\uD83D\uDE00" }), "id: 😀\ndata: 😀\n\n");
    // As JSON, a lone surrogate is escaped (\ud800): it goes.
    assert.equal(sseFrame({ data: { s: "\uD800" } }), 'data: {"s":"\\ud800"}\n\n');
  });
});
