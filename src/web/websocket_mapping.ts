// `@WebSocketMapping`: a GET route whose method returns a socket's handlers, upgraded through
// Hono's adapter for the runtime. As `@SseMapping` does, the decorator brings all it needs (the
// upgrade, the origin check, the feature that bounds messages and closes sockets on shutdown): the
// route compiler knows none of it, and an app without the decorator carries none of it.
import type { Context } from "hono";
import type { WSEvents } from "hono/ws";
import type { FeatureFactory } from "../app_feature.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpStatus } from "../http/http_status.ts";
import { runtimeUpgrade, type Upgrade } from "../runtime/websocket_upgrade.ts";
import { type OpenStream, type OpenStreams, openStreamsOf } from "../observe/open_streams.ts";
import { sync, withResolver } from "./argument_resolver.ts";
import type { ParameterBinder } from "./binder.ts";
import type { Logger } from "./error_responder.ts";
import type { HandlerArguments, PathCheck, SignatureCheck } from "./handler_signature.ts";
import { ownRouteDecorator } from "./declared_route.ts";
import { hostUrl, originAllowed } from "./websocket_origin.ts";
import { webSocketSettings } from "./websocket_settings.ts";
import { CLOSE, type Session, sessionEvents, type SessionHost } from "./websocket_session.ts";

/** A socket's handlers, as a `@WebSocketMapping` method returns them: Hono's `WSEvents`. */
export type WebSocketHandlers = WSEvents;

/**
 * The decorator `@WebSocketMapping(path, ...binders)` returns: it compiles only on a method that
 * returns the socket's handlers (or a promise of them) and takes the arguments its binders give.
 */
export type WebSocketMappingFor<P extends string, B extends readonly ParameterBinder[]> = <
  This,
  // deno-lint-ignore no-explicit-any
  M extends (this: This, ...args: any) => WebSocketHandlers | Promise<WebSocketHandlers>,
>(
  value: M & SignatureCheck<Parameters<M>, HandlerArguments<B>> & PathCheck<P, B>,
  context: ClassMethodDecoratorContext<This, M>,
) => void;

/** What the sockets of one app share: its settings, its logger, its upgrade, those open. */
interface SocketHost {
  readonly maxMessageSize: number;
  readonly maxBuffered: number;
  readonly allowedOrigins: readonly string[];
  readonly logger: Logger;
  readonly upgrade: Upgrade;
  /** What an operator sees of them: the gauge by route, a log line at each one's end. */
  readonly streams: OpenStreams;
  readonly open: Set<Session>;
  /** The app shuts down: a socket that opens now is closed at once. */
  ending: boolean;
}

const HOSTS = /* @__PURE__ */ new WeakMap<object, SocketHost>();

// The request's Hono context, as the last argument of the route's method: the adapters read it.
const CONTEXT = /* @__PURE__ */ withResolver(
  { kind: "context" } as const,
  () => sync((c) => c),
) as unknown as ParameterBinder;

/**
 * Maps a method to `GET path` as a WebSocket endpoint. The method returns the socket's handlers,
 * Hono's shape: `{ onOpen?, onMessage?, onClose?, onError? }`, each given the event and the
 * socket (`send`, `close`, `readyState`). It runs once per upgrade, after the middleware and
 * guards of its controller and method: a refusal there is an HTTP answer, and no socket opens.
 * A browser's upgrade (one with an `Origin`) from another host is refused with 403 unless
 * `server.websocket.allowed-origins` lists its origin. A message over
 * `server.websocket.max-message-size` (1 MiB by default) closes the socket with 1009; more than
 * `server.websocket.max-buffered` (16 MiB) waiting to be sent to a client that does not read
 * closes it with 1008, logged; a handler that throws is logged and closes it with 1011; a
 * shutdown closes every socket with 1001.
 * Served by `listen(app)` on Deno, Bun and Node (where the `ws` package must be installed), and
 * by workerd, each through Hono's adapter for it.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/streaming.md.
 *
 * @param path the route: literal segments and `{name}` variables (`{name:regex}` constrains one)
 * @param binders what the method's parameters are bound to, in order
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/streaming.md#websockets
 */
