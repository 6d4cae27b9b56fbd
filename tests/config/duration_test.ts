// Durations as Spring Boot reads them, against a small reference model.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_DURATION_MS, parseDuration } from "../../src/config/duration.ts";
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
