import { importOptional } from "../../../runtime/optional_module.ts";
import { definedFields } from "../../../defined_fields.ts";

/** How one request goes out. */
export interface SendVia {
  /**
   * On a connection of its own, neither taken from the pool nor left in it: the try after a
   * pooled connection dropped, when the others in the pool may be just as dead (a proxy that
   * closed its idle connections without a word).
   */
  readonly fresh?: boolean;
}

/** How requests reach a cluster: the runtime's `fetch` with its TLS and proxy settings. */
export interface Transport {
  /**
   * Whether a GET or a HEAD may carry a body: node:http sends it, as HTTP allows; `fetch`
   * refuses it before anything is sent.
   */
  readonly sendsGetBodies?: boolean;
  fetch(url: URL, init: RequestInit, via?: SendVia): Promise<Response>;
  /**
   * Sends `request` and reads the answer whole, no more of its body than `limit` allows: past it
   * the connection is closed, and the answer fails with the bound's error. Where a transport has
   * it, it costs less than `fetch` and a read of the `Response`: no URL, signal, web stream or
   * `Response` is made for a request.
   */
  read?(request: Outgoing, limit: BodyLimit): Reading;
  /** Frees the connection pool. */
  close(): void;
}

/** A request as {@linkcode Transport.read} sends it. */
export interface Outgoing {
  /** Where to: the scheme, the host and the port. */
  readonly origin: URL;
  /** The path and the query, exactly as sent (as a URL would write them). */
  readonly path: string;
  readonly method: string;
  /** By names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array | undefined;
  readonly via?: SendVia;
}

/** A request under way. */
export interface Reading {
  /** The answer read whole, or why there is none. */
  readonly answer: Promise<WholeAnswer>;
  /** Gives the request up: its connection is closed, and `answer` fails if it has not settled. */
  cancel(): void;
}

/** A transport that reads answers whole itself. */
export type ReadingTransport = Transport & { readonly read: NonNullable<Transport["read"]> };

/** How many bytes of an answer's body may be read, and the error past them. */
export interface BodyBound {
  readonly most: number;
  over(): Error;
}

/**
 * The bound on an answer's body, told its `content-encoding` (in lower case) and its first bytes:
 * they tell bytes still compressed from bytes a transport decoded.
 */
export type BodyLimit = (encoding: string | undefined, first: Uint8Array) => BodyBound;

/** An answer read whole. */
export interface WholeAnswer {
  readonly status: number;
  /** By names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
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
  if (g.Bun !== undefined) {
    // Bun's fetch takes a pooled socket even with `keepalive: false`: node:http's `agent: false`
    // makes the fresh connection, where no proxy is in the way.
    return bunTransport(options, options.proxy ? undefined : await nodeHttp(options));
  }
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
      ...definedFields({ connection: options.name }),
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
  const settings = options.proxy ? { proxy: { url: options.proxy.href } } : {};
  const client = deno.createHttpClient(settings);
  return {
    fetch: async (url, init, via) => {
      if (!via?.fresh) return await fetch(url, { ...init, client } as RequestInit);
      // A client of its own has a pool of its own, empty: read whole before it is closed.
      const own = deno.createHttpClient(settings);
      try {
        return await copied(await fetch(url, { ...init, client: own } as RequestInit), init);
      } finally {
        own.close();
      }
    },
    close: () => client.close(),
  };
}

function bunTransport(options: TransportOptions, fresh: Transport | undefined): Transport {
  const extra: Record<string, unknown> = {};
  if (options.proxy) extra.proxy = options.proxy.href;
  return {
    fetch: (url, init, via) =>
      via?.fresh && fresh !== undefined
        ? fresh.fetch(url, init, via)
        // Through a proxy, the most Bun offers: the new socket is not pooled.
        : fetch(
          url,
          { ...init, ...extra, ...(via?.fresh ? { keepalive: false } : {}) } as RequestInit,
        ),
    close() {
      fresh?.close();
    },
  };
}

/**
 * `response` read whole into a new one, so that the client it came through can be closed: without
 * a body where a `Response` may have none (HEAD, 204, 205, 304).
 */
export async function copied(response: Response, init: RequestInit): Promise<Response> {
  const empty = init.method === "HEAD" || [204, 205, 304].includes(response.status);
  const body = empty ? null : await response.arrayBuffer();
  return new Response(body, { status: response.status, headers: response.headers });
}
