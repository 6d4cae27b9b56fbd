import assert from "node:assert/strict";
import type { Application, Logger } from "../mod.ts";
import { listen } from "../server.ts";

/** Options of {@linkcode call}. */
export interface CallOptions {
  // Tests pass what a case table holds, often undefined: as good as left out.
  json?: unknown;
  body?: BodyInit | undefined;
  headers?: Record<string, string> | undefined;
}

/** Sends a request through `app.fetch`, as a server would. */
export function call(
  app: Application,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  const headers = new Headers(options.headers);
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return Promise.resolve(
    app.fetch(new Request(`http://localhost${path}`, { method, headers, body: body ?? null })),
  );
}

/** A logger that keeps what it is told, so tests can check it and keep the output clean. */
export function memoryLogger(): Logger & { lines: unknown[][] } {
  const lines: unknown[][] = [];
  return { lines, error: (message, ...details) => void lines.push([message, ...details]) };
}

/** How a test reaches an app: through `app.fetch`, or over a real socket to `listen(app)`. */
export type Transport = "app.fetch" | "socket";

/** Both transports, for suites that must hold on each. */
export const TRANSPORTS: readonly Transport[] = ["app.fetch", "socket"];

/** Sends requests to an app over a transport; `close` stops the server a socket needed. */
export interface Client {
  send(method: string, path: string, options?: CallOptions): Promise<Response>;
  close(): Promise<void>;
}

/** A client of `app` over `transport`: `app.fetch` as it is, or a server on a free port. */
export async function reach(app: Application, transport: Transport): Promise<Client> {
  if (transport === "app.fetch") {
    return {
      send: (method, path, options) => call(app, method, path, options),
      close: async () => {},
    };
  }
  const server = await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    send: async (method, path, options = {}) => {
      const headers = new Headers(options.headers);
      let body = options.body;
      if (options.json !== undefined) {
        body = JSON.stringify(options.json);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
      // The answer as the server gave it: a redirect is not followed.
      return await fetch(`${origin}${path}`, {
        method,
        headers,
        body: body ?? null,
        redirect: "manual",
      });
    },
    close: () => server.close(),
  };
}

export { freePort } from "./free_port.ts";

/** The AggregateError `promise` rejects with. */
export async function aggregateOf(promise: Promise<unknown>): Promise<AggregateError> {
  let caught: unknown;
  await assert.rejects(promise, (e: unknown) => {
    caught = e;
    return e instanceof AggregateError;
  });
  return caught as AggregateError;
}
