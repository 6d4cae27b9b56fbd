// The close of an app whose `@Async` runs queue on one `@Lockable` key, as the tests of each lock
// manager check it: the run that holds the key is held at a gate while the app closes, and the
// queued one must still take the key in turn and finish.
import assert from "node:assert/strict";
import { bootstrap, type Class, Service } from "../../mod.ts";
import { Async, Lockable, type LockableOptions, tasks } from "../../tasks.ts";
import { TaskExecutors } from "../../src/tasks/task_executors.ts";
import { deferred } from "../deferred.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/**
 * Resolves once `app.close()` reached the executors: the probe executor refuses a run. Until then
 * each probe runs at once (its executor has nothing else to run) and is counted completed.
 */
async function untilExecutorsClosed(executors: TaskExecutors): Promise<void> {
  const probe = executors.get("probe")!;
  await until(() => {
    probe.submit(() => undefined).catch(() => undefined);
    return probe.counts.rejected > 0;
  });
}

/**
 * Two `@Async` runs of one `@Lockable(lockable)` key on an executor of `maxSize` runs (beside
 * `components`, the lock manager's beans): the first holds the key at a gate while the app
 * closes; once the close reached the executors the gate opens, and both runs must finish, in turn.
 */
export async function assertQueuedRunsFinishAtClose(
  lockable: LockableOptions<[]>,
  maxSize: number,
  components: readonly Class[] = [],
): Promise<void> {
  const gate = deferred();
  @Service()
  class Queued {
    runs = 0;
    @Async()
    @Lockable(lockable)
    async run(): Promise<number> {
      const run = ++this.runs;
      await gate.promise;
      return run;
    }
  }
  const config = {
    thaw: {
      task: {
        execution: { pool: { "max-size": maxSize } },
        executors: { probe: { pool: { "max-size": 1 } } },
      },
    },
  };
  const app = await bootstrap({ config, components: [...components, Queued], tasks: tasks() });
  const queued = app.getBean(Queued);
  const ran = Promise.allSettled([queued.run(), queued.run()]);
  await until(() => queued.runs === 1);
  const closing = app.close();
  await untilExecutorsClosed(app.getBean(TaskExecutors));
  gate.resolve();
  assert.deepEqual(await ran, [
    { status: "fulfilled", value: 1 },
    { status: "fulfilled", value: 2 },
  ]);
  await closing;
}
