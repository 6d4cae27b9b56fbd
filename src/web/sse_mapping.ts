// `@SseMapping`: a GET route whose method yields events, answered as a `text/event-stream`. The
// decorator brings everything it needs itself (the stream, the framing, the feature that reads
// `server.sse.heartbeat` and ends the streams on shutdown): the route compiler knows none of it,
// and an app without the decorator carries none of it.
import { durationKey } from "../config/duration.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { FeatureFactory } from "../app_feature.ts";
import { HttpRequest } from "../http/http_request.ts";
import { onAbandon } from "../http/request_abandon.ts";
import { type Clock, systemClock, type Timer } from "../runtime/clock.ts";
import { markStreamed, streamEnded } from "../runtime/streamed_answers.ts";
import type { ParameterBinder } from "./binder.ts";
import type { Logger } from "./error_responder.ts";
import type { HandlerArguments, PathCheck, SignatureCheck } from "./handler_signature.ts";
import { answerWatchers } from "./answer_sent.ts";
import { ownRouteDecorator } from "./declared_route.ts";
import { STREAM_OPENED, type StreamOwner } from "./stream_opened.ts";
import { type OpenStream, type OpenStreams, openStreamsOf } from "../observe/open_streams.ts";
import {
  type EventStream,
  type EventStreamOptions,
  openEventStream,
  returned,
} from "./sse_stream.ts";

/**
 * The decorator `@SseMapping(path, ...binders)` returns: it compiles only on a method that
 * returns an `AsyncIterable` (an `async *` method) and takes the arguments its binders give.
 */
export type SseMappingFor<P extends string, B extends readonly ParameterBinder[]> = <
  This,
  // deno-lint-ignore no-explicit-any
  M extends (this: This, ...args: any) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>,
>(
  value: M & SignatureCheck<Parameters<M>, HandlerArguments<B>> & PathCheck<P, B>,
  context: ClassMethodDecoratorContext<This, M>,
) => void;

/** What the streams of one app share: its settings, its logger, and those still open. */
interface SseHost {
  readonly heartbeatMs: number;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly open: Set<EventStream>;
  /** What an operator sees of them (none for a controller used outside an app). */
  readonly streams?: OpenStreams;
  /** The app shuts down: a stream that opens now ends at once. */
  ending: boolean;
  /** The iterators' `return()` called and not settled yet: the app's close waits for them. */
  readonly returning: Set<Promise<void>>;
}

/** `server.sse.heartbeat` when the configuration leaves it out. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

const HOSTS = /* @__PURE__ */ new WeakMap<object, SseHost>();

// A controller used outside `bootstrap` (a test calling the route's method) has no feature.
const LONE: SseHost = {
  heartbeatMs: DEFAULT_HEARTBEAT_MS,
  logger: console,
  clock: systemClock,
  open: /* @__PURE__ */ new Set(),
  ending: false,
  returning: /* @__PURE__ */ new Set(),
};

/**
 * Maps a method to `GET path` as a stream of server-sent events (`text/event-stream`, not cached,
 * not buffered by proxies). The method returns an `AsyncIterable`, usually as an `async *`
 * method: each item it yields is one event. An item `{ data, event?, id?, retry? }` is that
 * event (`data` a string sent as it is, a multi-line one as several `data:` lines, anything else
 * as JSON); any other item is sent as JSON data. Binders, middleware, guards and exception
 * handlers apply as to any mapping: an error before the first event is answered as any error; one
 * after it ends the stream and is logged. A stream with no event to send is answered 204, which
 * stops a browser's `EventSource` from reconnecting. A comment goes out after each `server.sse.heartbeat`
 * of silence (15 s by default). The client leaving, the request timeout's 503, a middleware
 * answering in its place and a shutdown end the stream and call the iterator's `return()`, which
 * runs an async generator's `finally`.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/streaming.md.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order: `RequestHeader("Last-Event-ID",
 * { required: false })` gives the id a reconnecting client last saw
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/streaming.md#server-sent-events
 */
