// The LISTEN connection over a pool of its own making: a notification of the jobs' channel wakes
// its queue; a connection lost is released once, whatever told of it, and opened again; every
// queue is woken once it is back; a close releases it and opens no other. (On real PostgreSQL, in
// jobs_test.ts.)
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { JobNotifications } from "../../src/jobs/job_notifications.ts";
import { memoryLogger } from "../helpers.ts";
import { FakeClock } from "../fake_clock.ts";
import { waitFor } from "./job_support.ts";

class FakeClient extends EventEmitter {
  readonly queries: string[] = [];
  readonly released: unknown[] = [];
  failQuery: Error | undefined;

  query(text: string): Promise<unknown> {
    this.queries.push(text);
    return this.failQuery === undefined ? Promise.resolve({}) : Promise.reject(this.failQuery);
  }

  release(error?: Error | boolean): void {
    this.released.push(error);
  }
}

class FakePool {
  readonly clients: FakeClient[] = [];
  failConnect = 0;

  connect(): Promise<FakeClient> {
    if (this.failConnect > 0) {
      this.failConnect--;
      return Promise.reject(new Error("connection refused"));
    }
    const client = new FakeClient();
    this.clients.push(client);
    return Promise.resolve(client);
  }
}

describe("JobNotifications", () => {
  it("wakes the queue a notification of its channel names, and nothing for another", async () => {
    const pool = new FakePool();
    const woken: (string | undefined)[] = [];
    const listener = new JobNotifications(pool, (q) => woken.push(q), memoryLogger());
    listener.start();
    listener.start();
    await waitFor("LISTEN", () => pool.clients[0]?.queries.length === 1);
    assert.equal(pool.clients.length, 1);
    assert.deepEqual(pool.clients[0].queries, ["LISTEN thaw_jobs"]);
    pool.clients[0].emit("notification", { channel: "thaw_jobs", payload: "mail" });
    pool.clients[0].emit("notification", { channel: "other", payload: "mail" });
    pool.clients[0].emit("notification", { channel: "thaw_jobs" });
    assert.deepEqual(woken, ["mail"]);
    listener.close();
    assert.deepEqual(pool.clients[0].released, [true]);
  });

  it("opens a lost connection again, releasing it once, and wakes every queue then", async () => {
    const pool = new FakePool();
    pool.failConnect = 1;
    const woken: (string | undefined)[] = [];
    const logger = memoryLogger();
    const listener = new JobNotifications(pool, (q) => woken.push(q), logger);
    listener.start();
    await waitFor("a connection after the refusal", () => pool.clients.length === 1);
    await waitFor("LISTEN", () => pool.clients[0].queries.length === 1);
    assert.deepEqual(woken, [undefined]);
    const lost = new Error("terminating connection due to administrator command");
    pool.clients[0].emit("error", lost);
    pool.clients[0].emit("error", lost);
    assert.deepEqual(pool.clients[0].released, [lost]);
    await waitFor("the second connection", () => pool.clients[1]?.queries.length === 1);
    assert.deepEqual(woken, [undefined, undefined]);
    assert.match(String(logger.lines[0][0]), /lost the PostgreSQL connection that listens/);
    listener.close();
    assert.deepEqual(pool.clients[1].released, [true]);
  });

  it("opens nothing once closed, even with a reconnect due", async () => {
    const pool = new FakePool();
    const clock = new FakeClock(0);
    const listener = new JobNotifications(pool, () => {}, memoryLogger(), clock);
    pool.failConnect = 1;
    listener.start();
    await waitFor("the reconnect due", () => clock.pending === 1);
    listener.close();
    assert.equal(clock.pending, 0);
    // The pool would give a client now: none is asked for, however long.
    await clock.advance(60_000);
    assert.equal(pool.clients.length, 0);
  });
});
