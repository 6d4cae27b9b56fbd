import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { composeMasks, maskUrls, noMask, secretsMask } from "../../src/config/secrets_mask.ts";
import { LevelTable } from "../../src/logging/level_table.ts";
import { LogWriter } from "../../src/logging/log_writer.ts";
import type { LogLevel } from "../../src/logging/logging_system.ts";
import type { Logger } from "../../src/web/error_responder.ts";

function out(methods: readonly ("error" | "warn" | "info")[] = ["error", "warn", "info"]) {
  const lines: unknown[][] = [];
  const logger: Record<string, (...args: unknown[]) => void> = {};
  for (const method of methods) logger[method] = (...args) => void lines.push([method, ...args]);
  return { lines, logger: logger as unknown as Logger };
}

const time = () => new Date("2026-01-01T00:00:00.000Z");

describe("LogWriter", () => {
  it("writes each level to its method, a missing one to error", () => {
    const { lines, logger } = out(["error", "info"]);
    const writer = new LogWriter(
      logger,
      new LevelTable(new Map([["ROOT", "TRACE"]])),
      undefined,
      noMask,
    );
    for (const level of ["ERROR", "WARN", "INFO", "DEBUG", "TRACE"] as LogLevel[]) {
      writer.write("A", level, level.toLowerCase(), []);
    }
    assert.deepEqual(lines, [
      ["error", "ERROR A: error"],
      ["error", "WARN A: warn"],
      ["info", "INFO A: info"],
      ["info", "DEBUG A: debug"],
      ["info", "TRACE A: trace"],
    ]);
  });

  it("leaves Thaw's own plain lines as they are, but for the mask", () => {
    const { lines, logger } = out();
    const mask = composeMasks(maskUrls, secretsMask(["s3cret-pw"]));
    const writer = new LogWriter(logger, new LevelTable(), undefined, mask);
    const error = new Error("login s3cret-pw refused");
    writer.write("thaw", "ERROR", "[thaw] GET / failed: s3cret-pw", [error]);
    const [method, text, copy] = lines[0] as [string, string, Error];
    assert.equal(method, "error");
    assert.equal(text, "[thaw] GET / failed: ***");
    assert.ok(copy instanceof Error && copy !== error);
    assert.equal(copy.message, "login *** refused");
    assert.doesNotMatch(String(copy.stack), /s3cret-pw/);
    // The thrown error itself is left as it was.
    assert.equal(error.message, "login s3cret-pw refused");
  });

  it("writes a line below its logger's level nowhere, and notes every logger asked for", () => {
    const { lines, logger } = out();
    const levels = new LevelTable(new Map([["noisy", "ERROR"]]));
    const writer = new LogWriter(logger, levels, "logstash", noMask, time);
    writer.write("noisy.child", "WARN", "dropped", []);
    writer.write("other", "WARN", "kept", []);
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(String(lines[0][1])).logger_name, "other");
    assert.deepEqual(levels.loggers().map((l) => l.name), [
      "ROOT",
      "noisy",
      "noisy.child",
      "other",
    ]);
  });

  it("drops the [thaw] mark of Thaw's structured lines, whose logger says whose they are", () => {
    const { lines, logger } = out();
    const writer = new LogWriter(logger, new LevelTable(), "ecs", noMask, time);
    writer.write("thaw", "WARN", "[thaw] slow", []);
    assert.equal(JSON.parse(String(lines[0][1])).message, "slow");
    assert.equal(writer.format, "ecs");
  });
});
