// @Retryable and @ConcurrencyLimit as an app uses them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { ConcurrencyLimit, type ConcurrencyLimitOptions, Retryable, tasks } from "../../tasks.ts";
import { TaskExecutors } from "../../src/tasks/task_executors.ts";
import { deferred } from "../deferred.ts";

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

class Transient extends Error {}
class Fatal extends Error {}

describe("@Retryable", () => {
  @Service()
  class Quotes {
    calls = 0;
    failures: Error[] = [];

    @Retryable({ maxRetries: 2, delay: 0, excludes: [Fatal] })
    async fetch(): Promise<string> {
      await Promise.resolve();
      this.calls++;
      const failure = this.failures.shift();
      if (failure !== undefined) throw failure;
      return "42";
    }
  }

  it("tries again until it succeeds", async () => {
    const app = await bootstrap({ components: [Quotes], tasks: tasks() });
    const quotes = app.getBean(Quotes);
    quotes.failures = [new Transient("busy"), new Transient("busy")];
    assert.equal(await quotes.fetch(), "42");
    assert.equal(quotes.calls, 3);
    await app.close();
  });

  it("the last error reaches the caller with the attempts counted on it", async () => {
    const app = await bootstrap({ components: [Quotes], tasks: tasks() });
    const quotes = app.getBean(Quotes);
    quotes.failures = [new Transient("1"), new Transient("2"), new Transient("3")];
    await assert.rejects(quotes.fetch(), (error: Error & { attempts?: number }) => {
      assert.equal(error.message, "3");
      assert.equal(error.attempts, 3);
      return true;
    });
    assert.equal(quotes.calls, 3);
    await app.close();
  });

  it("an excluded error is not retried", async () => {
    const app = await bootstrap({ components: [Quotes], tasks: tasks() });
    const quotes = app.getBean(Quotes);
    quotes.failures = [new Fatal("no such quote")];
    await assert.rejects(quotes.fetch(), { message: "no such quote", attempts: 1 });
    assert.equal(quotes.calls, 1);
    await app.close();
  });

  it("refuses options it cannot run, at once", () => {
    assert.throws(
      () => Retryable({ maxRetries: -1 }),
      /@Retryable: maxRetries is a whole number, 0 or more, got -1/,
    );
    assert.throws(
      () => Retryable({ multiplier: 0.5 }),
      /@Retryable: multiplier is a number, 1 or more/,
    );
    assert.throws(
      () => Retryable({ retries: 3 } as never),
      /@Retryable: unknown option "retries"; the options are maxRetries, delay/,
    );
    // Past what one timer waits, a runtime would wait about 1 ms instead.
    for (const option of ["delay", "maxDelay"]) {
      assert.throws(
        () => Retryable({ [option]: 2 ** 31 }),
        new RegExp(
          `@Retryable: ${option}: give milliseconds \\(250\\) or a duration .*, at most ` +
            "2147483647 ms, got 2147483648",
        ),
      );
    }
    Retryable({ delay: 2 ** 31 - 1, maxDelay: 2 ** 31 - 1 });
  });

  it("takes its times as milliseconds or durations, one wording for a wrong one", () => {
    Retryable({ delay: "250ms", maxDelay: "10m", jitter: "50ms" });
    assert.throws(() => Retryable({ delay: "5 seconds" }), {
      name: "TypeError",
      message: '@Retryable: delay: give milliseconds (250) or a duration ("250ms", "5s", "10m", ' +
        '"1h"), got "5 seconds"',
    });
    assert.throws(() => Retryable({ includes: [1] as never }), {
      message: "@Retryable: includes is a list of error classes",
    });
    // As the docs say: no fraction of a millisecond, no longest wait under the first.
    assert.throws(() => Retryable({ delay: 1.5 }), /@Retryable: delay: give .*, got 1\.5$/);
    assert.throws(
      () => Retryable({ delay: "2s", maxDelay: "1s" }),
      /@Retryable: maxDelay \(1000 ms\) is under delay \(2000 ms\)/,
    );
  });

  it("a retry waiting when the app closes rejects with the last error, never trying again", async () => {
    @Service()
    class Slow {
      calls = 0;
      @Retryable({ maxRetries: 3, delay: 60_000 })
      async fetch(): Promise<string> {
        await Promise.resolve();
        this.calls++;
        throw new Transient(`attempt ${this.calls}`);
      }
    }
    const app = await bootstrap({ components: [Slow], tasks: tasks() });
    const slow = app.getBean(Slow);
    const call = slow.fetch();
    const outcome = call.then(() => undefined, (error: Error) => error);
    // The first attempt failed and its retry is counted as the wait begins.
    const executors = app.getBean(TaskExecutors);
    await until(() => executors["thaw.taskCounts"]().retries === 1);
    await app.close();
    // A give-up only: the wait would otherwise run its 60 s and try again.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<never>((_, reject) =>
      timer = setTimeout(() => reject(new Error("the retry's wait outlived close")), 30_000)
    );
    const error = await Promise.race([outcome, gaveUp]).finally(() => clearTimeout(timer));
    assert.ok(error instanceof Transient, String(error));
    assert.equal(error.message, "attempt 1");
    assert.equal((error as Error & { attempts?: number }).attempts, 1);
    assert.equal(slow.calls, 1);
  });
});

