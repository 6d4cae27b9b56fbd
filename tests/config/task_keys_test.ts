// The keys of @thaw/thaw/tasks: checked once its entry is imported, unknown without it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap } from "../../mod.ts";
import { TASK_KEYS } from "../../src/config/task_keys.ts";
import { tasks } from "../../tasks.ts";

describe("thaw.task.* keys", () => {
  it("declares Spring's names and defaults", () => {
    assert.equal(TASK_KEYS["thaw.task.execution.pool.max-size"].default, 8);
    assert.equal(TASK_KEYS["thaw.task.execution.pool.queue-capacity"].default, 1000);
  });

  it("refuses a pool that cannot run, naming the key", async () => {
    await assert.rejects(
      bootstrap({
        config: { thaw: { task: { execution: { pool: { "max-size": 0 } } } } },
        tasks: tasks(),
      }),
      /thaw\.task\.execution\.pool\.max-size/,
    );
    await assert.rejects(
      bootstrap({
        config: { thaw: { task: { executors: { mail: { pool: { "max-size": "many" } } } } } },
        tasks: tasks(),
      }),
      /thaw\.task\.executors\.mail\.pool\.max-size: give a whole number, 1 or more, got "many"/,
    );
    await assert.rejects(
      bootstrap({
        config: {
          thaw: { task: { execution: { shutdown: { "await-termination-period": "soon" } } } },
        },
        tasks: tasks(),
      }),
      /await-termination-period: give milliseconds \(250\) or a duration/,
    );
  });
});
