import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { LevelTable } from "../../src/logging/level_table.ts";
import { LOG_LEVELS, type LogLevel } from "../../src/logging/logging_system.ts";
import { propertyOptions } from "../property.ts";

describe("LevelTable", () => {
  it("takes a logger's own level, else its nearest configured dotted parent's, else ROOT's", () => {
    const table = new LevelTable(
      new Map<string, LogLevel>([["org.example", "DEBUG"], ["web", "WARN"]]),
    );
    assert.equal(table.effectiveLevel("org.example"), "DEBUG");
    assert.equal(table.effectiveLevel("org.example.web.Router"), "DEBUG");
    assert.equal(table.effectiveLevel("org.examples"), "INFO");
    assert.equal(table.effectiveLevel("web"), "WARN");
    assert.equal(table.effectiveLevel("UserService"), "INFO");
    assert.equal(table.effectiveLevel("ROOT"), "INFO");
  });

  it("lets through the lines at or above the effective level, none at OFF", () => {
    const table = new LevelTable(new Map<string, LogLevel>([["ROOT", "WARN"], ["quiet", "OFF"]]));
    assert.deepEqual(
      LOG_LEVELS.filter((level) => table.enabled("any", level)),
      ["ERROR", "WARN"],
    );
    assert.deepEqual(LOG_LEVELS.filter((level) => table.enabled("quiet.child", level)), []);
  });

  it("takes a change from the next lookup, and clears to the parent's", () => {
    const table = new LevelTable();
    assert.equal(table.enabled("a.b", "DEBUG"), false);
    table.setLevel("a", "DEBUG");
    assert.equal(table.enabled("a.b", "DEBUG"), true);
    table.setLevel("a.b", "ERROR");
    assert.equal(table.enabled("a.b", "WARN"), false);
    table.setLevel("a.b", undefined);
    assert.equal(table.effectiveLevel("a.b"), "DEBUG");
    table.setLevel("root", "TRACE");
    table.setLevel("a", undefined);
    assert.equal(table.effectiveLevel("a.b"), "TRACE");
    // ROOT cleared is ROOT at its default.
    table.setLevel("ROOT", undefined);
    assert.equal(table.effectiveLevel("a.b"), "INFO");
  });

  it("lists ROOT first, then every logger configured or made, sorted", () => {
    const table = new LevelTable(new Map<string, LogLevel>([["zeta", "WARN"], ["root", "ERROR"]]));
    table.made("UserService");
    table.made("thaw");
    assert.deepEqual(table.loggers(), [
      { name: "ROOT", configuredLevel: "ERROR", effectiveLevel: "ERROR" },
      { name: "UserService", effectiveLevel: "ERROR" },
      { name: "thaw", effectiveLevel: "ERROR" },
      { name: "zeta", configuredLevel: "WARN", effectiveLevel: "WARN" },
    ]);
  });

  it("refuses a level that is none, and an empty name", () => {
    const table = new LevelTable();
    assert.throws(() => table.setLevel("a", "LOUD" as LogLevel), /the levels are OFF, ERROR/);
    assert.throws(() => table.setLevel("", "INFO"), TypeError);
  });

  it("finds the level a reference model finds, through any sequence of changes", () => {
    const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`LevelTable property: FC_SEED=${seed}`);
    const segment = fc.constantFrom("a", "b", "c");
    const name = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."));
    const level = fc.option(fc.constantFrom(...LOG_LEVELS), { nil: undefined });
    const step = fc.record({ name: fc.oneof(name, fc.constant("ROOT")), level, ask: name });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const table = new LevelTable();
        const model = new Map<string, LogLevel>([["ROOT", "INFO"]]);
        // The model: walk every prefix of the name, longest first.
        const expected = (asked: string): LogLevel => {
          const parts = asked.split(".");
          for (let n = parts.length; n > 0; n--) {
            const found = model.get(parts.slice(0, n).join("."));
            if (found !== undefined) return found;
          }
          return model.get("ROOT")!;
        };
        for (const { name, level, ask } of steps) {
          table.setLevel(name, level);
          if (level !== undefined) model.set(name, level);
          else if (name === "ROOT") model.set("ROOT", "INFO");
          else model.delete(name);
          assert.equal(table.effectiveLevel(ask), expected(ask));
        }
      }),
      { ...propertyOptions(200), seed },
    );
  });
});
