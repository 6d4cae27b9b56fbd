// A `search:` entry's client: the official OpenSearch client over the runner's transport and
// authentication. This module imports the client's package: `open_client.ts` loads it only when
// an app's `search()` makes a client, so that no other app carries it.
import {
  Client,
  type ClientOptions,
  Connection,
  errors,
  Transport as ClientTransport,
} from "@opensearch-project/opensearch";
import type { Mask } from "../config/secrets_mask.ts";
import { PreDestroy } from "../context/lifecycle.ts";
import type { Transport } from "../migrate/search/http/transport.ts";
import { connectionAuth, type SearchConnection } from "../migrate/search/search_connection.ts";
import { sizedTransportClass } from "./answer_bounds.ts";
import { fetchConnectionClass } from "./fetch_connection.ts";
import { markSearchClient, type SearchClient } from "./search_client.ts";

/**
 * The client of `connection`, whose requests go through `transport` (closed with the client), its
 * errors masked by `mask` (the connection's secrets); those the client sends no more than once
 * through `once` where given (closed with it too).
 */
export function openSearchClient(
  connection: SearchConnection,
  transport: Transport,
  mask: Mask,
  once?: Transport,
): SearchClient {
  const way = {
    name: connection.name,
    transport,
    ...(once === undefined ? {} : { once }),
    auth: connectionAuth(connection),
    mask,
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
      closing ??= (
        // The package's pool never calls back once it has no connection left to close.
        this.connectionPool.size === 0 ? Promise.resolve() : new Promise<void>((resolve, reject) =>
          // The callback form: the promise form calls close() again, which is this one.
          super.close((error: Error | null) => error ? reject(error) : resolve())
        )
      ).finally(() => {
        transport.close();
        once?.close();
      });
      return settle(closing, callback);
    }

    /**
     * A client sharing this one's pool, as the package's `child()` makes it, whose `close()`
     * leaves the pool to the bean: the container closes it, after the beans that use it.
     */
    override child(options?: ClientOptions): Client {
      return sharingPool(super.child(options));
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

// A child of the bean, and each of its own children: the package's child shares its parent's pool
// and empties it on close(), which would end the connections of every bean that uses the parent
// and leave the container's close of it waiting forever. A child's close() ends nothing.
function sharingPool(child: Client): Client {
  Object.defineProperties(child, {
    close: {
      // deno-lint-ignore no-explicit-any -- the client's two forms: a promise, or a callback
      value: (callback?: any): any => settle(Promise.resolve(), callback),
      configurable: true,
      writable: true,
    },
    child: {
      value: (options?: ClientOptions): Client =>
        sharingPool(Client.prototype.child.call(child, options)),
      configurable: true,
      writable: true,
    },
  });
  return child;
}

// `close()`'s two forms: the promise, or its outcome given to `callback`.
function settle(done: Promise<void>, callback: unknown): Promise<void> | undefined {
  if (typeof callback !== "function") return done;
  done.then(() => callback(null), callback as (error: unknown) => void);
  return undefined;
}
