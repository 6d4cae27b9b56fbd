import { Agent, fetch as undiciFetch, ProxyAgent } from "undici";
import type { Transport, TransportOptions } from "./transport.ts";

/**
 * Node's transport: undici's own `fetch` with a dispatcher per connection. Node's global `fetch`
 * is undici too, but its bundled copy cannot be handed a dispatcher from the npm package safely.
 * `ProxyAgent` is used only for an explicit proxy, so `proxy: false` and no proxy behave alike
 * (Node 20's fetch never reads `HTTP_PROXY`).
 */
export function nodeTransport(options: TransportOptions): Transport {
  const connect = {
    timeout: options.connectTimeoutMs,
    rejectUnauthorized: options.sslVerification,
  };
  const dispatcher = options.proxy
    ? new ProxyAgent({ uri: options.proxy.href, requestTls: connect, proxyTls: connect })
    : new Agent({ connect });
  return {
    fetch: (url, init) =>
      undiciFetch(
        url,
        { ...init, dispatcher } as Parameters<typeof undiciFetch>[1],
      ) as unknown as Promise<Response>,
    close: () => void dispatcher.close(),
  };
}
