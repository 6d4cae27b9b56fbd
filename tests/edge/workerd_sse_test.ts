// `@SseMapping` on real workerd: the stream, its headers and Last-Event-ID, as on a server.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/sse_worker.ts", import.meta.url));

describe("an event stream on workerd", () => {
  let worker: ServedWorker;

  before(async () => {
    worker = await serveWorker(FIXTURE, "sse_worker");
  });

  after(() => worker?.close());

  it("streams the events as text/event-stream, from the Last-Event-ID given", async () => {
    const res = await fetch(`${worker.origin}/feed`, { headers: { "Last-Event-ID": "7" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.equal(res.headers.get("x-accel-buffering"), "no");
    const frame = (n: number) => `event: tick\nid: ${n}\ndata: line ${n}\ndata: second line\n\n`;
    assert.equal(await res.text(), frame(8) + frame(9) + frame(10));
  });

  it("streams every event through middleware that changes the answer's head", async () => {
    const res = await fetch(`${worker.origin}/stamped`);
    assert.equal(res.headers.get("x-stamped"), "yes");
    const frame = (n: number) => `event: tick\nid: ${n}\ndata: line ${n}\ndata: second line\n\n`;
    assert.equal(await res.text(), frame(1) + frame(2) + frame(3));
  });
});
