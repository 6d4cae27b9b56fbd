// The executors the configuration asks for: the default one (`thaw.task.execution.pool.*`) and
// each of `thaw.task.executors.<name>.pool.*`, with the same keys and defaults.
import { ConfigError } from "../config/config_error.ts";
import { durationKey } from "../config/duration.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { isMapping } from "../object_guards.ts";
import type { ExecutorBounds } from "./task_executor.ts";
import { shownValue } from "../shown_value.ts";

/** What the executors are made from. */
export interface ExecutorSettings {
  /** Each executor's bounds, `default` first. */
  readonly executors: ReadonlyMap<string, ExecutorBounds>;
  /** `thaw.task.execution.shutdown.await-termination-period`, in milliseconds. */
  readonly awaitTerminationMs: number;
}

const DEFAULT_AWAIT_MS = 30_000;

/** The executors' settings; a `ConfigError` naming the key for a value that cannot be one. */
export function executorSettings(settings: ThawSettings): ExecutorSettings {
  const base: ExecutorBounds = {
    maxSize: settings.get("thaw.task.execution.pool.max-size"),
    queueCapacity: settings.get("thaw.task.execution.pool.queue-capacity"),
  };
  const executors = new Map<string, ExecutorBounds>([["default", base]]);
  const named = settings.get("thaw.task.executors");
  if (named !== undefined && named !== null) {
    if (!isMapping(named)) {
      throw new ConfigError(
        `${settings.where("thaw.task.executors")}: give a mapping of executors by name ` +
          "(mail: { pool: { max-size: 2 } })",
      );
    }
    for (const [name, value] of Object.entries(named)) {
      const key = `thaw.task.executors.${name}`;
      if (name === "default") {
        throw new ConfigError(
          `${settings.where(key)}: "default" is the executor of thaw.task.execution.pool: ` +
            "give this one another name",
        );
      }
      const pool = isMapping(value) ? value.pool : undefined;
      if (!isMapping(value) || (pool !== undefined && !isMapping(pool))) {
        throw new ConfigError(
          `${settings.where(key)}: give the executor's pool (pool: { max-size: 2, ` +
            "queue-capacity: 100 })",
        );
      }
      for (const inner of Object.keys(value)) {
        if (inner !== "pool") {
          throw new ConfigError(`${settings.where(`${key}.${inner}`)}: unknown key; it takes pool`);
        }
      }
      const bounds: { maxSize: number; queueCapacity: number } = { ...base };
      for (const [k, v] of Object.entries((pool ?? {}) as Record<string, unknown>)) {
        const at = `${key}.pool.${k}`;
        const field = k === "max-size" ? "maxSize" : k === "queue-capacity" ? "queueCapacity" : "";
        if (field === "") {
          throw new ConfigError(
            `${settings.where(at)}: unknown key; a pool takes max-size and queue-capacity`,
          );
        }
        const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v;
        const least = field === "maxSize" ? 1 : 0;
        if (typeof n !== "number" || !Number.isSafeInteger(n) || n < least) {
          throw new ConfigError(
            `${settings.where(at)}: give a whole number, ${least} or more, got ${shownValue(v)}`,
          );
        }
        bounds[field] = n;
      }
      executors.set(name, bounds);
    }
  }
  const period = settings.get("thaw.task.execution.shutdown.await-termination-period");
  let awaitTerminationMs = DEFAULT_AWAIT_MS;
  if (period !== undefined && period !== null) {
    awaitTerminationMs = durationKey(
      period,
      settings.where("thaw.task.execution.shutdown.await-termination-period"),
    );
  }
  return { executors, awaitTerminationMs };
}
