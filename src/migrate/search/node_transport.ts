import { fetch as undiciFetch, ProxyAgent } from "undici";
import type { Transport, TransportOptions } from "./transport.ts";

/**
 * Node's transport for a connection with a proxy: undici's own `fetch` through a `ProxyAgent`
 * (which tunnels with `CONNECT`, and checks the proxy's and the cluster's certificates as
 * `ssl_verification` says). Node's global `fetch` is undici too, but its bundled copy cannot be
 * handed a dispatcher from the npm package safely. undici is an optional peer dependency, loaded
 * only for such a connection: without a proxy, Node goes through `node:http(s)`.
 */
export function nodeProxyTransport(proxy: URL, options: TransportOptions): Transport {
  const connect = {
    timeout: options.connectTimeoutMs,
    rejectUnauthorized: options.sslVerification,
  };
  const dispatcher = new ProxyAgent({ uri: proxy.href, requestTls: connect, proxyTls: connect });
  return {
    fetch: (url, init) =>
      undiciFetch(
        url,
        { ...init, dispatcher } as Parameters<typeof undiciFetch>[1],
      ) as unknown as Promise<Response>,
    close: () => void dispatcher.close(),
  };
}