export function WebSocketMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): WebSocketMappingFor<P, B> {
  if (typeof path !== "string") {
    throw new TypeError(`@WebSocketMapping: the path must be a string, got ${typeof path}`);
  }
  const withContext = Object.freeze([...binders, CONTEXT]);
  return ownRouteDecorator({
    decorator: "@WebSocketMapping",
    path,
    binders,
    resolved: withContext,
    produces: "websocket",
    feature: socketFeature,
    labelled: "WebSocket",
    make: upgraded,
  }) as WebSocketMappingFor<P, B>;
}

const HANDLER_KEYS = ["onOpen", "onMessage", "onClose", "onError"] as const;

// The route's method as the handler calls it: the upgrade checked, the bean's method called for
// the handlers, and the socket opened through the runtime's adapter.
function upgraded(
  bean: object,
  method: (...args: unknown[]) => unknown,
  label: string,
  route: string,
): (...args: unknown[]) => Promise<Response> {
  // Made at the first upgrade, once the app's feature has set the bean's host.
  let sessions: SessionHost | undefined;
  return async (...args) => {
    const c = args.pop() as Context;
    const host = HOSTS.get(bean);
    if (host === undefined) {
      throw new Error(`${label}: a WebSocket is served by an app that bootstrap() made`);
    }
    const request = c.req.raw;
    const refusal = handshakeRefusal(request);
    if (refusal !== undefined) throw new HttpException(HttpStatus.BAD_REQUEST, refusal);
    if (!originAllowed(originOf(c), hostUrl(request), host.allowedOrigins)) {
      throw new HttpException(HttpStatus.FORBIDDEN, "This origin may not open a WebSocket here");
    }
    const handlers = handlersOf(await method.apply(bean, args), label);
    sessions ??= routeSessions(host, label, route);
    const events = sessionEvents(handlers, sessions, request.url);
    const answer = await host.upgrade(c, events);
    if (answer === undefined) {
      throw new Error(
        `${label}: the runtime did not upgrade the request (on Bun and Node a WebSocket is served ` +
          "by listen(app))",
      );
    }
    // Bun's and Node's adapters answer a 200 once their server took the upgrade (no Response is
    // made with a 1xx status), which neither server sends: the access log and the request metrics
    // read the 101 that went, as on Deno and workerd.
    if (answer.status !== 101) Object.defineProperty(answer, "status", { value: 101 });
    return answer;
  };
}

// What the sockets of one route report to: made once, so that a socket carries no closures of its
// own (a server holds thousands), and none that hold the upgrade's request and context.
function routeSessions(host: SocketHost, label: string, route: string): SessionHost {
  const streams = new WeakMap<Session, OpenStream>();
  return {
    maxMessageSize: host.maxMessageSize,
    maxBuffered: host.maxBuffered,
    failed: (event, error) =>
      log(host.logger, `${label}: ${event} failed, closed with 1011:`, error),
    overflowed: (buffered) =>
      log(
        host.logger,
        `${label}: ${buffered} bytes wait to be sent to a client that does not read them, ` +
          `over server.websocket.max-buffered (${host.maxBuffered}): closed with 1008`,
      ),
    opened: (session) => {
      host.open.add(session);
      streams.set(session, host.streams.opened("websocket", route, session.url, 101));
      if (host.ending) session.end(CLOSE.goingAway, "Server shutting down");
    },
    closed: (session) => {
      host.open.delete(session);
      streams.get(session)?.end(session);
    },
  };
}

// The upgrade's `Origin`, empty or not: Node's adapter leaves empty headers out of the request it
// makes of an upgrade (an empty `Origin` would read as none, a client that is no browser), so
// there the raw request it passes as `incoming` is asked.
function originOf(c: Context): string | null {
  const origin = c.req.raw.headers.get("origin");
  if (origin !== null) return origin;
  const env = c.env as { incoming?: { headers?: Record<string, unknown> } } | undefined;
  const raw = typeof env === "object" && env !== null ? env.incoming?.headers?.origin : undefined;
  return typeof raw === "string" ? raw : null;
}

