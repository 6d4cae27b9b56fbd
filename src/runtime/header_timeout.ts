// `server.header-timeout`: how long a client has to send a request's head. Each runtime's server
// holds it its own way (serve.ts); Node and Deno check their connections every so often, which is
// the bound's precision, and Bun's 10 s is its own (its timer ticks every 4 s).

/**
 * `server.header-timeout`'s default, in milliseconds: the bound Bun holds on its own and cannot
 * be given another (Node's `headersTimeout` is 60 s; nginx and Go servers often take 10 s or less).
 */
export const DEFAULT_HEADER_TIMEOUT_MS = 10_000;

/**
 * How often connections are checked against a bound of `ms`, in milliseconds: the bound holds
 * within about `ms` plus this (an eighth of it, 50 ms to 1 s).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkEvery } from "./header_timeout.ts";
 *
 * assert.equal(checkEvery(60_000), 1000);
 * assert.equal(checkEvery(1000), 125);
 * assert.equal(checkEvery(1), 50);
 * ```
 */
export function checkEvery(ms: number): number {
  return Math.min(1000, Math.max(50, Math.floor(ms / 8)));
}
