// The streams and sockets that stay open, as an operator sees them: their count by route and the
// access-log line at each one's end.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { OpenStreams } from "../../src/observe/open_streams.ts";
import { accessLogLine, streamAccessLog } from "../../src/observe/access_log.ts";
import { memoryLogger } from "../helpers.ts";

// The access log's lines of the streams, as the logging feature writes them when they are plain.
function logged() {
  const logger = memoryLogger();
  const streams = new OpenStreams(streamAccessLog((entry) => logger.error(accessLogLine(entry))));
  return { logger, streams };
}

const request = (path: string) => `http://localhost${path}?token=secret`;

describe("OpenStreams", () => {
  it("counts the open ones by kind and route, 0 once they end, and tells its watchers", () => {
    const streams = new OpenStreams();
    let told = 0;
    const unwatch = streams.watch(() => told++);
    const a = streams.opened("websocket", "/rooms/{id}", request("/rooms/1"), 101);
    streams.opened("websocket", "/rooms/{id}", request("/rooms/2"), 101);
    const c = streams.opened("sse", "/feed", request("/feed"), 200);
    assert.equal(told, 3);
    unwatch();
    const none = { sent: { messages: 0, bytes: 0 } };
    a.end(none);
    a.end(none);
    c.end(none);
    streams.opened("sse", "/feed", request("/feed"), 200);
    assert.equal(told, 3);
    assert.deepEqual(streams.counts(), [
      { kind: "websocket", route: "/rooms/{id}", count: 1 },
      { kind: "sse", route: "/feed", count: 1 },
    ]);
  });

  it("writes one access-log line at a stream's end: what it carried, and for how long", () => {
    const { logger, streams } = logged();
    const socket = streams.opened("websocket", "/rooms/{id}", request("/rooms/7"), 101);
    assert.equal(logger.lines.length, 0);
    socket.end({ sent: { messages: 3, bytes: 120 }, received: { messages: 2, bytes: 10 } });
    socket.end({ sent: { messages: 9, bytes: 9 } });
    assert.equal(logger.lines.length, 1);
    const line = JSON.parse(String(logger.lines[0][0]));
    assert.equal(typeof line.time, "string");
    assert.equal(typeof line.duration_ms, "number");
    assert.deepEqual({ ...line, time: undefined, duration_ms: undefined }, {
      time: undefined,
      duration_ms: undefined,
      method: "GET",
      route: "/rooms/{id}",
      path: "/rooms/7",
      status: 101,
      bytes: 120,
      stream: "websocket",
      sent: 3,
      received: 2,
      bytes_received: 10,
    });
  });

  it("keeps every byte of a client's path inside its one line", () => {
    const { logger, streams } = logged();
    for (let byte = 0; byte < 256; byte++) {
      const path = `/feed/${encodeURIComponent(String.fromCharCode(byte))}x${
        String.fromCharCode(byte)
      }`;
      let url: string;
      try {
        url = new Request(`http://localhost${path}`).url;
      } catch {
        continue;
      }
      streams.opened("sse", "/feed/{id}", url, 200).end({
        sent: { messages: 0, bytes: 0 },
      });
    }
    assert.ok(logger.lines.length > 200);
    for (const [line] of logger.lines) {
      assert.doesNotMatch(String(line), /[\n\r\u0085\u2028\u2029]/);
      assert.equal(JSON.parse(String(line)).stream, "sse");
    }
  });
});
