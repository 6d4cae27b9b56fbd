// A bounded wait for a connection, for drivers whose own wait is unbounded (mysql2) or bounded
// together with connecting (pg): the caller's timeout is the pool's acquire timeout, named in
// the error, and a connection that arrives after it is given back, never lost.
import { DataError } from "./data_error.ts";

/**
 * `acquire()`, or a `timeout` DataError naming `datasource` after `timeoutMs`; a connection that
 * comes later goes to `giveBack`, and a failure that comes later is dropped. `named`: the
 * acquire-timeout the error names, where `timeoutMs` is what is left of it.
 */
export function acquireWithin<C>(
  datasource: string,
  timeoutMs: number,
  acquire: () => Promise<C>,
  giveBack: (connection: C) => void,
  named: number = timeoutMs,
): Promise<C> {
  return new Promise<C>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timeoutError(datasource, named));
    }, timeoutMs);
    acquire().then(
      (connection) => {
        clearTimeout(timer);
        if (late) giveBack(connection);
        else resolve(connection);
      },
      (error) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}

/** The error of a call that got no connection in time. */
export function timeoutError(datasource: string, timeoutMs: number): DataError {
  return new DataError({
    datasource,
    reason: "timeout",
    message: `no connection was free within ${timeoutMs} ms (pool.acquire-timeout); every one ` +
      "is in use: raise pool.max-size, or look for connections held for long (a transaction " +
      "waiting on something slow)",
  });
}

/** The error of a call on a pool that was closed. */
export function closedError(datasource: string): DataError {
  return new DataError({ datasource, reason: "closed", message: "the pool is closed" });
}
