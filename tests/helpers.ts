import type { Application, Logger } from "../mod.ts";

/** Options of {@linkcode call}. */
export interface CallOptions {
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
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
    app.fetch(new Request(`http://localhost${path}`, { method, headers, body })),
  );
}

/** A logger that keeps what it is told, so tests can check it and keep the output clean. */
export function memoryLogger(): Logger & { lines: unknown[][] } {
  const lines: unknown[][] = [];
  return { lines, error: (message, ...details) => void lines.push([message, ...details]) };
}
