import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { LOG_LEVELS, ROOT_LOGGER } from "../../src/logging/logging_system.ts";

describe("the log levels", () => {
  it("are Spring Boot's, from the fewest lines to the most, as the loggers endpoint lists them", () => {
    assert.deepEqual(LOG_LEVELS, ["OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"]);
    assert.equal(ROOT_LOGGER, "ROOT");
  });

  it("cannot be changed by what reads them: every answer of the endpoint hands out the list", () => {
    assert.throws(() => (LOG_LEVELS as string[]).push("FATAL"), TypeError);
    assert.equal(LOG_LEVELS.length, 6);
  });
});
