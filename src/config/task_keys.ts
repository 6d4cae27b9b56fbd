/**
 * The keys of `@thaw/thaw/tasks` (`thaw.task.*`, Spring's names), declared by its own modules
 * rather than in the core's table, as the logging feature's are: an app that does not import it
 * neither carries them nor has them checked.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The task executors' keys. */
export const TASK_KEYS = {
  "thaw.task.execution.pool.max-size": {
    type: "integer",
    min: 1,
    default: 8,
  },
  "thaw.task.execution.pool.queue-capacity": {
    type: "integer",
    default: 1000,
  },
  "thaw.task.execution.shutdown.await-termination-period": {
    type: "feature",
  },
  "thaw.task.executors": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(TASK_KEYS);
