import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  POOL_DEFAULTS,
  poolSettingsFrom,
  resolvePoolSettings,
} from "../../src/data/pool_settings.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import fc from "fast-check";
import { propertyOptions } from "../property.ts";

describe("pool_settings", () => {
  it("puts the settings given over the defaults", () => {
    assert.deepEqual(resolvePoolSettings("main", {}), POOL_DEFAULTS);
    assert.deepEqual(resolvePoolSettings("main", { maxSize: 3, acquireTimeoutMs: 50 }), {
      ...POOL_DEFAULTS,
      maxSize: 3,
      acquireTimeoutMs: 50,
    });
  });

  it("refuses a setting that is not a positive number, naming the datasource and the key", () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5" as unknown as number]) {
      assert.throws(
        () => resolvePoolSettings("reports", { idleTimeoutMs: bad }),
        /datasource "reports": pool\.idle-timeout must be a positive number/,
      );
    }
    assert.throws(
      () => resolvePoolSettings("reports", { maxSize: 0.5 }),
      /datasource "reports": pool\.max-size must be at least 1/,
    );
  });
});

describe("poolSettingsFrom: the pool keys of a datasource entry", () => {
  const at = (key: string) => `application.yml:7: datasource[0].${key}`;

  it("reads each key, durations as Spring Boot writes them", () => {
    assert.deepEqual(
      poolSettingsFrom({
        "max-size": 4,
        "idle-timeout": "30s",
        "acquire-timeout": 250,
        "connect-timeout": "PT2S",
        "busy-timeout": "1m",
        "statement-timeout": "90s",
        "query-timeout": "5s",
      }, at),
      {
        maxSize: 4,
        idleTimeoutMs: 30_000,
        acquireTimeoutMs: 250,
        connectTimeoutMs: 2_000,
        busyTimeoutMs: 60_000,
        statementTimeoutMs: 90_000,
        queryTimeoutMs: 5_000,
      },
    );
    assert.deepEqual(poolSettingsFrom(undefined, at), {});
  });

  it("refuses a misspelt key, a value out of range and a pool that is not a mapping, naming the line", () => {
    const cases: [unknown, RegExp][] = [
      [
        { "max-pool-size": 3 },
        /^application\.yml:7: datasource\[0\]\.pool\.max-pool-size is not a pool setting \(max-size, idle-timeout/,
      ],
      [{ maxSize: 3 }, /pool\.maxSize is not a pool setting/],
      [{ "max-size": 0 }, /pool\.max-size must be a whole number above 0, got 0/],
      [{ "max-size": 2.5 }, /pool\.max-size must be a whole number above 0/],
      [{ "max-size": "10" }, /pool\.max-size must be a whole number above 0, got "10"/],
      [
        { "idle-timeout": "soon" },
        /pool\.idle-timeout must be a duration above 0 \(500ms, 30s, 5m\), got "soon"/,
      ],
      [{ "busy-timeout": 0 }, /pool\.busy-timeout must be a duration above 0/],
      [JSON.parse('{"__proto__": 1}'), /pool\.__proto__ is not a pool setting/],
      [[1, 2], /datasource\[0\]\.pool must be a mapping \(max-size, /],
      ["big", /datasource\[0\]\.pool must be a mapping/],
    ];
    for (const [raw, message] of cases) {
      assert.throws(
        () => poolSettingsFrom(raw, at),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        JSON.stringify(raw),
      );
    }
  });
});

describe("poolSettingsFrom (property)", () => {
  const KEYS = [
    "max-size",
    "idle-timeout",
    "acquire-timeout",
    "connect-timeout",
    "busy-timeout",
    "statement-timeout",
    "query-timeout",
  ];
  const at = (key: string) => `application.yml:3: datasource[0].${key}`;

  it("takes every known key with a value above 0, and refuses any other key, naming it", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...KEYS), fc.integer({ min: 1, max: 2_000_000_000 })),
        fc.option(fc.string().filter((k) => !KEYS.includes(k)), { nil: undefined }),
        (known, stray) => {
          const raw: Record<string, unknown> = { ...known };
          if (stray !== undefined) {
            Object.defineProperty(raw, stray, { value: 1, enumerable: true });
          }
          if (stray === undefined) {
            const settings = poolSettingsFrom(raw, at) as Record<string, number>;
            assert.deepEqual(Object.values(settings).sort(), Object.values(known).sort());
          } else {
            assert.throws(
              () => poolSettingsFrom(raw, at),
              (e: unknown) =>
                e instanceof ConfigError &&
                e.message.includes(`pool.${stray} is not a pool setting`),
            );
          }
        },
      ),
      propertyOptions(),
    );
  });
});
