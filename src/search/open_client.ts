// Opens a `search:` entry's client: its transport first (a setting the runtime cannot honour is
// the entry's configuration error), then the client's package, loaded here and only here.
import { ConfigError } from "../config/config_error.ts";
import type { Mask } from "../config/secrets_mask.ts";
import { importOptional, MissingPackageError } from "../runtime/optional_module.ts";
import {
  runtimeTransport,
  type Transport,
  type TransportOptions,
} from "../migrate/search/http/transport.ts";
import type { DenoEnvironment } from "./deno_bean_transport.ts";
import type { SearchConnection } from "../migrate/search/search_connection.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";
import type { SearchClient } from "./search_client.ts";

/** The package `search()` makes its clients with, an optional peer dependency. */
export const CLIENT_PACKAGE = "@opensearch-project/opensearch";

/**
 * The client of `connection`, ready for requests (none sent yet), its errors masked by `mask`
 * (the connection's secrets).
 */
export async function openClient(connection: SearchConnection, mask: Mask): Promise<SearchClient> {
  const { openSearchClient } = await importOptional(() => import("./opensearch_client.ts"), {
    packages: [CLIENT_PACKAGE],
    neededBy: `search connection "${connection.name}"`,
    what: "the OpenSearch client",
    connection: connection.name,
  });
  let transport: Transport;
  let once: Transport | undefined;
  try {
    // workerd gives `process.versions.node` with nodejs_compat, which would send the runner's
    // transport down node:http: there the runtime's own `fetch` is the way out.
    transport = onWorkerd() ? fetchTransport(connection) : await beanTransport(connection);
    once = await onceTransport(connection, transport);
  } catch (error) {
    // Names the connection and the install line already.
    if (error instanceof MissingPackageError) throw error;
    throw new ConfigError(`search connection "${connection.name}": ${(error as Error).message}`, {
      cause: error,
    });
  }
  return openSearchClient(connection, transport, mask, once);
}

/**
 * What a request the client sends no more than once goes through, on a fresh connection, where
 * `transport` may send it again by itself: Deno's and Bun's `fetch` do when the connection closes
 * before any byte of an answer (Deno's on any connection, Bun's on a used one, a read only).
 * node:http on a connection of its own sends it once on all three runtimes; `transport` already
 * is node:http where its `sendsGetBodies` says so (it honours the fresh connection itself). It
 * cannot go through a proxy: there `fetch` stays the way out (see docs/search.md).
 */
async function onceTransport(
  connection: SearchConnection,
  transport: Transport,
): Promise<Transport | undefined> {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  if (transport.sendsGetBodies === true || connection.proxy || onWorkerd()) return undefined;
  if (g.Deno === undefined && g.Bun === undefined) return undefined;
  const { nodeHttpTransport } = await import("../migrate/search/http/node_http_transport.ts");
  return nodeHttpTransport({
    sslVerification: connection.sslVerification,
    proxy: connection.proxy,
    connectTimeoutMs: connection.connectTimeoutMs,
    name: connection.name,
  });
}

// The runner's transport; on Deno, plain HTTP through node:http where no proxy would take it.
async function beanTransport(connection: SearchConnection): Promise<Transport> {
  const options: TransportOptions = {
    sslVerification: connection.sslVerification,
    proxy: connection.proxy,
    connectTimeoutMs: connection.connectTimeoutMs,
    name: connection.name,
  };
  const transport = await runtimeTransport(options);
  const deno = (globalThis as { Deno?: DenoEnvironment }).Deno;
  if (
    deno === undefined || transport.sendsGetBodies === true || connection.proxy !== undefined
  ) {
    return transport;
  }
  const [{ environmentProxy, plainHttpOnNode }, { nodeHttpTransport }] = await Promise.all([
    import("./deno_bean_transport.ts"),
    import("../migrate/search/http/node_http_transport.ts"),
  ]);
  if (environmentProxy(deno)) return transport;
  return plainHttpOnNode(transport, nodeHttpTransport(options));
}

// The runtime's `fetch` as it is: it has no switch for certificates, proxies or connect timeouts.
function fetchTransport(connection: SearchConnection): Transport {
  if (!connection.sslVerification || connection.proxy) {
    throw new Error(
      "this runtime's fetch cannot turn off TLS verification or use a proxy: leave out " +
        "ssl_verification: false and proxy",
    );
  }
  return { fetch: (url, init) => fetch(url, init), close() {} };
}
