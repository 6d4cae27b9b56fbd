// The attributes OpenTelemetry's messaging conventions give every span and point of the Kafka
// client: the system, the client's id and the broker it was pointed at. Pure.
import type { Attributes } from "@opentelemetry/api";

/** `messaging.system`. */
export const SYSTEM = "kafka";

/**
 * The attributes every span and point of one client carries: `messaging.system`,
 * `messaging.client.id` (`clientId`), and `server.address` and `server.port` of `server`
 * (`host:port`, an IPv6 host in brackets, as `kafka.bootstrap-servers` gives it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { baseAttributes } from "./messaging_attributes.ts";
 *
 * assert.deepEqual(baseAttributes("orders", "[::1]:9092"), {
 *   "messaging.system": "kafka",
 *   "messaging.client.id": "orders",
 *   "server.address": "::1",
 *   "server.port": 9092,
 * });
 * ```
 */
export function baseAttributes(clientId: string, server?: string): Attributes {
  const base: Attributes = { "messaging.system": SYSTEM, "messaging.client.id": clientId };
  if (server !== undefined) {
    const colon = server.lastIndexOf(":");
    base["server.address"] = server.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
    base["server.port"] = Number(server.slice(colon + 1));
  }
  return base;
}
