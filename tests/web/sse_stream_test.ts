// The body of an event stream: pulled as it is read, with heartbeats in its silences, on a clock
// the test moves.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { openEventStream } from "../../src/web/sse_stream.ts";
import { FakeClock, settle } from "../fake_clock.ts";
import { deferred } from "../deferred.ts";

const decoder = new TextDecoder();

/** An iterator of `items` that counts its pulls and whether it was returned. */
function counted(items: Iterable<unknown>) {
  const source = items[Symbol.iterator]();
  const state = { pulls: 0, returned: false };
  const iterator: AsyncIterator<unknown> = {
    next: () => {
      state.pulls++;
      return Promise.resolve(source.next());
    },
    return: () => {
      state.returned = true;
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return { iterator, state };
}

function* naturals(): Generator<number> {
  for (let n = 1;; n++) yield n;
}

async function read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value, done } = await reader.read();
  return done ? "<end>" : decoder.decode(value);
}

const options = (clock: FakeClock, failed: unknown[] = []) => ({
  heartbeatMs: 1000,
  clock,
  failed: (error: unknown) => void failed.push(error),
});

describe("openEventStream", () => {
  it("begins with the first event, and pulls the next only when the body is read", async () => {
    const { iterator, state } = counted(naturals());
    const stream = openEventStream(iterator, options(new FakeClock()));
    await stream.begun;
    await settle();
    assert.equal(state.pulls, 1);
    const reader = stream.body.getReader();
    assert.equal(await read(reader), "data: 1\n\n");
    await settle();
    // One pull for the read that is pending, none ahead of it.
    assert.ok(state.pulls <= 2, `pulled ${state.pulls} times`);
    assert.equal(await read(reader), "data: 2\n\n");
    assert.equal(await read(reader), "data: 3\n\n");
    await settle();
    assert.ok(state.pulls <= 4, `pulled ${state.pulls} times for 3 events read`);
    await reader.cancel();
    assert.equal(state.returned, true);
  });

  it("ends the body when the iterator ends, and an iterator without events gives an empty body", async () => {
    const { iterator, state } = counted(["a", "b"]);
    const stream = openEventStream(iterator, options(new FakeClock()));
    assert.equal(await stream.begun, "begun");
    assert.equal(await new Response(stream.body).text(), "data: a\n\ndata: b\n\n");
    assert.equal(state.returned, false);
    const empty = openEventStream(counted([]).iterator, options(new FakeClock()));
    assert.equal(await empty.begun, "done");
    assert.equal(await new Response(empty.body).text(), "");
  });

  it("tells a stream ended from outside before its first event from one with none to send", async () => {
    const waiting: AsyncIterator<unknown> = { next: () => new Promise(() => {}) };
    const stream = openEventStream(waiting, options(new FakeClock()));
    stream.end();
    assert.equal(await stream.begun, "ended");
    assert.equal(await new Response(stream.body).text(), "");
  });

  it("rejects begun with an error before the first event, and returns an iterator whose frame failed", async () => {
    const failing: AsyncIterator<unknown> = { next: () => Promise.reject(new Error("no feed")) };
    await assert.rejects(openEventStream(failing, options(new FakeClock())).begun, /no feed/);
    const { iterator, state } = counted([{ data: "x", id: "1\n2" }]);
    await assert.rejects(
      openEventStream(iterator, options(new FakeClock())).begun,
      /id must not hold CR, LF or NUL/,
    );
    assert.equal(state.returned, true);
  });

  it("ends the stream on an error after the first event, and reports it", async () => {
    const failed: unknown[] = [];
    async function* events() {
      yield "one";
      throw new Error("feed lost");
    }
    const stream = openEventStream(events(), options(new FakeClock(), failed));
    await stream.begun;
    assert.equal(await new Response(stream.body).text(), "data: one\n\n");
    assert.equal((failed[0] as Error).message, "feed lost");
  });

  it("sends a heartbeat after each heartbeat of silence, and none while the reader is behind", async () => {
    const clock = new FakeClock();
    const next = deferred<IteratorResult<unknown>>();
    let pulls = 0;
    const iterator: AsyncIterator<unknown> = {
      next: () => ++pulls === 1 ? Promise.resolve({ done: false, value: "first" }) : next.promise,
    };
    const stream = openEventStream(iterator, options(clock));
    await stream.begun;
    const reader = stream.body.getReader();
    assert.equal(await read(reader), "data: first\n\n");
    const beat = read(reader);
    await clock.advance(999);
    assert.equal(await Promise.race([beat, settle().then(() => "nothing yet")]), "nothing yet");
    await clock.advance(1);
    assert.equal(await beat, ":\n\n");
    // No one reads: one heartbeat waits in the body, and no more pile up behind it.
    await clock.advance(10_000);
    assert.equal(await read(reader), ":\n\n");
    next.resolve({ done: false, value: "second" });
    assert.equal(await read(reader), "data: second\n\n");
    await reader.cancel();
  });

  it("begins with a heartbeat when the first event is slower than one", async () => {
    const clock = new FakeClock();
    const first = deferred<IteratorResult<unknown>>();
    const stream = openEventStream({ next: () => first.promise }, options(clock));
    let begun = false;
    void stream.begun.then(() => begun = true);
    await settle();
    assert.equal(begun, false);
    await clock.advance(1000);
    assert.equal(begun, true);
    const reader = stream.body.getReader();
    assert.equal(await read(reader), ":\n\n");
    first.resolve({ done: false, value: "late" });
    assert.equal(await read(reader), "data: late\n\n");
    await reader.cancel();
  });

  it("sends no heartbeat when heartbeatMs is 0", async () => {
    const clock = new FakeClock();
    const stream = openEventStream(
      { next: () => new Promise(() => {}) },
      { ...options(clock), heartbeatMs: 0 },
    );
    assert.equal(clock.pending, 0);
    stream.end();
    await stream.begun;
    assert.equal(await new Response(stream.body).text(), "");
  });

  it("ends, returning the iterator, when the reader cancels or end() is called", async () => {
    for (const how of ["cancel", "end"] as const) {
      const { iterator, state } = counted(naturals());
      const abort = new AbortController();
      let ended = 0;
      const stream = openEventStream(iterator, {
        ...options(new FakeClock()),
        signal: abort.signal,
        ended: () => void ended++,
      });
      await stream.begun;
      const reader = stream.body.getReader();
      assert.equal(await read(reader), "data: 1\n\n");
      if (how === "cancel") await reader.cancel();
      else stream.end();
      assert.equal(state.returned, true, how);
      assert.equal(ended, 1, how);
      if (how !== "cancel") {
        // What was pulled already may still be read; then the body ends.
        let text = "";
        for (let chunk = await read(reader); chunk !== "<end>"; chunk = await read(reader)) {
          text += chunk;
        }
        assert.ok(text === "" || text === "data: 2\n\n", `${how}: ${text}`);
      }
    }
  });

  it("ends, begun empty, when the signal aborts while the first event is awaited", async () => {
    const clock = new FakeClock();
    const abort = new AbortController();
    let returned = false;
    const stream = openEventStream({
      next: () => new Promise(() => {}),
      return: () => {
        returned = true;
        return Promise.resolve({ done: true, value: undefined });
      },
    }, { ...options(clock), signal: abort.signal });
    abort.abort();
    await stream.begun;
    assert.equal(await new Response(stream.body).text(), "");
    assert.equal(returned, true);
    assert.equal(clock.pending, 0);
  });

  it("ends at once, and begins empty, when the client left before it began", async () => {
    const { iterator, state } = counted(naturals());
    const stream = openEventStream(iterator, {
      ...options(new FakeClock()),
      signal: AbortSignal.abort(),
    });
    await stream.begun;
    assert.equal(await new Response(stream.body).text(), "");
    assert.equal(state.returned, true);
    assert.equal(state.pulls, 0);
  });
});
