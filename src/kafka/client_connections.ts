// Cutting a Kafka client's connections under it. `@platformatic/kafka` takes a second close() for
// done while its first still waits on the broker (a leave of the group that nobody answers), and a
// close that failed leaves the connections open: a shutdown that must end by its deadline closes
// its pool here.

/** A client of `@platformatic/kafka` (consumer, producer, admin): its pool of connections. */
export interface PooledClient {
  readonly connections: { close(): Promise<void> };
}

/** Closes the connections of `client` without a word to the broker. */
export async function closeConnections(client: PooledClient): Promise<void> {
  await client.connections.close().catch(() => {});
}

/**
 * Runs `close` (the client's own, which may leave a group) for `ms` at most; past it, or when it
 * failed, cuts the client's connections.
 */
export async function closeWithin(
  client: PooledClient,
  close: () => Promise<unknown>,
  ms: number,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = await Promise.race([
    close().then(() => true, () => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
  if (!closed) await closeConnections(client);
}