export function SseMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): SseMappingFor<P, B> {
  if (typeof path !== "string") {
    throw new TypeError(`@SseMapping: the path must be a string, got ${typeof path}`);
  }
  // The request comes last, out of the method's sight: the stream reads its signal.
  const withRequest = Object.freeze([...binders, HttpRequest]);
  return ownRouteDecorator({
    decorator: "@SseMapping",
    path,
    binders,
    resolved: withRequest,
    produces: "text/event-stream",
    feature: sseFeature,
    labelled: "GET",
    make: streamed,
  }) as SseMappingFor<P, B>;
}

const NOT_CACHED = { "cache-control": "no-cache" } as const;

const HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  // nginx (and the proxies that read it) would otherwise hold the events back in its buffer.
  "x-accel-buffering": "no",
} as const;

// The route's method as the handler calls it: the bean's method, its result turned into the
// answer once the stream has begun (a promise that rejects with an error before that).
function streamed(
  bean: object,
  method: (...args: unknown[]) => unknown,
  label: string,
  route: string,
): (...args: unknown[]) => Promise<Response> {
  return async (...args) => {
    const request = (args.pop() as HttpRequest).getRaw();
    const result = await method.apply(bean, args);
    const iterator = iteratorOf(result, label);
    const headers = { ...HEADERS };
    const host = HOSTS.get(bean) ?? LONE;
    if (request.method === "HEAD") return headOnly(iterator, host, label, headers);
    let unregister = () => {};
    let over = false;
    let stream: EventStream | undefined = undefined;
    let open: OpenStream | undefined;
    stream = openEventStream(
      iterator,
      streamOptions(host, label, request, () => {
        over = true;
        streamEnded(request);
        unregister();
        if (stream !== undefined) {
          host.open.delete(stream);
          open?.end({ sent: stream.sent });
        }
      }),
    );
    if (!over) {
      unregister = watched(host, request, stream);
      (result as Partial<StreamOwner>)[STREAM_OPENED]?.(label, stream.end);
      if (host.ending) stream.end();
    }
    const start = await stream.begun;
    // Nothing to send: a 200 with no event would have EventSource reconnect (after its retry
    // delay) for ever, where 204 tells it to stop. A stream a shutdown or the client ended before
    // its first event stays a 200, which the browser reconnects from, to the next instance.
    if (start === "done") return new Response(null, { status: 204, headers: NOT_CACHED });
    // Bun's idle timer would cut the stream in a silence longer than its own 10 s; an error
    // answered before the first event, or a stream already over, is not one.
    if (!over) {
      markStreamed(request);
      open = host.streams?.opened("sse", route, request.url, 200);
    }
    return new Response(stream.body, { headers });
  };
}

// The iterator of what the method returned, which must be an AsyncIterable.
function iteratorOf(result: unknown, label: string): AsyncIterator<unknown> {
  const iterate = (result as { [Symbol.asyncIterator]?: unknown } | null | undefined)?.[
    Symbol.asyncIterator
  ];
  if (typeof iterate !== "function") {
    throw new TypeError(
      `${label} returned ${result === null ? "null" : typeof result}, not an AsyncIterable: ` +
        "an @SseMapping method is an async * method, or returns an AsyncIterable",
    );
  }
  return iterate.call(result) as AsyncIterator<unknown>;
}

// Only the head goes: the events are never asked for, and the head does not wait on the
// iterator's return(), which a custom iterator may never settle.
function headOnly(
  iterator: AsyncIterator<unknown>,
  host: SseHost,
  label: string,
  headers: Record<string, string>,
): Response {
  returned(
    iterator,
    (error) =>
      log(host.logger, `${label}: the iterator's return() failed after a HEAD answer:`, error),
  );
  return new Response(null, { headers });
}

