import type { Client } from "@opensearch-project/opensearch";

/**
 * Closes a client a test made: its connections' sockets, once the requests in flight have ended.
 * Resolves at once for a client without connections, whose own `close()` would never call back.
 */
export async function closeSearchClient(client: Client): Promise<void> {
  const pool = (client as { connectionPool?: { size?: unknown } }).connectionPool;
  if (pool?.size === 0) return;
  await client.close();
}
