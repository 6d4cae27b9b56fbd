/**
 * `server.forward-headers-strategy`, declared by what reads it (the client address of `listen`'s
 * requests and of the actuator's spans) rather than in the core's table: a worker served by neither
 * names no client, so it neither carries the key nor reads it.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The key, and Spring Boot's values for it. */
export const FORWARD_HEADERS_KEYS = {
  "server.forward-headers-strategy": {
    type: "choice",
    choices: ["none", "native", "framework"],
    default: "none",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(FORWARD_HEADERS_KEYS);
