// The answers that stay open (`@SseMapping` streams, `@WebSocketMapping` sockets) as an operator
// sees them: how many are open by route, as a gauge where OpenTelemetry's API is installed and a
// meter provider registered, and one access-log line each at its end (`logging.access.enabled`),
// with how long it ran and what it carried. The request's own line says only how its head went.
import type { MeterProvider, Observable, ObservableCallback } from "@opentelemetry/api";
import { optionalApi, type OtelApi } from "../actuator/opentelemetry.ts";
import type { FeatureHost } from "../app_feature.ts";
import type { Logger } from "../web/error_responder.ts";
import { VERSION } from "../version.ts";
import { type AccessLogEntry, accessLogLine, pathOf } from "./access_log.ts";

/** What stays open: an event stream or a WebSocket. */
export type StreamKind = "sse" | "websocket";

/** What a stream or socket carried, once it ended. */
export interface StreamCarried {
  /** Events (a stream) or messages (a socket) sent, and their bytes. */
  readonly sent: { readonly messages: number; readonly bytes: number };
  /** Messages received, and their bytes (a socket). */
  readonly received?: { readonly messages: number; readonly bytes: number };
}

/** One open stream or socket: `end` once, when it ends. */
export interface OpenStream {
  end(carried: StreamCarried): void;
}

/** The access-log line of a stream or socket at its end. */
export interface StreamLogEntry extends AccessLogEntry {
  readonly stream: StreamKind;
  /** Events or messages sent. */
  readonly sent: number;
  /** Messages received (a socket). */
  readonly received?: number;
  /** Bytes received (a socket). */
  readonly bytes_received?: number;
}

/** The open streams and sockets of one app, by kind and route. */
export class OpenStreams {
  readonly #open = new Map<string, { kind: StreamKind; route: string; count: number }>();
  readonly #log: ((line: string) => void) | undefined;
  readonly #api: OtelApi | undefined;
  #provider: MeterProvider | undefined;
  #unregister: (() => void) | undefined;

  /**
   * `logger` takes a line per stream when `accessLog` is on; `api` reports the gauge, where
   * OpenTelemetry's API is installed.
   */
  constructor(logger: Logger, accessLog: boolean, api: OtelApi | undefined) {
    this.#log = accessLog ? (logger.info ?? logger.error).bind(logger) : undefined;
    this.#api = api;
  }

  /** A stream of `kind` opened on `route` (its template) for `request`, answered with `status`. */
  opened(kind: StreamKind, route: string, request: Request, status: number): OpenStream {
    this.#follow();
    const key = `${kind} ${route}`;
    const entry = this.#open.get(key) ?? { kind, route, count: 0 };
    entry.count++;
    this.#open.set(key, entry);
    const time = new Date().toISOString();
    const start = performance.now();
    let ended = false;
    return {
      end: (carried) => {
        if (ended) return;
        ended = true;
        // Kept at 0: the gauge reads 0 for a route whose streams all ended, rather than nothing.
        entry.count--;
        if (this.#log === undefined) return;
        const line: StreamLogEntry = {
          time,
          method: "GET",
          route,
          path: pathOf(request.url),
          status,
          duration_ms: Math.round((performance.now() - start) * 1000) / 1000,
          bytes: carried.sent.bytes,
          stream: kind,
          sent: carried.sent.messages,
          ...(carried.received === undefined ? {} : {
            received: carried.received.messages,
            bytes_received: carried.received.bytes,
          }),
        };
        try {
          this.#log(accessLogLine(line));
        } catch {
          // A logger that throws does not fail the stream it logs.
        }
      },
    };
  }

  /** How many are open now, by kind and route. */
  counts(): { readonly kind: StreamKind; readonly route: string; readonly count: number }[] {
    return [...this.#open.values()].map(({ kind, route, count }) => ({ kind, route, count }));
  }

  /** Reports no more (the app closed). */
  close(): void {
    this.#unregister?.();
    this.#unregister = undefined;
  }

  // The gauge, on the meter provider registered now: one registered after bootstrap is followed.
  #follow(): void {
    const api = this.#api;
    if (api === undefined) return;
    const provider = api.metrics.getMeterProvider();
    if (provider === this.#provider) return;
    this.#unregister?.();
    this.#provider = provider;
    const meter = provider.getMeter("thaw", VERSION);
    const gauge: Observable = meter.createObservableUpDownCounter("thaw.server.open_streams", {
      unit: "{stream}",
      description: "Event streams and WebSockets open now, by route.",
    });
    const read: ObservableCallback = (result) => {
      for (const { kind, route, count } of this.#open.values()) {
        result.observe(count, { "http.route": route, "thaw.stream.kind": kind });
      }
    };
    gauge.addCallback(read);
    this.#unregister = () => gauge.removeCallback(read);
  }
}

const BY_APP = /* @__PURE__ */ new WeakMap<object, Promise<OpenStreams>>();

/**
 * The open streams of the app `host` belongs to: one for its event streams and its sockets alike,
 * made by the first feature that asks.
 */
export function openStreamsOf(host: FeatureHost): Promise<OpenStreams> {
  let streams = BY_APP.get(host.context);
  if (streams === undefined) {
    streams = optionalApi().then((api) =>
      new OpenStreams(host.logger, host.settings.get("logging.access.enabled"), api)
    );
    BY_APP.set(host.context, streams);
  }
  return streams;
}
