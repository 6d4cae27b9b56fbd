// Graceful shutdown: what `listen(app)` does between the last request it takes and the process's
// end, the same on Deno, Bun and Node. The runtime's own server does the draining (each one stops
// accepting, lets answers being written finish and closes idle keep-alive connections); this file
// bounds it in time, names what the bound cut, and turns a signal into that sequence.

type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

/** Where the server reports what shutdown cut and what failed, and the line it starts with. */
export interface ShutdownLogger {
  error(message: string, ...details: unknown[]): void;
  info?(message: string, ...details: unknown[]): void;
}

/** The signals a process manager sends to stop a service (Kubernetes, systemd, Docker: TERM). */
export type ShutdownSignal = "SIGTERM" | "SIGINT";
const SIGNALS: readonly ShutdownSignal[] = ["SIGTERM", "SIGINT"];

/** What a server does while a handler's promise is pending: from `started` to `settled`. */
export interface Waiting {
  started(request: Request, env: unknown): void;
  settled(request: Request, env: unknown): void;
}

/**
 * The requests whose handler has not answered yet, so that a shutdown cut short can say which they
 * were, and whether the server is draining, so that an answer on a kept-alive connection tells the
 * client to close it. Synchronous answers are never tracked: they are done when the call returns.
 */
export class InFlight {
  readonly #running = new Set<Request>();
  #draining = false;

  /**
   * `fetch`, counted; `finish` sees each answer on its way out (the server's own last word), and
   * `waiting`, where given, each request whose answer is a promise, with what to run once it
   * settles (a server's timer held while the handler runs).
   */
  track(
    fetch: FetchHandler,
    finish: (request: Request, response: Response) => Response = (_request, response) => response,
    waiting?: Waiting,
  ): FetchHandler {
    const done = (request: Request, response: Response): Response => {
      const answer = finish(request, response);
      return this.#draining ? closing(answer) : answer;
    };
    const settle = (request: Request, env: unknown, response: Response): Response => {
      this.#running.delete(request);
      waiting?.settled(request, env);
      return done(request, response);
    };
    return (request, env) => {
      const answer = fetch(request, env);
      if (!(answer instanceof Promise)) return done(request, answer);
      this.#running.add(request);
      waiting?.started(request, env);
      return answer.then(
        (response) => settle(request, env, response),
        (error) => {
          this.#running.delete(request);
          waiting?.settled(request, env);
          throw error;
        },
      );
    };
  }

  /** From now on every answer says `Connection: close`. */
  drain(): void {
    this.#draining = true;
  }

