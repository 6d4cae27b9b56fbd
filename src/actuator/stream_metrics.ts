// The open event streams and WebSockets of an app as a gauge, `thaw.server.open_streams` by route
// and kind, through the OpenTelemetry API the actuator has: made as the first stream opens (an app
// that never streams reports no such instrument), on the meter provider registered then, and
// again on a provider registered later, at the next stream's opening.
import type { MeterProvider, ObservableCallback } from "@opentelemetry/api";
import type { OpenStreams } from "../observe/open_streams.ts";
import { VERSION } from "../version.ts";
import type { OtelApi } from "./opentelemetry.ts";

/** Reports `streams` through `api` until the returned function is called. */
export function observeOpenStreams(streams: OpenStreams, api: OtelApi): () => void {
  let provider: MeterProvider | undefined;
  let unregister: (() => void) | undefined;
  const follow = () => {
    const now = api.metrics.getMeterProvider();
    if (now === provider) return;
    unregister?.();
    provider = now;
    const gauge = now.getMeter("thaw", VERSION).createObservableUpDownCounter(
      "thaw.server.open_streams",
      { unit: "{stream}", description: "Event streams and WebSockets open now, by route." },
    );
    const read: ObservableCallback = (result) => {
      for (const { kind, route, count } of streams.counts()) {
        result.observe(count, { "http.route": route, "thaw.stream.kind": kind });
      }
    };
    gauge.addCallback(read);
    unregister = () => gauge.removeCallback(read);
  };
  const unwatch = streams.watch(follow);
  return () => {
    unwatch();
    unregister?.();
  };
}
