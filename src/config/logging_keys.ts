/**
 * The keys the logging feature reads (`logging.level`, `logging.structured.*`,
 * `logging.access.enabled`), declared by its
 * own modules rather than in the core's table (`thaw_keys.ts`), as the actuator's are: an app that
 * does not import `@thaw/thaw/logging` neither carries them (bundled) nor has them checked, and
 * one that does has them checked, reachable from the environment and documented like every other
 * key, from the moment this module is imported (the entry point imports it first).
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/**
 * The logging feature's keys, every one under `logging`: the core declares none, so that an app
 * that sets any without the feature is told what to import rather than that they are unknown.
 * `logging.level` is a mapping of logger names to levels, read and checked by the feature.
 */
export const LOGGING_KEYS = {
  "logging.level": {
    type: "feature",
  },
  "logging.structured": {
    type: "feature",
  },
  "logging.structured.format.console": {
    type: "choice",
    choices: ["ecs", "logstash"],
  },
  "logging.access.enabled": {
    type: "boolean",
    default: false,
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(LOGGING_KEYS);
