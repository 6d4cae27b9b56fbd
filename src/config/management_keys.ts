/**
 * The keys the actuator reads (`management.*`), declared by the actuator's own modules rather
 * than in the core's table (`thaw_keys.ts`): an app that does not import the actuator neither carries them
 * (bundled) nor has them checked, and one that does has them checked, reachable from the
 * environment and documented like every other key, from the moment this module is imported (the
 * entry point imports it before the app can load its configuration).
 *
 * @module
 */
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The actuator's keys. */
export const MANAGEMENT_KEYS = {
  "management.endpoints.web.exposure.include": {
    type: "list",
    default: ["health"],
  },
  "management.endpoints.web.exposure.exclude": {
    type: "list",
    default: [],
  },
  "management.endpoints.web.base-path": {
    type: "string",
    default: "/actuator",
  },
  "management.endpoints.web.discovery.enabled": {
    type: "boolean",
    default: true,
  },
  "management.server.port": {
    type: "integer",
    max: 65535,
  },
  "management.server.address": {
    type: "string",
  },
  "management.health.timeout": {
    type: "integer",
    min: 1,
    max: MAX_DURATION_MS,
    default: 5000,
  },
  "management.health.diskspace.enabled": {
    type: "boolean",
    default: true,
  },
  "management.health.diskspace.threshold": {
    type: "integer",
    default: 10485760,
  },
  "management.health.diskspace.path": {
    type: "string",
  },
  "management.health.redis.enabled": {
    type: "boolean",
    default: true,
  },
  "management.health.db.enabled": {
    type: "boolean",
    default: true,
  },
  "management.health.search.enabled": {
    type: "boolean",
    default: true,
  },
  "management.endpoint.health.show-details": {
    type: "choice",
    choices: ["always", "never"],
    default: "never",
  },
  // `when-authorized` is Spring's too: declared so that it is refused with why, not as a typo.
  "management.endpoint.env.show-values": {
    type: "choice",
    choices: ["never", "always", "when-authorized"],
    default: "never",
  },
  "management.endpoint.configprops.show-values": {
    type: "choice",
    choices: ["never", "always", "when-authorized"],
    default: "never",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(MANAGEMENT_KEYS);
