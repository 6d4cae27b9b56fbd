// `@JobHandler` options, checked where the decorator is written: their defaults, and each wrong
// one refused naming the handler and the option.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_BACKOFF,
  DEFAULT_TIMEOUT_MS,
  handlerSettings,
} from "../../src/jobs/handler_options.ts";

describe("handlerSettings", () => {
  it("gives one run at a time, three in all, 1 s doubling to 10 minutes, a 5 minute lease", () => {
    const settings = handlerSettings(undefined, '@JobHandler("mail")');
    assert.equal(settings.concurrency, 1);
    assert.equal(settings.attempts, 3);
    assert.equal(settings.backoff, DEFAULT_BACKOFF);
    assert.deepEqual([1, 2, 3, 10, 20].map((n) => settings.backoff.delayOf(n)), [
      1000,
      2000,
      4000,
      512_000,
      600_000,
    ]);
    assert.equal(settings.timeoutMs, DEFAULT_TIMEOUT_MS);
    assert.equal(DEFAULT_TIMEOUT_MS, 300_000);
    assert.equal(settings.schema, undefined);
  });

  it("reads what is given, durations as text or milliseconds", () => {
    const settings = handlerSettings(
      { concurrency: 4, attempts: 10, backoff: { delay: "2s", maxDelay: "1m" }, timeout: "30s" },
      "w",
    );
    assert.equal(settings.concurrency, 4);
    assert.equal(settings.attempts, 10);
    assert.deepEqual([1, 2, 10].map((n) => settings.backoff.delayOf(n)), [2000, 4000, 60_000]);
    assert.equal(settings.timeoutMs, 30_000);
  });

  it("refuses each wrong option, naming the handler", () => {
    const refusals: [unknown, RegExp][] = [
      [{ concurrency: 0 }, /concurrency is an integer from 1 to 1000, got 0/],
      [{ concurrency: 1.5 }, /concurrency is an integer/],
      [{ attempts: 0 }, /attempts is an integer from 1/],
      [{ timeout: 0 }, /timeout: give milliseconds .* above 0, got 0/],
      [{ timeout: "forever" }, /timeout: give milliseconds/],
      [{ backoff: { delay: "soon" } }, /backoff: delay: give milliseconds/],
      [{ backoff: { multiplier: 0.5 } }, /backoff: multiplier is a number, 1 or more/],
      [{ backoff: { pause: 1 } }, /backoff: unknown option "pause"/],
      [{ backoff: 5 }, /backoff: the options must be an object, got 5/],
      [{ schema: { parse: () => 1 } }, /schema is a Standard Schema \(zod, valibot, arktype\)/],
      [{ retries: 1 }, /unknown option "retries"; the options are concurrency, attempts/],
      ["fast", /the options must be an object, got "fast"/],
    ];
    for (const [options, message] of refusals) {
      assert.throws(() => handlerSettings(options, '@JobHandler("mail")'), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /^@JobHandler\("mail"\)/);
        assert.match(error.message, message);
        return true;
      }, JSON.stringify(options));
    }
  });
});
