// Where a transaction is bound to the async call that runs it: every SqlClient call of its
// datasource made inside it, in any bean, runs on its connection, and nothing outside it does.
import type { DataConnection, DataPool } from "./data_pool.ts";

/**
 * The connection of the transaction of `pool` that the current async call runs in, if any.
 * (Transactions are not built yet: none.)
 */
export function currentConnection(_pool: DataPool): DataConnection | undefined {
  return undefined;
}
