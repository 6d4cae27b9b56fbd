// When the app waits on a request body's bytes, and when it stops waiting. A server whose timer
// must tell a slow handler from a silent client (Bun's idle timer: held while a handler works, so
// that a slow one is answered, but running while the handler waits on a client that may have gone
// silent mid-body) watches a request here; what reads a body (read_body.ts, multipart_reader.ts)
// says here when it waits. A body the app never reads is no wait of the app's: the server reads it
// after the answer, under its own bounds.

/** What a server does while the app waits on a request's body. */
export interface BodyArrival {
  /** The app waits on the body's bytes: a client silent now holds it. */
  waiting(request: Request): void;
  /** The wait ended: the body is in, or was given up (cut short, over a limit, abandoned). */
  ended(request: Request): void;
}

const watched = /* @__PURE__ */ new WeakMap<Request, BodyArrival>();
// Kept apart from `watched`: a read may start before the server watches the request (the app's
// code up to its first `await` runs inside the server's call to it).
const waiting = /* @__PURE__ */ new WeakSet<Request>();
// Until a server says it will watch requests, no read pays for any of this (Deno and Node never
// do). Said before the first request, not at the first watch: the first reads come before it.
// Module-level as the readers are, which know a request but not its server.
let watching = false;

/** Says that a server in this process will watch requests: reads are noted from now on. */
export function watchBodyArrivals(): void {
  watching = true;
}

/**
 * Watches `request` until {@linkcode unwatchBodyArrival}; says whether the app waits on its body
 * already.
 */
export function watchBodyArrival(request: Request, arrival: BodyArrival): boolean {
  watched.set(request, arrival);
  return waiting.has(request);
}

/** Stops watching `request`: its answer is made, and a wait that ends later is no one's concern. */
export function unwatchBodyArrival(request: Request): void {
  watched.delete(request);
}

/** `read`, a read of `request`'s body from the client, told to whoever watches the request. */
export function bodyArrival<T>(request: Request, read: Promise<T>): Promise<T> {
  if (!watching) return read;
  waiting.add(request);
  watched.get(request)?.waiting(request);
  return read.finally(() => {
    waiting.delete(request);
    watched.get(request)?.ended(request);
  });
}