// What RFC 6455 (4.2.1) asks of an opening handshake, checked before the method runs, so that a
// runtime never fails on one it cannot take (Deno and Bun would throw: a 500).
function handshakeRefusal(request: Request): string | undefined {
  const headers = request.headers;
  if (request.method !== "GET" || headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return 'This is a WebSocket endpoint: a request to it is a GET asking for "Upgrade: websocket"';
  }
  // Without it Node's server takes the request for a plain one and Deno's upgrade throws: a 500.
  if (!/(^|,)\s*upgrade\s*(,|$)/i.test(headers.get("connection") ?? "")) {
    return 'A WebSocket upgrade needs "Connection: Upgrade"';
  }
  if (!/^[A-Za-z0-9+/]{22}==$/.test(headers.get("sec-websocket-key") ?? "")) {
    return "A WebSocket upgrade needs a Sec-WebSocket-Key of 16 bytes in base64";
  }
  if (headers.get("sec-websocket-version") !== "13") {
    return "This server speaks WebSocket version 13 (Sec-WebSocket-Version: 13)";
  }
  return undefined;
}

function handlersOf(value: unknown, label: string): WSEvents {
  if (typeof value !== "object" || value === null) {
    throw new TypeError(
      `${label} returned ${value === null ? "null" : typeof value}, not the socket's handlers ` +
        "({ onOpen?, onMessage?, onClose?, onError? })",
    );
  }
  for (const key of HANDLER_KEYS) {
    const handler = (value as Record<string, unknown>)[key];
    if (handler !== undefined && typeof handler !== "function") {
      throw new TypeError(
        `${label} returned handlers whose ${key} is ${typeof handler}, not a function`,
      );
    }
  }
  return value as WSEvents;
}

function log(logger: Logger, message: string, ...error: unknown[]): void {
  try {
    logger.error(`[thaw] ${message}`, ...error);
  } catch {
    // A logger that throws must not turn one failure into two.
  }
}

// Once per app: the settings of its sockets, the runtime's upgrade, and their close with 1001
// when it shuts down (once the shutdown delay is over, when the server stops accepting); those
// still open when server.shutdown-timeout is over are ended without the closing handshake.
const socketFeature: FeatureFactory = (host) => {
  const settings = host.settings;
  // Handed over by the server `listen` makes for this app, on Bun and Node.
  let serverUpgrade: Upgrade | undefined;
  const sockets: SocketHost = {
    ...webSocketSettings(settings),
    logger: host.logger,
    upgrade: runtimeUpgrade(() => serverUpgrade),
    streams: openStreamsOf(host),
    open: new Set(),
    ending: false,
  };
  for (const bean of host.context.beans()) {
    if (typeof bean.instance === "object" && bean.instance !== null) {
      HOSTS.set(bean.instance, sockets);
    }
  }
  const closeAll = () => {
    sockets.ending = true;
    for (const session of [...sockets.open]) session.end(CLOSE.goingAway, "Server shutting down");
  };
  const terminateAll = () => {
    for (const session of [...sockets.open]) session.terminate();
  };
  const timers: ReturnType<typeof setTimeout>[] = [];
  return {
    internals: {
      websocket: {
        maxMessageSize: sockets.maxMessageSize,
        maxBuffered: sockets.maxBuffered,
        useUpgrade: (upgrade) => void (serverUpgrade = upgrade),
      },
    },
    stopAccepting: () => {
      const delayMs = settings.get("server.shutdown-delay") * 1000;
      if (delayMs === 0) closeAll();
      else timers.push(setTimeout(closeAll, delayMs));
      timers.push(setTimeout(terminateAll, delayMs + host.shutdownTimeoutMs));
    },
    close: {
      announce: () => {
        for (const timer of timers) clearTimeout(timer);
        closeAll();
        terminateAll();
        return Promise.resolve(undefined);
      },
    },
  };
};
