// The answers that stay open (`@SseMapping` streams, `@WebSocketMapping` sockets) as an operator
// sees them: how many are open by route (which the actuator reports as a gauge, through the
// OpenTelemetry it has), and one access-log line each at its end (`logging.access.enabled`), with
// how long it ran and what it carried, when the logging feature writes the access log.
import type { FeatureHost } from "../app_feature.ts";

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

/**
 * The access log's part, called as a stream opens (the request kept as its URL only): what it
 * returns writes the stream's line at its end.
 */
export type StreamLog = (
  kind: StreamKind,
  route: string,
  url: string,
  status: number,
) => (carried: StreamCarried) => void;

/** The open streams and sockets of one app, by kind and route. */
export class OpenStreams {
  readonly #open = new Map<string, { kind: StreamKind; route: string; count: number }>();
  readonly #log: StreamLog | undefined;
  readonly #watchers = new Set<() => void>();

  /** `log` writes a line per stream; none without it. */
  constructor(log?: StreamLog) {
    this.#log = log;
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
    const logEnd = this.#log?.(kind, route, url, status);
    let ended = false;
    return {
      end: (carried) => {
        if (ended) return;
        ended = true;
        // Kept at 0: the gauge reads 0 for a route whose streams all ended, rather than nothing.
        counted.count--;
        logEnd?.(carried);
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
const LOGS = /* @__PURE__ */ new WeakMap<object, StreamLog>();

/**
 * Gives the streams of the app whose container is `context` their access log: the logging
 * feature's, set up before the features that open streams are made.
 */
export function logStreams(context: object, log: StreamLog): void {
  LOGS.set(context, log);
}

/**
 * The open streams of the app `host` belongs to: one for its event streams and its sockets alike,
 * and the actuator's gauge of them, made by the first feature that asks.
 */
export function openStreamsOf(host: FeatureHost): OpenStreams {
  let streams = BY_APP.get(host.context);
  if (streams === undefined) {
    streams = new OpenStreams(LOGS.get(host.context));
    BY_APP.set(host.context, streams);
  }
  return streams;
}
