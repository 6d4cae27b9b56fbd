import { request } from "node:https";
import { request as httpRequest } from "node:http";
import type { Transport, TransportOptions } from "./transport.ts";

/**
 * A transport on `node:http` / `node:https`, for what the runtime's `fetch` cannot do for one
 * connection alone: `Deno.createHttpClient` has no switch to skip certificate checks (only the
 * process-wide `--unsafely-ignore-certificate-errors` flag) and always honours `HTTP(S)_PROXY`;
 * Deno's and Bun's `fetch` give no connect timeout. This transport does all three and never
 * reads the proxy variables. It cannot go through a proxy itself.
 */
export function nodeHttpTransport(options: TransportOptions): Transport {
  if (options.proxy) {
    throw new Error("proxy cannot be combined with ssl_verification: false on this runtime");
  }
  return {
    fetch: (url, init) =>
      new Promise<Response>((resolve, reject) => {
        const signal = init.signal ?? undefined;
        const send = url.protocol === "https:" ? request : httpRequest;
        const req = send(url, {
          method: init.method,
          headers: init.headers as Record<string, string>,
          rejectUnauthorized: options.sslVerification,
          signal,
          timeout: options.connectTimeoutMs,
        }, (res) => {
          const chunks: Uint8Array[] = [];
          res.on("data", (chunk: Uint8Array) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (typeof v === "string") headers.set(k, v);
            }
            const body = res.statusCode === 204 || init.method === "HEAD"
              ? null
              : new Blob(chunks as BlobPart[]);
            resolve(new Response(body, { status: res.statusCode ?? 500, headers }));
          });
        });
        // No socket activity for connect_timeout while connecting counts as unreachable.
        req.on("timeout", () =>
          req.destroy(new Error(`no connection within ${options.connectTimeoutMs / 1000} s`)));
        req.on("socket", (socket) =>
          socket.once("connect", () => req.setTimeout(0)));
        req.on("error", reject);
        req.end(init.body as string | undefined);
      }),
    close() {},
  };
}