function streamOptions(
  host: SseHost,
  label: string,
  request: Request,
  ended: () => void,
): EventStreamOptions {
  return {
    heartbeatMs: host.heartbeatMs,
    clock: host.clock,
    // Deno's server also aborts the signal once an answer has gone, and warns whoever reads it
    // of that: there, a client that left before the first event is seen at the first write.
    signal: "Deno" in globalThis ? undefined : request.signal,
    failed: (error) =>
      log(host.logger, `${label}: the event stream failed after it began, and ended:`, error),
    returning: (done) => {
      host.returning.add(done);
      void done.then(() => host.returning.delete(done));
    },
    ended,
  };
}

// The stream open on the host, ended when the request is abandoned or its answer is not the
// stream; returns how to stop watching the request.
function watched(host: SseHost, request: Request, stream: EventStream): () => void {
  host.open.add(stream);
  // The request timeout answered 503: the stream is no one's.
  const unregister = onAbandon(request, stream.end);
  // Middleware answered in its place: no one will read it. A body piped on (compress()) is
  // locked; a runtime whose `Response` wraps the body it is given locks it too.
  const { body } = stream;
  answerWatchers.set(request, (sent) => {
    if (sent.body !== body && !body.locked) stream.end();
  });
  return unregister;
}

function log(logger: Logger, message: string, error: unknown): void {
  try {
    logger.error(`[thaw] ${message}`, error);
  } catch {
    // A logger that throws must not turn one failure into two.
  }
}

// Once per app: the settings of its streams, and their end when it shuts down (once the
// shutdown delay is over, when the server stops accepting), well within server.shutdown-timeout.
const sseFeature: FeatureFactory = (host) => {
  const sse: SseHost = {
    heartbeatMs: heartbeatOf(host.settings),
    logger: host.logger,
    clock: systemClock,
    open: new Set(),
    streams: openStreamsOf(host),
    ending: false,
    returning: new Set(),
  };
  for (const bean of host.context.beans()) {
    if (typeof bean.instance === "object" && bean.instance !== null) {
      HOSTS.set(bean.instance, sse);
    }
  }
  const endAll = () => {
    sse.ending = true;
    for (const stream of [...sse.open]) stream.end();
  };
  let timer: Timer | undefined;
  return {
    stopAccepting: () => {
      const delayMs = host.settings.get("server.shutdown-delay") * 1000;
      if (delayMs === 0) endAll();
      else timer ??= sse.clock.after(delayMs, endAll);
    },
    close: {
      // The generators' `finally` (an unsubscribe, a nack, a lock let go) runs before the app's
      // beans stop and the process ends: waited for within server.shutdown-timeout.
      announce: async () => {
        timer?.cancel();
        endAll();
        return await returnsWithin(sse.returning, host.shutdownTimeoutMs);
      },
    },
  };
};

// Waits for the iterators' `return()` still running, at most `timeoutMs`: a generator waiting
// on something that never comes holds its `return()` for good. Those still running then are the
// error the app's close reports.
async function returnsWithin(
  returning: ReadonlySet<Promise<void>>,
  timeoutMs: number,
): Promise<Error | undefined> {
  if (returning.size === 0) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
  await Promise.race([Promise.all(returning), timedOut]);
  clearTimeout(timer);
  if (returning.size === 0) return undefined;
  return new Error(
    `the return() of ${returning.size} event stream iterator(s) did not finish within ` +
      `${timeoutMs} ms (server.shutdown-timeout): their finally blocks were cut short`,
  );
}

/** `server.sse.heartbeat` in milliseconds: a duration as Spring Boot reads it; 0 for none. */
export function heartbeatOf(settings: ThawSettings): number {
  const value = settings.get("server.sse.heartbeat");
  if (value === undefined || value === null) return DEFAULT_HEARTBEAT_MS;
  return durationKey(value, settings.where("server.sse.heartbeat"));
}
