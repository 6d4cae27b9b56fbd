// The open streams and sockets as the actuator's gauge, on a meter provider of the test's own.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { OtelApi } from "../../src/actuator/opentelemetry.ts";
import { observeOpenStreams } from "../../src/actuator/stream_metrics.ts";
import { OpenStreams } from "../../src/observe/open_streams.ts";
import { CollectingReader } from "../metric_reader.ts";

// The API as the gauge reads it, with a provider of the test's own: no global registration.
function apiWith(provider: () => MeterProvider): OtelApi {
  return { metrics: { getMeterProvider: provider } } as unknown as OtelApi;
}

const request = (path: string) => `http://localhost${path}`;

describe("observeOpenStreams", () => {
  it("counts the open ones by kind and route in a gauge, 0 once they end", async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const streams = new OpenStreams();
    const stop = observeOpenStreams(streams, apiWith(() => provider));
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
    assert.equal(await value("websocket", "/rooms/{id}"), 0);
    stop();
    // Stopped: what opens now is not read (the reader keeps the last value it had).
    streams.opened("websocket", "/rooms/{id}", request("/rooms/3"), 101);
    assert.equal(await value("websocket", "/rooms/{id}"), 0);
    await provider.shutdown();
  });

  it("follows a provider registered after the first stream", async () => {
    const reader = new CollectingReader();
    let provider = new MeterProvider();
    const streams = new OpenStreams();
    const stop = observeOpenStreams(streams, apiWith(() => provider));
    streams.opened("sse", "/feed", request("/feed"), 200);
    provider = new MeterProvider({ readers: [reader] });
    streams.opened("sse", "/feed", request("/feed"), 200);
    const points = await reader.points("thaw.server.open_streams");
    assert.deepEqual(points.map((p) => p.value), [2]);
    stop();
  });
});
