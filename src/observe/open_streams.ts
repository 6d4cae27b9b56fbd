// The answers that stay open (`@SseMapping` streams, `@WebSocketMapping` sockets) as an operator
// sees them: how many are open by route (which the actuator reports as a gauge, through the
// OpenTelemetry it has), and one access-log line each at its end (`logging.access.enabled`), with
// how long it ran and what it carried. The request's own line says only how its head went.
import type { FeatureHost } from "../app_feature.ts";
import type { Logger } from "../web/error_responder.ts";
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
  readonly #watchers = new Set<() => void>();

  /** `logger` takes a line per stream when `accessLog` is on. */
  constructor(logger: Logger, accessLog: boolean) {
    this.#log = accessLog ? (logger.info ?? logger.error).bind(logger) : undefined;
  }

  /**
   * A stream of `kind` opened on `route` (its template) for a request to `url`, answered with
   * `status`. Only the path is kept, not the request: a socket may stay open for days.
   */
  opened(kind: StreamKind, route: string, url: string, status: number): OpenStream {
    for (const watcher of this.#watchers) watcher();
    const key = `${kind} ${route}`;
    let entry = this.#open.get(key);
    if (entry === undefined) this.#open.set(key, entry = { kind, route, count: 0 });
    entry.count++;
    const counted = entry;
    const time = new Date().toISOString();
    const start = performance.now();
    const path = this.#log === undefined ? "" : pathOf(url);
    let ended = false;
    return {
      end: (carried) => {
        if (ended) return;
        ended = true;
        // Kept at 0: the gauge reads 0 for a route whose streams all ended, rather than nothing.
        counted.count--;
        if (this.#log === undefined) return;
        const line: StreamLogEntry = {
          time,
          method: "GET",
          route,
          path,
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

  /** How many are open now, by kind and route (0 for those that were and ended). */
  counts(): { readonly kind: StreamKind; readonly route: string; readonly count: number }[] {
    return [...this.#open.values()].map(({ kind, route, count }) => ({ kind, route, count }));
  }

  /**
   * Runs `watcher` as each stream opens, until the returned function is called: the gauge checks
   * there that it reports to the meter provider registered now.
   */
  watch(watcher: () => void): () => void {
    this.#watchers.add(watcher);
    return () => void this.#watchers.delete(watcher);
  }
}

const BY_APP = /* @__PURE__ */ new WeakMap<object, OpenStreams>();

/**
 * The open streams of the app `host` belongs to: one for its event streams and its sockets alike,
 * and the actuator's gauge of them, made by the first feature that asks.
 */
export function openStreamsOf(host: FeatureHost): OpenStreams {
  let streams = BY_APP.get(host.context);
  if (streams === undefined) {
    streams = new OpenStreams(host.logger, host.settings.get("logging.access.enabled"));
    BY_APP.set(host.context, streams);
  }
  return streams;
}
