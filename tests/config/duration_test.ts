// Durations as Spring Boot reads them, against a small reference model.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DURATION_FORMS,
  durationKey,
  durationOption,
  parseDuration,
} from "../../src/config/duration.ts";
import { MAX_DURATION_MS } from "../../src/runtime/timer_limit.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { propertyOptions } from "../property.ts";

describe("parseDuration", () => {
  it("reads milliseconds, Spring Boot's units and ISO 8601 alike", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 * 86_400 }), (seconds) => {
        const ms = seconds * 1000;
        const d = Math.floor(seconds / 86_400);
        const h = Math.floor(seconds / 3600) % 24;
        const m = Math.floor(seconds / 60) % 60;
        const s = seconds % 60;
        assert.equal(parseDuration(ms), ms);
        assert.equal(parseDuration(String(ms)), ms);
        assert.equal(parseDuration(`${ms}ms`), ms);
        assert.equal(parseDuration(`${seconds}s`), ms);
        assert.equal(parseDuration(`P${d}DT${h}H${m}M${s}S`), ms);
        assert.equal(parseDuration(`pt${seconds}s`), ms);
        if (seconds % 60 === 0) assert.equal(parseDuration(`${seconds / 60}m`), ms);
      }),
      propertyOptions(),
    );
    assert.equal(parseDuration("PT0.25S"), 250);
    assert.equal(parseDuration(" 2h "), 7_200_000);
    assert.equal(parseDuration("1d"), 86_400_000);
    assert.equal(parseDuration("30S"), 30_000);
    assert.equal(parseDuration("5M"), 300_000);
    assert.equal(parseDuration("100MS"), 100);
  });

  it("refuses what is not a duration, negative, fractional or beyond one timer's wait", () => {
    for (
      const bad of [
        "",
        "P",
        "PT",
        "P1DT",
        "5 s",
        "5sec",
        "-5s",
        "1.5s",
        "PT1.5555S",
        "0x10",
        "1e3",
        "Infinity",
        "NaN",
        "${x}",
        "25d",
        `${MAX_DURATION_MS + 1}`,
      ]
    ) {
      assert.equal(parseDuration(bad), undefined, bad);
    }
    for (const bad of [-1, 1.5, NaN, Infinity, MAX_DURATION_MS + 1]) {
      assert.equal(parseDuration(bad), undefined, String(bad));
    }
    assert.equal(parseDuration(MAX_DURATION_MS), MAX_DURATION_MS);
  });

  it("never throws, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const ms = parseDuration(text);
        assert.ok(
          ms === undefined || (Number.isSafeInteger(ms) && ms >= 0 && ms <= MAX_DURATION_MS),
        );
      }),
      propertyOptions(300),
    );
  });
});

describe("durationOption", () => {
  it("takes what parseDuration reads, within its bounds", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 0, max: 2 ** 32 }),
          fc.tuple(fc.nat(100_000), fc.constantFrom("", "ms", "s", "m", "h", "d"))
            .map(([n, unit]) => `${n}${unit}`),
          fc.string(),
        ),
        fc.integer({ min: 0, max: 2 }),
        (value, min) => {
          const read = parseDuration(value);
          const where = "@Example({ delay })";
          if (read !== undefined && read >= min) {
            assert.equal(durationOption(value, where, { min }), read);
          } else {
            assert.throws(() => durationOption(value, where, { min }), (error: Error) => {
              assert.ok(error instanceof TypeError);
              assert.ok(error.message.startsWith(`${where}: give ${DURATION_FORMS}`));
              return true;
            });
          }
        },
      ),
      propertyOptions(300),
    );
  });

  it("names the option, shows both forms, and says a bound the value broke", () => {
    assert.throws(() => durationOption("30d", "@Lockable({ waitTime })"), {
      message: `@Lockable({ waitTime }): give ${DURATION_FORMS}, at most ${MAX_DURATION_MS} ms, ` +
        'got "30d"',
    });
    assert.throws(() => durationOption(0, "pool.idle-timeout", { min: 1 }), {
      message: `pool.idle-timeout: give ${DURATION_FORMS}, above 0, got 0`,
    });
    assert.throws(() => durationOption(true, "w", { max: 3_600_000 }), {
      message: `w: give ${DURATION_FORMS}, at most 3600000 ms, got true`,
    });
    for (const value of [null, [], {}, -1, 1.5, NaN, Infinity, 10n, Symbol("x")]) {
      assert.throws(() => durationOption(value, "w"), TypeError, String(value));
    }
  });

  it("a key's wrong one is a ConfigError, with the same words", () => {
    const where = "application.yml:3: server.sse.heartbeat";
    assert.equal(durationKey("15s", where), 15_000);
    assert.throws(() => durationKey("soon", where), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, `${where}: give ${DURATION_FORMS}, got "soon"`);
      return true;
    });
  });

  it("quotes every byte value a file or a caller sent on one printable line", () => {
    for (let byte = 0; byte < 256; byte++) {
      const text = `5${String.fromCharCode(byte)}s`;
      if (parseDuration(text) !== undefined) continue;
      assert.throws(() => durationOption(text, "w"), (error: Error) => {
        // deno-lint-ignore no-control-regex
        assert.doesNotMatch(error.message, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
        return true;
      });
    }
    assert.throws(() => durationOption("\u2028", "w"), /got "\\u2028"$/);
  });
});
