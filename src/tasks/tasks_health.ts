// The `tasks` health component: DOWN while a daemon waits to be restarted, with each executor's
// counts as details.
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import type { Class } from "../context/class.ts";
import type { TaskExecutors } from "./task_executors.ts";

/** The indicator class of one app's executors, which `tasks()` registers. */
export function tasksHealth(executors: TaskExecutors): Class {
  @HealthIndicator("tasks")
  class TasksHealthIndicator implements HealthCheck {
    check(): Record<string, unknown> | false {
      const counts = executors["thaw.taskCounts"]();
      if (counts.daemonsInBackoff.length > 0) return false;
      return {
        executors: Object.fromEntries(counts.executors.map(({ name, ...c }) => [name, c])),
        daemonRestarts: counts.daemonRestarts,
      };
    }
  }
  return TasksHealthIndicator;
}
