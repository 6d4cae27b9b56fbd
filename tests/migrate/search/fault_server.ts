import { forward, serveLoopback } from "./loopback_server.ts";

/**
 * What OpenSearch answers to a search of an index whose primary shard is not started yet (captured
 * from the test node): the 503 a fault server gives to play a records index being created.
 */
export const SHARDS_NOT_STARTED = {
  error: {
    root_cause: [],
    type: "search_phase_execution_exception",
    reason: "all shards failed",
    phase: "query",
    grouped: true,
    failed_shards: [],
  },
  status: 503,
} as const;

/** One request as a fault server received it. */
export interface Received {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  /** 1 for the first request the server received. */
  readonly n: number;
  /** 1 for the first connection the server accepted: which kept-alive connection carried it. */
  readonly connection: number;
}

/**
 * What a fault server does with one request:
 * - `forward`: passes it to the upstream node and returns the answer;
 * - `swallow`: passes it to the upstream node (so the cluster applies it) and never answers;
 * - `cut`: passes it to the upstream node, then sends half of the answer and closes the connection;
 * - `{ resetAfter }`: passes it to the upstream node, then closes the connection without an answer
 *   once `resetAfter` settles (an answer lost late);
 * - `hang`: never forwards it and never answers;
 * - `reset`: closes the connection without an answer, the request not forwarded;
 * - `{ status, body }`: answers that (`text`: a body sent as it is), the request not forwarded,
 *   unless `forwarded`: then it is sent on to the node too, whose answer nobody waits for (a
 *   balancer that gave up on a node);
 * - `{ after }`: forwards it once `after` settles (a slow host the test controls), unless the
 *   client closed the connection meanwhile;
 * - `{ forwardAs }`: forwards it under another path and query (a copy throttled to stay running);
 * - `{ answerAfter }`: forwards it (so the cluster applies it), and answers once `answerAfter`
 *   settles (an answer that comes late).
 */
export type Fault =
  | "forward"
  | "swallow"
  | "cut"
  | "hang"
  | "reset"
  | {
    readonly status: number;
    readonly body?: unknown;
    readonly text?: string;
    readonly forwarded?: boolean;
  }
  | { readonly resetAfter: Promise<unknown> }
  | { readonly after: Promise<unknown> }
  | { readonly forwardAs: string }
  | { readonly answerAfter: Promise<unknown> };

/** A loopback host in front of a real node that misbehaves as its rule says. */
export interface FaultServer {
  readonly url: string;
  /** Every request received, in order. */
  readonly received: readonly Received[];
  /** Resolves once a request matching `test` arrives (at once when one already did). */
  waitFor(test: (r: Received) => boolean): Promise<Received>;
  /** Resolves once the upstream node answered a forwarded request matching `test`. */
  waitForUpstream(test: (r: Received) => boolean): Promise<Received>;
  close(): Promise<void>;
}

/**
 * Starts a fault server on 127.0.0.1 in front of `upstream` (the real OpenSearch node). The same
 * server serves the fault tests of every runtime: it uses only `node:http` and `fetch`.
 */
export async function startFaultServer(
  upstream: string,
  rule: (request: Received) => Fault,
): Promise<FaultServer> {
  const received = new Watched();
  const forwarded = new Watched();
  const connections = new WeakMap<object, number>();
  const server = await serveLoopback(async (req, res, body) => {
    if (!connections.has(req.socket)) {
      connections.set(req.socket, received.connections += 1);
    }
    const request = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      n: received.all.length + 1,
      connection: connections.get(req.socket)!,
    };
    received.add(request);
    const fault = rule(request);
    if (fault === "hang") return;
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }
    if (typeof fault === "object" && "status" in fault) {
      if (fault.forwarded) {
        forward(upstream, req, body, { "content-type": "application/json" }).catch(() => {});
      }
      const text = fault.text ?? (fault.body === undefined ? "" : JSON.stringify(fault.body));
      res.writeHead(fault.status, { "content-type": "application/json" }).end(text);
      return;
    }
    if (typeof fault === "object" && "after" in fault) {
      await fault.after;
      // The client gave up meanwhile: a host that had not sent it yet drops it.
      if (req.socket.destroyed) return;
    }
    const headers: Record<string, string> = {};
    for (const name of ["content-type", "authorization"]) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const path = typeof fault === "object" && "forwardAs" in fault ? fault.forwardAs : undefined;
    const answer = await forward(upstream, req, body, headers, path);
    forwarded.add(request);
    if (fault === "swallow") return;
    if (typeof fault === "object" && "answerAfter" in fault) await fault.answerAfter;
    if (typeof fault === "object" && "resetAfter" in fault) {
      await fault.resetAfter;
      req.socket.destroy();
      return;
    }
    if (fault === "cut") {
      const bytes = new TextEncoder().encode(answer.text);
      res.writeHead(answer.status, {
        "content-type": "application/json",
        "content-length": String(bytes.length),
      });
      res.write(bytes.subarray(0, bytes.length >> 1), () => req.socket.destroy());
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.text);
  });
  return {
    url: server.url,
    received: received.all,
    waitFor: (test) => received.waitFor(test),
    waitForUpstream: (test) => forwarded.waitFor(test),
    close: () => server.close(),
  };
}

// Requests seen so far, and who waits for one.
class Watched {
  readonly all: Received[] = [];
  connections = 0;
  readonly #waiters = new Set<{ test: (r: Received) => boolean; resolve(r: Received): void }>();

  add(request: Received): void {
    this.all.push(request);
    for (const w of this.#waiters) {
      if (!w.test(request)) continue;
      this.#waiters.delete(w);
      w.resolve(request);
    }
  }

  waitFor(test: (r: Received) => boolean): Promise<Received> {
    const seen = this.all.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.add({ test, resolve }));
  }
}
