// The `jobs` health component: UP while the jobs' table can be read, with each queue's counts by
// state and how long its earliest due job has waited; DOWN with what the database said.
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import type { Class } from "../context/class.ts";
import type { StateCount } from "./job_store.ts";

/** A queue's jobs as the health details show them. */
export interface QueueCounts {
  waiting: number;
  running: number;
  done: number;
  dead: number;
  /** How long the earliest due waiting job has been due, in ms (0: none is due). */
  oldestWaitingMs: number;
}

/** Each queue's counts, by queue name, from the store's counts by queue and state. */
export function queueCounts(counts: readonly StateCount[]): Record<string, QueueCounts> {
  // A Map: "__proto__" is a queue's name like any other.
  const queues = new Map<string, QueueCounts>();
  for (const { queue, state, jobs, dueForMs } of counts) {
    let entry = queues.get(queue);
    if (entry === undefined) {
      entry = { waiting: 0, running: 0, done: 0, dead: 0, oldestWaitingMs: 0 };
      queues.set(queue, entry);
    }
    entry[state] += jobs;
    if (state === "waiting") entry.oldestWaitingMs = dueForMs ?? 0;
  }
  return Object.fromEntries(queues);
}

/** The indicator class of an app's jobs, which `jobs()` registers. */
export function jobsHealth(counts: () => Promise<readonly StateCount[]>): Class {
  @HealthIndicator("jobs")
  class JobsHealthIndicator implements HealthCheck {
    async check(): Promise<Record<string, unknown>> {
      return { queues: queueCounts(await counts()) };
    }
  }
  return JobsHealthIndicator;
}
