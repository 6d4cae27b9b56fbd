import { Agent as HttpsAgent, request } from "node:https";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { CONNECT_TIMEOUT_CODE } from "./send_failure.ts";
import type { Transport, TransportOptions } from "./transport.ts";

/**
 * A transport on `node:http` / `node:https`: Node's for every connection without a proxy, and on
 * Deno and Bun for what their `fetch` cannot do for one connection alone:
 * `Deno.createHttpClient` has no switch to skip certificate checks (only the process-wide
 * `--unsafely-ignore-certificate-errors` flag) and always honours `HTTP(S)_PROXY`; Deno's and
 * Bun's `fetch` give no connect timeout. This transport does all three and never reads the proxy
 * variables. It cannot go through a proxy itself.
 */
export function nodeHttpTransport(options: TransportOptions): Transport {
  if (options.proxy) {
    throw new Error("proxy cannot be combined with ssl_verification: false on this runtime");
  }
  // Pools of its own: Node's global agents go through HTTP(S)_PROXY when the process was started
  // with NODE_USE_ENV_PROXY=1 (Node 24 and later), which `proxy: false` must not, and which the
  // requests sent on a connection of their own (`agent: false`) would not either.
  const pools = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  return {
    fetch: async (url, init) => {
      // A body given as a stream is one that must not be sent twice (see search_client.ts): it
      // goes on a connection of its own, which Deno's node:http never replays (a reused one it
      // may, denoland/deno#36786).
      const once = init.body instanceof ReadableStream;
      const body = once ? await new Response(init.body).text() : init.body as string | undefined;
      return await new Promise<Response>((resolve, reject) => {
        const signal = init.signal ?? undefined;
        const https = url.protocol === "https:";
        const send = https ? request : httpRequest;
        const req = send(url, {
          method: init.method,
          headers: init.headers as Record<string, string>,
          rejectUnauthorized: options.sslVerification,
          signal,
          timeout: options.connectTimeoutMs,
          agent: once ? false : https ? pools.https : pools.http,
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
        // No connection within connect_timeout counts as unreachable: the request never left. A
        // socket reused from the pool is connected already, and gets no such deadline (the
        // request's own timeout still applies): its silence says nothing about the request.
        req.on("socket", (socket) => {
          if (!socket.connecting) return req.setTimeout(0);
          socket.once("connect", () => req.setTimeout(0));
        });
        req.on("timeout", () => {
          const connecting = req.socket?.connecting === true;
          req.destroy(
            Object.assign(new Error(`no connection within ${options.connectTimeoutMs / 1000} s`), {
              ...(connecting ? { code: CONNECT_TIMEOUT_CODE } : {}),
            }),
          );
        });
        req.on("error", reject);
        req.end(body);
      });
    },
    close() {
      pools.http.destroy();
      pools.https.destroy();
    },
  };
}
