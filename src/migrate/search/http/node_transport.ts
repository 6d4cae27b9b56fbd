import { fetch as undiciFetch, ProxyAgent } from "undici";
import { copied, type Transport, type TransportOptions } from "./transport.ts";

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
  const agent = () => new ProxyAgent({ uri: proxy.href, requestTls: connect, proxyTls: connect });
  const dispatcher = agent();
  const send = (url: URL, init: RequestInit, through: ProxyAgent) =>
    undiciFetch(
      url,
      { ...init, dispatcher: through } as Parameters<typeof undiciFetch>[1],
    ) as unknown as Promise<Response>;
  return {
    fetch: async (url, init, via) => {
      if (!via?.fresh) return await send(url, init, dispatcher);
      // An agent of its own has a pool of its own, empty: read whole before it is closed.
      const own = agent();
      try {
        return await copied(await send(url, init, own), init);
      } finally {
        own.close().catch(() => {});
      }
    },
    close: () => void dispatcher.close(),
  };
}
