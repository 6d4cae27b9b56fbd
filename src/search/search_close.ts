// A search connection's client as a bean closes after the beans that use it, as a datasource's
// pool does (data_setup.ts): the container runs a bean's `@PreDestroy` hooks, found on its class,
// the latest started first, so the hook must be on the client's class: a subclass of the
// package's, made here from the class the caller loaded.
import type { Client } from "@opensearch-project/opensearch";
import { PreDestroy } from "../context/lifecycle.ts";

/**
 * Closes `client`: its connections' sockets, once the requests in flight have ended (the package
 * waits for them). Resolves at once for a client without connections, whose own `close()` would
 * never call back.
 *
 * @param client the client to close; closing it twice is harmless
 */
export async function closeSearchClient(client: Client): Promise<void> {
  const pool = (client as { connectionPool?: { size?: unknown } }).connectionPool;
  if (pool?.size === 0) return;
  await client.close();
}

const closing = new WeakMap<typeof Client, typeof Client>();

/**
 * The subclass of `Base` (the package's `Client`, as the caller imported it) whose instances the
 * container closes with {@linkcode closeSearchClient} when the app closes, after the beans that
 * use them: a bean's `create` returns `new (closedAfterBeans(Client))(options)`. The same class
 * for the same `Base`; its instances are `Base`'s in every other way (`instanceof Client`).
 *
 * @param Base the package's `Client` class
 */
export function closedAfterBeans(Base: typeof Client): typeof Client {
  let made = closing.get(Base);
  if (made === undefined) {
    class SearchClient extends Base {
      /** Closes the client once its requests in flight have ended: the container calls it. */
      @PreDestroy()
      async closeConnections(): Promise<void> {
        await closeSearchClient(this);
      }
    }
    made = SearchClient;
    closing.set(Base, made);
  }
  return made;
}
