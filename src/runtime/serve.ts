/** Options of `Application.listen`. */
export interface ListenOptions {
  /** The port; `0` picks a free one. Defaults to `server.port` of the config, else 8080. */
  readonly port?: number;
  /** The address to bind; defaults to `server.hostname` of the config, else `0.0.0.0`. */
  readonly hostname?: string;
}

/** A running server. */
export interface Server {
  /** The bound address. */
  readonly hostname: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** `http://host:port`, with `localhost` for an address bound on every interface. */
  readonly url: string;
  /** Stops accepting connections and waits for open requests to finish. */
  close(): Promise<void>;
}

type FetchHandler = (request: Request) => Response | Promise<Response>;

interface DenoLike {
  serve(
    options: { port: number; hostname: string; onListen: () => void },
    handler: FetchHandler,
  ): { addr: { port: number; hostname: string }; shutdown(): Promise<void> };
}
interface BunLike {
  serve(options: { port: number; hostname: string; fetch: FetchHandler }): {
    port: number;
    hostname: string;
    stop(closeActive?: boolean): Promise<void> | void;
  };
}

function server(hostname: string, port: number, close: () => Promise<void>): Server {
  const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
  return {
    hostname,
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close,
  };
}

/**
 * Serves `fetch` on the runtime it runs on: `Deno.serve`, `Bun.serve`, or Node's `http` (where
 * bodies up to `maxBodySize` are read before the handler runs; see node_listener.ts).
 */
export async function serve(
  fetch: FetchHandler,
  port: number,
  hostname: string,
  maxBodySize: number,
): Promise<Server> {
  const g = globalThis as { Deno?: DenoLike; Bun?: BunLike };
  if (g.Deno !== undefined) {
    const s = g.Deno.serve({ port, hostname, onListen: () => {} }, fetch);
    return server(hostname, s.addr.port, () => s.shutdown());
  }
  if (g.Bun !== undefined) {
    const s = g.Bun.serve({ port, hostname, fetch });
    return server(hostname, s.port, async () => {
      await s.stop();
    });
  }
  // Loaded only here, so other runtimes never import node:http or Hono's adapter for it.
  const [{ createServer }, { nodeRequestListener }] = await Promise.all([
    import("node:http"),
    import("./node_listener.ts"),
  ]);
  const s = createServer(await nodeRequestListener(fetch, hostname, maxBodySize));
  await new Promise<void>((resolve, reject) => {
    s.once("listening", () => resolve());
    s.once("error", (error) => reject(error));
    s.listen(port, hostname);
  });
  const address = s.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return server(
    hostname,
    bound,
    () => new Promise<void>((resolve, reject) => s.close((e) => (e ? reject(e) : resolve()))),
  );
}
