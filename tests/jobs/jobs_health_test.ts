// The jobs health details: each queue's counts by state, from the store's counts by queue and state.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { queueCounts } from "../../src/jobs/jobs_health.ts";

describe("queueCounts", () => {
  it("gathers each queue's states, zero where none, and the waiting ones' age", () => {
    assert.deepEqual(
      queueCounts([
        { queue: "mail", state: "waiting", jobs: 3, dueForMs: 1200 },
        { queue: "mail", state: "dead", jobs: 1, dueForMs: undefined },
        { queue: "__proto__", state: "done", jobs: 7, dueForMs: undefined },
      ]),
      {
        mail: { waiting: 3, running: 0, done: 0, dead: 1, oldestWaitingMs: 1200 },
        ["__proto__"]: { waiting: 0, running: 0, done: 7, dead: 0, oldestWaitingMs: 0 },
      },
    );
    assert.ok(
      Object.hasOwn(
        queueCounts([{ queue: "__proto__", state: "dead", jobs: 1, dueForMs: undefined }]),
        "__proto__",
      ),
    );
    assert.deepEqual(queueCounts([]), {});
  });
});