describe("@ConcurrencyLimit", () => {
  it("at most n runs at once; the others wait and all run, in order", async () => {
    @Service()
    class Reports {
      running = 0;
      most = 0;
      readonly order: number[] = [];
      @ConcurrencyLimit(2)
      async build(i: number): Promise<number> {
        this.order.push(i);
        this.most = Math.max(this.most, ++this.running);
        for (let t = 0; t < 3; t++) await new Promise((resolve) => setTimeout(resolve, 0));
        this.running--;
        return i;
      }
    }
    const app = await bootstrap({ components: [Reports], tasks: tasks() });
    const reports = app.getBean(Reports);
    const runs = Array.from({ length: 10 }, (_, i) => reports.build(i));
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(reports.most, 2);
    assert.deepEqual(reports.order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await app.close();
  });

  /**
   * A bean under `@ConcurrencyLimit(1, options)` whose runs wait on one gate: one call runs,
   * `waiting` wait, one more is made; then the gate opens. What that last call got.
   */
  async function overflow(options: ConcurrencyLimitOptions | undefined, waiting: number) {
    const gate = deferred();
    @Service()
    class Exports {
      started = 0;
      @ConcurrencyLimit(1, options)
      async run(): Promise<void> {
        this.started++;
        await gate.promise;
      }
    }
    const app = await bootstrap({ components: [Exports], tasks: tasks() });
    const exports = app.getBean(Exports);
    const admitted = Array.from({ length: 1 + waiting }, () => exports.run());
    await until(() => exports.started === 1);
    const refused = exports.run().then(() => undefined, (error: Error) => error);
    gate.resolve();
    await Promise.all(admitted);
    return { app, exports, refused: await refused };
  }

  it("past queueCapacity waiting calls, a call rejects naming the method and runs nothing", async () => {
    const { app, exports, refused } = await overflow({ queueCapacity: 2 }, 2);
    assert.equal(
      refused?.message,
      "Exports.run(): @ConcurrencyLimit(1) refused the call: 1 run going and 2 calls waiting, " +
        "its queueCapacity",
    );
    assert.equal(exports.started, 3);
    // The queue empties as the runs end: a call is taken again.
    await exports.run();
    assert.equal(exports.started, 4);
    await app.close();
  });

  it("lets 1,000 calls wait by default", async () => {
    const { app, exports, refused } = await overflow(undefined, 1000);
    assert.match(refused?.message ?? "", /1 run going and 1000 calls waiting/);
    assert.equal(exports.started, 1001);
    await app.close();
  });

  it("refuses a queueCapacity that is none, and options it does not know", () => {
    assert.throws(
      () => ConcurrencyLimit(1, { queueCapacity: -1 }),
      /@ConcurrencyLimit\(1, \{ queueCapacity \}\): give a whole number, 0 or more, got -1/,
    );
    assert.throws(
      () => ConcurrencyLimit(1, { queue: 3 } as never),
      /@ConcurrencyLimit\(1\): unknown option "queue"; the options are queueCapacity/,
    );
  });
});
