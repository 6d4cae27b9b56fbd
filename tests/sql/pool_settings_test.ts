import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  POOL_DEFAULTS,
  type PoolSettings,
  poolSettingsFrom,
  resolvePoolSettings,
} from "../../src/sql/pool_settings.ts";
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
        /pool\.idle-timeout: give milliseconds \(250\) or a duration \("250ms", "5s", "10m", "1h"\), above 0, got "soon"/,
      ],
      [
        { "busy-timeout": 0 },
        /pool\.busy-timeout: give milliseconds \(250\) or a duration .*, above 0, got 0/,
      ],
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

describe("the pool.sqlite keys of a datasource entry", () => {
  const at = (key: string) => `application.yml:7: datasource[0].${key}`;

  it("reads synchronous, journal-mode and foreign-keys, in any letter case", () => {
    assert.deepEqual(
      poolSettingsFrom(
        {
          "max-size": 2,
          sqlite: { synchronous: "normal", "journal-mode": "wal", "foreign-keys": false },
        },
        at,
      ),
      { maxSize: 2, sqlite: { synchronous: "NORMAL", journalMode: "WAL", foreignKeys: false } },
    );
    for (const value of ["OFF", "NORMAL", "FULL", "EXTRA"]) {
      assert.deepEqual(poolSettingsFrom({ sqlite: { synchronous: value } }, at), {
        sqlite: { synchronous: value },
      });
    }
    for (const value of ["DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL"]) {
      assert.deepEqual(poolSettingsFrom({ sqlite: { "journal-mode": value } }, at), {
        sqlite: { journalMode: value },
      });
    }
    // The key as its name is written, in the pool's mapping.
    assert.deepEqual(
      poolSettingsFrom({ "sqlite.synchronous": "NORMAL", "sqlite.journal-mode": "WAL" }, at),
      { sqlite: { synchronous: "NORMAL", journalMode: "WAL" } },
    );
    assert.throws(
      () => poolSettingsFrom({ "sqlite.sync": "NORMAL" }, at),
      /datasource\[0\]\.pool\.sqlite\.sync is not a SQLite setting/,
    );
    // As an environment variable gives it: text.
    assert.deepEqual(poolSettingsFrom({ sqlite: { "foreign-keys": "true" } }, at), {
      sqlite: { foreignKeys: true },
    });
  });

  it("refuses a bad value or key, naming the key and the line", () => {
    const cases: [unknown, RegExp][] = [
      [
        { synchronous: "fast" },
        /^application\.yml:7: datasource\[0\]\.pool\.sqlite\.synchronous must be OFF, NORMAL, FULL or EXTRA, got "fast"/,
      ],
      [{ synchronous: 1 }, /pool\.sqlite\.synchronous must be OFF, NORMAL, FULL or EXTRA, got 1/],
      [
        { "journal-mode": "wal2" },
        /pool\.sqlite\.journal-mode must be DELETE, TRUNCATE, PERSIST, MEMORY or WAL, got "wal2"/,
      ],
      [
        { "journal-mode": "off" },
        /pool\.sqlite\.journal-mode cannot be OFF: the SQLite of Deno, Bun and Node is built defensive.*MEMORY is the nearest, got "off"/,
      ],
      [{ "foreign-keys": "yes" }, /pool\.sqlite\.foreign-keys must be true or false, got "yes"/],
      [
        { "foreign_keys": true },
        /pool\.sqlite\.foreign_keys is not a SQLite setting \(synchronous, journal-mode, foreign-keys\)/,
      ],
      [
        "WAL",
        /datasource\[0\]\.pool\.sqlite must be a mapping \(synchronous, journal-mode, foreign-keys\)/,
      ],
    ];
    for (const [raw, message] of cases) {
      assert.throws(
        () => poolSettingsFrom({ sqlite: raw }, at),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        JSON.stringify(raw),
      );
    }
  });

  it("refuses, from code, a value that is not one of SQLite's, naming the datasource and key", () => {
    assert.deepEqual(resolvePoolSettings("notes", {}).sqlite, { foreignKeys: true });
    assert.deepEqual(
      resolvePoolSettings("notes", { sqlite: { synchronous: "NORMAL", journalMode: "WAL" } })
        .sqlite,
      { synchronous: "NORMAL", journalMode: "WAL", foreignKeys: true },
    );
    const bad: [Record<string, unknown>, RegExp][] = [
      [
        { synchronous: "normal" },
        /^datasource "notes": pool\.sqlite\.synchronous must be OFF, NORMAL, FULL or EXTRA, got "normal"/,
      ],
      [{ journalMode: 5 }, /^datasource "notes": pool\.sqlite\.journal-mode must be DELETE, /],
      [
        { foreignKeys: "on" },
        /^datasource "notes": pool\.sqlite\.foreign-keys must be true or false/,
      ],
    ];
    for (const [sqlite, message] of bad) {
      assert.throws(() => resolvePoolSettings("notes", { sqlite } as PoolSettings), {
        name: "RangeError",
        message,
      });
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
        fc.option(fc.string().filter((k) => !KEYS.includes(k) && k !== "sqlite"), {
          nil: undefined,
        }),
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
