import { importOptional } from "../../runtime/optional_module.ts";

/** How requests reach a cluster: the runtime's `fetch` with its TLS and proxy settings. */
export interface Transport {
  fetch(url: URL, init: RequestInit): Promise<Response>;
  /** Frees the connection pool. */
  close(): void;
  /**
   * The runtime sends a request once more by itself when its connection closes unanswered and
   * the body is not a stream (Deno's fetch: denoland/deno#35610), so the client does not add a
   * try of its own.
   */
  readonly replaysDropped?: boolean;
}

/** The connection settings a transport needs. */
export interface TransportOptions {
  readonly sslVerification: boolean;
  /** A proxy URL, `false` to ignore `HTTP(S)_PROXY`, `undefined` for the runtime's default. */
  readonly proxy: URL | false | undefined;
  readonly connectTimeoutMs: number;
  /** The connection's name, for messages. */
  readonly name?: string;
}

/** Creates the transport of one connection. */
export type TransportFactory = (options: TransportOptions) => Promise<Transport>;

interface DenoHttp {
  createHttpClient(options: { proxy?: { url: string } }): { close(): void };
}

/**
 * The transport for the runtime this runs on. Each runtime exposes TLS and proxy settings
 * differently: Deno through `Deno.createHttpClient`, Bun through `fetch` options. Where Deno's or
 * Bun's `fetch` cannot skip certificate checks or ignore `HTTP(S)_PROXY` for one connection,
 * `node:http(s)` does it. On Node, `node:http(s)` carries every connection without a proxy (it
 * checks certificates or not, applies the connect timeout, and reads no proxy variable); only a
 * connection with a proxy needs undici's `ProxyAgent`, an optional peer dependency loaded then.
 */
export const runtimeTransport: TransportFactory = async (options) => {
  const g = globalThis as { Deno?: DenoHttp; Bun?: unknown };
  if (
    (g.Bun !== undefined || g.Deno !== undefined) &&
    (!options.sslVerification || options.proxy === false)
  ) {
    return await nodeHttp(options);
  }
  if (g.Bun !== undefined) return bunTransport(options);
  if (g.Deno !== undefined) return denoTransport(g.Deno, options);
  if (
    typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions
      ?.node === "string"
  ) {
    if (!options.proxy) return await nodeHttp(options);
    const { nodeProxyTransport } = await importOptional(() => import("./node_transport.ts"), {
      packages: ["undici"],
      neededBy: `connection "${options.name ?? "?"}" (a proxy on Node)`,
      what: "undici",
      ...(options.name === undefined ? {} : { connection: options.name }),
    });
    return nodeProxyTransport(options.proxy, options);
  }
  if (!options.sslVerification || options.proxy) {
    throw new Error("this runtime's fetch cannot turn off TLS verification or use a proxy");
  }
  return { fetch: (url, init) => fetch(url, init), close() {} };
};

async function nodeHttp(options: TransportOptions): Promise<Transport> {
  const { nodeHttpTransport } = await import("./node_http_transport.ts");
  return nodeHttpTransport(options);
}

function denoTransport(deno: DenoHttp, options: TransportOptions): Transport {
  const client = deno.createHttpClient(options.proxy ? { proxy: { url: options.proxy.href } } : {});
  return {
    fetch: (url, init) => fetch(url, { ...init, client } as RequestInit),
    close: () => client.close(),
    replaysDropped: true,
  };
}

function bunTransport(options: TransportOptions): Transport {
  const extra: Record<string, unknown> = {};
  if (options.proxy) extra.proxy = options.proxy.href;
  return { fetch: (url, init) => fetch(url, { ...init, ...extra } as RequestInit), close() {} };
}
