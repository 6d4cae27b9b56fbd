/**
 * The keys of `@thaw/thaw/broadcast` (`thaw.broadcast.*`), declared by its own modules rather than
 * in the core's table, as the tasks' are: an app that does not import it neither carries them nor
 * has them checked.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The broadcaster's keys. */
export const BROADCAST_KEYS = {
  "thaw.broadcast.transport": {
    type: "choice",
    choices: ["memory", "redis", "kafka"],
    default: "memory",
  },
  "thaw.broadcast.max-buffered": {
    type: "integer",
    min: 1,
    default: 1_048_576,
  },
  "thaw.broadcast.redis.url": {
    type: "string",
    default: "redis://127.0.0.1:6379",
  },
  "thaw.broadcast.redis.channel": {
    type: "string",
    default: "thaw:broadcast",
  },
  "thaw.broadcast.kafka.bootstrap-servers": {
    type: "list",
    default: ["127.0.0.1:9092"],
  },
  "thaw.broadcast.kafka.topic": {
    type: "string",
    default: "thaw.broadcast",
  },
  "thaw.broadcast.kafka.client-id": {
    type: "string",
    default: "thaw-broadcast",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(BROADCAST_KEYS);