  /** `GET /slow`, for each request still running: a client's path, clipped, control bytes escaped. */
  running(): string[] {
    return [...this.#running].map((request) => `${request.method} ${printablePath(request.url)}`);
  }
}

function printablePath(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  const clipped = path.length > 100 ? `${path.slice(0, 100)}...` : path;
  return clipped.replace(
    /[^\x21-\x7e]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

/** A copy of `response` that asks the client to close the connection after it. */
export function closing(response: Response): Response {
  // A WebSocket upgrade's answer: the connection is the socket's now, and no Response is made
  // with a 1xx status.
  if (response.status === 101) return response;
  const headers = new Headers(response.headers);
  headers.set("connection", "close");
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** How one runtime's server stops. */
export interface ServerStop {
  /** Stops accepting and resolves once the connections are done (idle ones closed). */
  readonly graceful: () => Promise<void>;
  /** Closes every connection now; absent where the runtime cannot (Deno: only the process's end). */
  readonly cut?: () => void;
}

const LOGGED_REQUESTS = 20;

/** What {@linkcode gracefulClose} does around the server's own stop. */
export interface ShutdownOptions {
  /** How long requests in flight may take, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * How long the server keeps accepting and serving once readiness is DOWN, in milliseconds,
   * before it stops: the time a load balancer takes to stop sending (Kubernetes' preStop sleep).
   */
  readonly delayMs?: number | undefined;
  readonly inFlight: InFlight;
  readonly logger: ShutdownLogger;
  /** Runs first: readiness turns DOWN. */
  readonly starting?: (() => void) | undefined;
  /** Runs once the server is stopped: the app's `close()` (its `@PreDestroy` hooks). */
  readonly closed?: (() => Promise<void>) | undefined;
}

/**
 * Stops a server gracefully: readiness DOWN, then, after the delay, no new connections, requests
 * in flight finish within the timeout (those still running then are cut, and named in one log
 * line), then `closed` runs. Resolves to whether everything ended cleanly (nothing cut, `closed`
 * did not fail).
 */
export async function gracefulClose(stop: ServerStop, options: ShutdownOptions): Promise<boolean> {
  const { timeoutMs, inFlight, logger } = options;
  options.starting?.();
  // From the delay's start: a client kept on a connection of this instance (a proxy's pool, a
  // service's client) reconnects, and the balancer, which no longer picks it, sends it elsewhere.
  inFlight.drain();
  const delayMs = options.delayMs ?? 0;
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const outcome = await Promise.race([stop.graceful().then(() => "stopped" as const), timedOut]);
  clearTimeout(timer);
  let clean = outcome === "stopped";
  if (!clean) {
    const running = inFlight.running();
    // One line whatever the load: the first ones, and how many more.
    const named = running.slice(0, LOGGED_REQUESTS).join(", ") +
      (running.length > LOGGED_REQUESTS ? ` and ${running.length - LOGGED_REQUESTS} more` : "");
    logger.error(
      `Shutdown: requests still running after ${timeoutMs} ms were cut` +
        (running.length > 0 ? `: ${named}` : " (answers still being sent)"),
    );
    stop.cut?.();
  }
  try {
    await options.closed?.();
  } catch (error) {
    clean = false;
    logger.error("Shutdown: closing the application failed", error);
  }
  return clean;
}

interface SignalHost {
  on(signal: ShutdownSignal, listener: () => void): void;
  off(signal: ShutdownSignal, listener: () => void): void;
  exit(code: number): never;
}

function signalHost(): SignalHost | undefined {
  const g = globalThis as {
    Deno?: {
      addSignalListener(signal: string, listener: () => void): void;
      removeSignalListener(signal: string, listener: () => void): void;
      exit(code: number): never;
    };
    process?: {
      on(signal: string, listener: () => void): void;
      off(signal: string, listener: () => void): void;
      exit(code: number): never;
    };
  };
  if (g.Deno !== undefined) {
    const deno = g.Deno;
    return {
      on: (s, l) => deno.addSignalListener(s, l),
      off: (s, l) => deno.removeSignalListener(s, l),
      exit: (code) => deno.exit(code),
    };
  }
  const process = g.process;
  if (process === undefined || typeof process.on !== "function") return undefined;
  return {
    on: (s, l) => process.on(s, l),
    off: (s, l) => process.off(s, l),
    exit: (code) => process.exit(code),
  };
}

// One listener per signal for the whole process, however many servers it runs: the shutdowns of
// every server still open run together, and Node warns past ten listeners of one event.
const shutdowns = new Set<() => Promise<boolean>>();
// Module-level as the signals are the process's: set while any server listens to them.
let listening: { host: SignalHost; signals: ShutdownSignal[]; listener: () => void } | undefined;

/**
 * On the first SIGTERM or SIGINT, runs `shutdown` (with those of the other servers still
 * registered) and ends the process with 0 when each reports a clean end, else 1; a second signal
 * ends it at once with 1. Returns what takes `shutdown` off again (a server closed by code).
 * Where the runtime has no signals (workerd), does nothing.
 */
export function exitOnSignals(shutdown: () => Promise<boolean>): () => void {
  const host = signalHost();
  if (host === undefined) return () => {};
  shutdowns.add(shutdown);
  if (listening === undefined) {
    let started = false;
    const listener = () => {
      if (started) host.exit(1);
      started = true;
      Promise.all([...shutdowns].map((s) => s())).then(
        (clean) => host.exit(clean.every(Boolean) ? 0 : 1),
        () => host.exit(1),
      );
    };
    const signals: ShutdownSignal[] = [];
    for (const signal of SIGNALS) {
      try {
        host.on(signal, listener);
        signals.push(signal);
      } catch {
        // Deno on Windows knows no SIGTERM: the others still stop the server.
      }
    }
    listening = { host, signals, listener };
  }
  return () => {
    shutdowns.delete(shutdown);
    if (shutdowns.size > 0 || listening === undefined) return;
    for (const signal of listening.signals) listening.host.off(signal, listening.listener);
    listening = undefined;
  };
}
