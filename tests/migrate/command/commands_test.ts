// The rules of each command (src/migrate/command/): what each file state becomes, what is work,
// which options each takes; pure, checked as properties over every state.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { FileState } from "../../../src/migrate/command/command.ts";
import { COMMANDS, isCommand } from "../../../src/migrate/command/commands.ts";
import { flywayRefusals } from "../../../src/migrate/command/command.ts";
import type { FileAction, FileReport } from "../../../src/migrate/run_report.ts";
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
  "undone",
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
    // Undo's work is its plan's (undo.ts), never a state's: it runs no file as found.
    for (const c of all.filter((c) => c.writes && c.name !== "undo")) {
      assert.ok(STATES.some((s) => c.isWork(c.decide(s, false))), c.name);
    }
    assert.ok(STATES.every((s) => !COMMANDS.undo.isWork(COMMANDS.undo.decide(s, false))));
  });

  it("only repair writes for an unchanged file of an earlier hash; none runs an unchanged file", () => {
    for (const c of all) {
      assert.equal(c.isWork(c.decide("skip", true)), false, c.name);
      assert.equal(c.isWork(c.decide("earlier-hash", false)), c.name === "repair", c.name);
    }
  });

  it("migrate applies an undone version again; the others leave it undone", () => {
    for (const c of all) {
      assert.equal(c.decide("undone", false), c.name === "migrate" ? "apply" : "undone", c.name);
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

describe("flywayRefusals: Flyway's validate-on-migrate over decided files", () => {
  const files = (...rows: [string, FileAction][]): FileReport[] =>
    rows.map(([path, action]) => ({ path, action }));

  it("refuses edited versioned files and missing ones, not repeatables or future records", () => {
    const decided = files(
      ["V1__a.sql", "changed"],
      ["V2__b-template.json", "reapply"],
      ["V3__gone.sql", "missing"],
      ["V4__c.sql", "skip"],
      ["V5__d.sql", "apply"],
      ["V9__newer.sql", "missing"],
      ["R__view.sql", "reapply"],
      ["R__zz_old.sql", "missing"],
    );
    // A repeatable has no version, so none is "future": a missing one is refused wherever it sorts.
    assert.deepEqual(flywayRefusals(decided).map((f) => f.path), [
      "V1__a.sql",
      "V2__b-template.json",
      "V3__gone.sql",
      "R__zz_old.sql",
    ]);
  });

  it("property: agrees with a model of Flyway's rule", () => {
    const action = fc.constantFrom<FileAction>("apply", "skip", "reapply", "changed", "missing");
    const row = fc.tuple(fc.boolean(), action);
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), (rows) => {
        const decided = files(
          ...rows.map(([repeatable, a], i): [string, FileAction] => [
            repeatable ? `R__${i}.sql` : `V${i + 1}__f.sql`,
            a,
          ]),
        );
        const expected = decided.filter((f, i) => {
          const repeatable = f.path.startsWith("R__");
          const later = decided.slice(i + 1).filter((g) => g.path.startsWith("R__") === repeatable);
          return f.action === "changed" ||
            (f.action === "reapply" && !repeatable) ||
            (f.action === "missing" && (repeatable || later.some((g) => g.action !== "missing")));
        });
        assert.deepEqual(flywayRefusals(decided), expected);
      }),
      propertyOptions(),
    );
  });
});
