// The rules of each command (src/migrate/command/): what each file state becomes, what is work,
// which options each takes; pure, checked as properties over every state.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { FileState } from "../../../src/migrate/command/command.ts";
import { COMMANDS, isCommand } from "../../../src/migrate/command/commands.ts";
import { propertyOptions } from "../../property.ts";
import { ACTIONS } from "../report_shape.ts";

const STATES: FileState[] = [
  "apply",
  "skip",
  "reapply",
  "changed",
  "missing",
  "rename",
  "earlier-hash",
  "missing-after-files",
  "above-target",
];
const all = Object.values(COMMANDS);

describe("the commands' rules", () => {
  it("property: a command that does not write has no work, and one that writes has some", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...all),
        fc.constantFrom(...STATES),
        fc.boolean(),
        (c, s, force) => {
          const action = c.decide(s, force);
          assert.ok(ACTIONS.includes(action), action);
          if (!c.writes) assert.equal(c.isWork(action), false, `${c.name} ${s}`);
        },
      ),
      propertyOptions(200),
    );
    for (const c of all.filter((c) => c.writes)) {
      assert.ok(STATES.some((s) => c.isWork(c.decide(s, false))), c.name);
    }
  });

  it("only repair writes for an unchanged file of an earlier hash; none runs an unchanged file", () => {
    for (const c of all) {
      assert.equal(c.isWork(c.decide("skip", true)), false, c.name);
      assert.equal(c.isWork(c.decide("earlier-hash", false)), c.name === "repair", c.name);
    }
  });

  it("never runs a changed run-once file: migrate reports it, baseline and repair record it", () => {
    assert.equal(COMMANDS.migrate.decide("changed", false), "changed");
    assert.equal(COMMANDS.migrate.isWork("changed"), false);
    assert.equal(COMMANDS.baseline.decide("changed", false), "record");
    assert.equal(COMMANDS.repair.decide("changed", false), "record");
  });

  it("repair drops a record sorting after every file only with --force; baseline moves none", () => {
    assert.equal(COMMANDS.repair.decide("missing-after-files", false), "missing");
    assert.equal(COMMANDS.repair.decide("missing-after-files", true), "drop");
    assert.equal(COMMANDS.repair.decide("missing", false), "drop");
    assert.equal(COMMANDS.baseline.renames, false);
    assert.ok(all.filter((c) => c.name !== "baseline").every((c) => c.renames));
  });

  it("validate alone fails a run that went through; unlock alone works without files", () => {
    assert.deepEqual(all.filter((c) => c.verdict).map((c) => c.name), ["validate"]);
    assert.deepEqual(all.filter((c) => c.alone).map((c) => c.name), ["unlock"]);
    assert.deepEqual(all.filter((c) => c.listsUnknown).map((c) => c.name), ["status", "validate"]);
    assert.ok(isCommand("repair") && !isCommand("toString") && !isCommand("constructor"));
  });
});
