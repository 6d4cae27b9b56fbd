// The streams and sockets that stay open, as an operator sees them: the gauge by route and the
// access-log line at each one's end.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { OtelApi } from "../../src/actuator/opentelemetry.ts";
import { OpenStreams } from "../../src/observe/open_streams.ts";
import { memoryLogger } from "../helpers.ts";
import { CollectingReader } from "../metric_reader.ts";

// The API as the streams read it, with a provider of the test's own: no global registration.
function apiWith(provider: () => MeterProvider): OtelApi {
  return { metrics: { getMeterProvider: provider } } as unknown as OtelApi;
}

const request = (path: string) => new Request(`http://localhost${path}?token=secret`);

describe("OpenStreams", () => {
  it("counts the open ones by kind and route in a gauge, 0 once they end", async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const streams = new OpenStreams(memoryLogger(), false, apiWith(() => provider));
    const a = streams.opened("websocket", "/rooms/{id}", request("/rooms/1"), 101);
    const b = streams.opened("websocket", "/rooms/{id}", request("/rooms/2"), 101);
    const c = streams.opened("sse", "/feed", request("/feed"), 200);
    const value = async (kind: string, route: string) =>
      (await reader.points("thaw.server.open_streams")).find((p) =>
        p.attributes["thaw.stream.kind"] === kind && p.attributes["http.route"] === route
      )?.value;
    assert.equal(await value("websocket", "/rooms/{id}"), 2);
    assert.equal(await value("sse", "/feed"), 1);
    const none = { sent: { messages: 0, bytes: 0 } };
    a.end(none);
    a.end(none);
    c.end(none);
    assert.equal(await value("websocket", "/rooms/{id}"), 1);
    assert.equal(await value("sse", "/feed"), 0);
    b.end(none);
    assert.deepEqual(streams.counts(), [
      { kind: "websocket", route: "/rooms/{id}", count: 0 },
      { kind: "sse", route: "/feed", count: 0 },
    ]);
    streams.close();
    await provider.shutdown();
  });

  it("follows a provider registered after the first stream", async () => {
    const reader = new CollectingReader();
    let provider = new MeterProvider();
    const streams = new OpenStreams(memoryLogger(), false, apiWith(() => provider));
    streams.opened("sse", "/feed", request("/feed"), 200);
    provider = new MeterProvider({ readers: [reader] });
    streams.opened("sse", "/feed", request("/feed"), 200);
    const points = await reader.points("thaw.server.open_streams");
    assert.deepEqual(points.map((p) => p.value), [2]);
    streams.close();
  });

  it("writes one access-log line at a stream's end: what it carried, and for how long", () => {
    const logger = memoryLogger();
    const streams = new OpenStreams(logger, true, undefined);
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
    const logger = memoryLogger();
    const streams = new OpenStreams(logger, true, undefined);
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
      streams.opened("sse", "/feed/{id}", new Request(url), 200).end({
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
