import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/config_error.ts";
import { configuredLevels, parseLevel } from "../../src/logging/configured_levels.ts";

const where = (key: string) => `application.yml:3: ${key}`;

describe("configuredLevels", () => {
  it("reads dotted and nested names alike, root in any case as ROOT, levels in any case", () => {
    const levels = configuredLevels(
      { root: "warn", "org.example": "DEBUG", org: { thaw: { web: "Trace" } }, quiet: false },
      where,
    );
    assert.deepEqual(
      [...levels],
      [["ROOT", "WARN"], ["org.example", "DEBUG"], ["org.thaw.web", "TRACE"], ["quiet", "OFF"]],
    );
    assert.deepEqual([...configuredLevels(undefined, where)], []);
  });

  it("refuses a level that is none, naming where it is", () => {
    assert.throws(
      () => configuredLevels({ org: { example: "LOUD" } }, where),
      (error: Error) =>
        error instanceof ConfigError &&
        error.message ===
          'application.yml:3: logging.level.org.example must be TRACE, DEBUG, INFO, WARN, ERROR or OFF, got "LOUD"',
    );
    assert.throws(() => configuredLevels("DEBUG", where), /logging\.level must be a mapping/);
    assert.throws(() => configuredLevels({ a: 3 }, where), /logging\.level\.a must be TRACE/);
  });

  it("parses the six levels and nothing else", () => {
    assert.equal(parseLevel(" info "), "INFO");
    assert.equal(parseLevel("off"), "OFF");
    assert.equal(parseLevel("verbose"), undefined);
    assert.equal(parseLevel(1), undefined);
  });
});
