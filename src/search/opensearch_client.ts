// A `search:` entry's client: the official OpenSearch client over the runner's transport and
// authentication. This module imports the client's package: `open_client.ts` loads it only when
// an app's `search()` makes a client, so that no other app carries it.
import {
  Client,
  Connection,
  errors,
  Transport as ClientTransport,
} from "@opensearch-project/opensearch";
import { secretsMask } from "../config/secrets_mask.ts";
import { PreDestroy } from "../context/lifecycle.ts";
import { authSecrets } from "../migrate/search/auth/authorize.ts";
import type { Transport } from "../migrate/search/http/transport.ts";
import { connectionAuth, type SearchConnection } from "../migrate/search/search_connection.ts";
import { sizedTransportClass } from "./answer_bounds.ts";
import { fetchConnectionClass } from "./fetch_connection.ts";
import { markSearchClient, type SearchClient } from "./search_client.ts";

/** The client of `connection`, whose requests go through `transport` (closed with the client). */
export function openSearchClient(connection: SearchConnection, transport: Transport): SearchClient {
  const auth = connectionAuth(connection);
  const way = {
    name: connection.name,
    transport,
    auth,
    mask: secretsMask(authSecrets(auth), { json: true }),
  };
  // A bean's class: the container closes it after the beans that use it.
  let closing: Promise<void> | undefined;
  class BeanClient extends Client {
    /**
     * Ends the connection's requests and frees its pool, once however often it is called: the
     * container calls it after the beans that use the client.
     */
    @PreDestroy()
    // deno-lint-ignore no-explicit-any -- the client's two forms: a promise, or a callback
    override close(callback?: any): any {
      closing ??= new Promise<void>((resolve, reject) =>
        // The callback form: the promise form calls close() again, which is this one.
        super.close((error: Error | null) => error ? reject(error) : resolve())
      ).finally(() => transport.close());
      if (typeof callback !== "function") return closing;
      closing.then(() => callback(null), callback);
    }
  }
  const client = new BeanClient({
    nodes: connection.hosts.map((host) => host.href),
    Connection: fetchConnectionClass({ Connection, errors }, way),
    Transport: sizedTransportClass(ClientTransport),
    requestTimeout: connection.timeoutMs,
    ...(connection.maxRetries === undefined ? {} : { maxRetries: connection.maxRetries }),
    // A node that failed a request is tried again after this long, not left dead.
    resurrectStrategy: "ping",
  });
  return markSearchClient(client) as unknown as SearchClient;
}
