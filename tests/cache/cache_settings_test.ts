import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { cacheSettings, DEFAULT_MAX_ENTRIES } from "../../src/cache/cache_settings.ts";
import { ConfigError } from "../../mod.ts";
import { propertyOptions } from "../property.ts";

const where = (key: string) => `application.yml: ${key}`;
const read = (cache: unknown) => cacheSettings({ thaw: { cache } } as never, where);

describe("cacheSettings", () => {
  it("reads each cache's ttl, max-entries and max-bytes, in any of their written forms", () => {
    const name = fc.string({ minLength: 1, maxLength: 8 }).filter((n) => n !== "__proto__");
    const ttl = fc.integer({ min: 1, max: 86_400 }).chain((seconds) =>
      fc.constantFrom<[unknown, number]>(
        [seconds * 1000, seconds * 1000],
        [`${seconds}s`, seconds * 1000],
        [`PT${seconds}S`, seconds * 1000],
        [`${seconds * 1000}ms`, seconds * 1000],
      )
    );
    const max = fc.integer({ min: 1, max: 1_000_000 }).chain((n) =>
      fc.constantFrom<[unknown, number]>([n, n], [String(n), n], [` ${n} `, n])
    );
    const cache = fc.record({ ttl, max, bytes: max, timeout: ttl }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.dictionary(name, cache, { maxKeys: 4 }), (caches) => {
        const written = Object.fromEntries(
          Object.entries(caches).map(([n, c]) => [n, {
            ...(c.ttl === undefined ? {} : { ttl: c.ttl[0] }),
            ...(c.max === undefined ? {} : { "max-entries": c.max[0] }),
            ...(c.bytes === undefined ? {} : { "max-bytes": c.bytes[0] }),
            ...(c.timeout === undefined ? {} : { timeout: c.timeout[0] }),
          }]),
        );
        const settings = read(written);
        assert.deepEqual([...settings.keys()].sort(), Object.keys(caches).sort());
        for (const [n, c] of Object.entries(caches)) {
          assert.deepEqual(settings.get(n), {
            ...(c.ttl === undefined ? {} : { ttlMs: c.ttl[1] }),
            ...(c.max === undefined ? {} : { maxEntries: c.max[1] }),
            ...(c.bytes === undefined ? {} : { maxBytes: c.bytes[1] }),
            ...(c.timeout === undefined ? {} : { timeoutMs: c.timeout[1] }),
          });
        }
      }),
      propertyOptions(),
    );
  });

  it("refuses any other key, naming it and where it was written", () => {
    const known = new Set(["ttl", "max-entries", "max-bytes", "timeout"]);
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }).filter((k) => !known.has(k) && k !== "__proto__"),
        (key) => {
          assert.throws(() => read({ users: { [key]: 1 } }), (e) => {
            assert.ok(e instanceof ConfigError);
            assert.ok(
              e.message.startsWith(`application.yml: thaw.cache.users.${key}: unknown key;`),
              e.message,
            );
            return true;
          });
        },
      ),
      propertyOptions(),
    );
  });

  it("refuses what is not a duration or a count, showing control bytes escaped", () => {
    for (const ttl of [0, -1, "0s", "soon", "1.5s", true, [], {}, "5\u0007m"]) {
      assert.throws(() => read({ users: { ttl } }), (e) => {
        assert.ok(e instanceof ConfigError);
        assert.match(
          e.message,
          /^application\.yml: thaw\.cache\.users\.ttl: give milliseconds \(250\) or a duration .*, above 0/,
        );
        // deno-lint-ignore no-control-regex
        assert.doesNotMatch(e.message, /[\u0000-\u001f\u007f]/);
        return true;
      });
    }
    for (
      const count of [0, -3, 1.5, "ten", "", Number.MAX_SAFE_INTEGER + 2, false]
    ) {
      assert.throws(() => read({ users: { "max-entries": count } }), {
        message: /^application\.yml: thaw\.cache\.users\.max-entries must be a whole number from 1/,
      });
      assert.throws(() => read({ users: { "max-bytes": count } }), {
        message: /^application\.yml: thaw\.cache\.users\.max-bytes must be a whole number from 1/,
      });
    }
    assert.throws(() => read("users"), {
      message: "application.yml: thaw.cache must be a mapping of cache names",
    });
    assert.throws(() => read({ users: [] }), {
      message:
        "application.yml: thaw.cache.users must be a mapping of ttl, max-entries, max-bytes, timeout",
    });
  });

  it("reads nothing from a configuration without caches, and a cache left empty as no settings", () => {
    assert.equal(cacheSettings({}, where).size, 0);
    assert.equal(read(null).size, 0);
    assert.equal(read({ users: null }).get("users"), undefined);
    assert.deepEqual(read({ users: {} }).get("users"), {});
    assert.equal(DEFAULT_MAX_ENTRIES, 10_000);
    // A time to live waits on no timer; a timeout does, and is held to what one can wait.
    assert.deepEqual(read({ users: { ttl: "P400D" } }).get("users"), { ttlMs: 400 * 86_400_000 });
    assert.throws(() => read({ users: { timeout: "P400D" } }), {
      message: /thaw\.cache\.users\.timeout: give .*, above 0, at most 2147483647 ms, got "P400D"/,
    });
  });
});
