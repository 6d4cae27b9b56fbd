import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FOR_CLASS } from "../../src/context/field_injection.ts";
import { Log, type LogSink } from "../../src/logging/log.ts";
import type { LogLevel } from "../../src/logging/logging_system.ts";

function sink(enabled: readonly LogLevel[]) {
  const written: unknown[][] = [];
  const value: LogSink = {
    enabled: (_name, level) => enabled.includes(level),
    write: (name, level, message, details) => {
      if (enabled.includes(level)) written.push([name, level, message, ...details]);
    },
  };
  return { written, value };
}

describe("Log", () => {
  it("writes each level's lines under its name, with their details", () => {
    const { written, value } = sink(["ERROR", "WARN", "INFO", "DEBUG", "TRACE"]);
    const log = new Log("Orders", value);
    log.error("e", 1);
    log.warn("w");
    log.info("i", { a: 1 });
    log.debug("d");
    log.trace("t");
    assert.deepEqual(written, [
      ["Orders", "ERROR", "e", 1],
      ["Orders", "WARN", "w"],
      ["Orders", "INFO", "i", { a: 1 }],
      ["Orders", "DEBUG", "d"],
      ["Orders", "TRACE", "t"],
    ]);
  });

  it("says whether a level is written", () => {
    const log = new Log("Orders", sink(["ERROR"]).value);
    assert.equal(log.isEnabled("ERROR"), true);
    assert.equal(log.isEnabled("INFO"), false);
  });

  it("gives the logger of a class, writing to the same place", () => {
    const { written, value } = sink(["INFO"]);
    class Billing {}
    const log = new Log("ROOT", value)[FOR_CLASS](Billing);
    assert.ok(log instanceof Log);
    assert.equal(log.name, "Billing");
    log.info("x");
    assert.deepEqual(written, [["Billing", "INFO", "x"]]);
  });

  it("never throws, whatever its sink does", () => {
    const log = new Log("x", {
      enabled: () => true,
      write: () => {
        throw new Error("disk full");
      },
    });
    assert.doesNotThrow(() => log.error("y"));
  });
});
