import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Command } from "../../../src/migrate/command/command.ts";
import { COMMANDS } from "../../../src/migrate/command/commands.ts";
import { decideFiles, withChangedUndos } from "../../../src/migrate/plan/file_decisions.ts";
import type { PlannedFile } from "../../../src/migrate/plan/planned_file.ts";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { propertyOptions } from "../../property.ts";
import { baselineMarkerPath } from "../../../src/migrate/plan/baseline_marker.ts";
import { inProgressMarkerPath } from "../../../src/migrate/plan/in_progress_marker.ts";
import { readVersionRecords } from "../../../src/migrate/plan/version_state.ts";

const file = (path: string, hash: string, extra: Partial<PlannedFile> = {}): PlannedFile => ({
  path,
  hash,
  runOnce: false,
  ...extra,
});

describe("decideFiles", () => {
  it("places missing records among the files by version order", () => {
    const decided = decideFiles(
      [file("1.0/a", "a"), file("1.10/c", "c")],
      new Map([["1.0/a", "a"], ["1.9/b", "b"], ["2.0/d", "d"]]),
      "status",
    );
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}`), [
      "1.0/a:skip",
      "1.9/b:missing",
      "1.10/c:apply",
      "2.0/d:missing",
    ]);
    assert.equal(decided[2].outOfOrder, "2.0/d", "a missing record still counts as applied");
  });

  it("renames to the first missing record of the checksum, by version order; baseline moves none", () => {
    const records = new Map([["9/old", "h"], ["10/old", "h"]]);
    const files = [file("a", "h"), file("b", "h"), file("c", "h")];
    const decided = decideFiles(files, records, "status");
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}:${f.renamedFrom ?? ""}`), [
      "a:rename:9/old",
      "b:rename:10/old",
      "c:apply:",
    ]);
    const baseline = decideFiles(files, records, "baseline");
    assert.deepEqual(baseline.map((f) => `${f.path}:${f.action}`), [
      "9/old:missing",
      "10/old:missing",
      "a:record",
      "b:record",
      "c:record",
    ]);
  });

  it("moves the record of a file that defines a resource only to a file of the same name", () => {
    // Its name is the resource's: renamed, it defines another one, which must be created.
    const records = new Map([["1.0/logs-template.json", "h"], ["1.0/seed.json", "s"]]);
    const decided = decideFiles(
      [
        file("1.1/events-template.json", "h", { resource: "template events" }),
        file("2.0/seed-users.json", "s"),
      ],
      records,
      "status",
    );
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}:${f.renamedFrom ?? ""}`), [
      "1.0/logs-template.json:missing:",
      "1.1/events-template.json:apply:",
      "2.0/seed-users.json:rename:1.0/seed.json",
    ]);
    const moved = decideFiles(
      [file("2.0/logs-template.json", "h", { resource: "template logs" })],
      records,
      "status",
    );
    assert.equal(moved[1].renamedFrom, "1.0/logs-template.json", "moved to another folder");
  });

  it("does not count a record this run moves away as applied: no file is out of order because of it", () => {
    const decided = decideFiles(
      [file("1.0/seed.json", "s"), file("2.0/new.json", "n")],
      new Map([["3.0/seed.json", "s"]]),
      "migrate",
    );
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}:${f.outOfOrder ?? ""}`), [
      "1.0/seed.json:rename:",
      "2.0/new.json:apply:",
    ]);
  });

  it("repair drops a missing record only when it sorts before the last file here, unless forced", () => {
    // An older checkout lacks the newest files: their records are not missing, only not here yet.
    const records = new Map([["V1", "a"], ["V2", "gone"], ["V3", "newer"]]);
    const files = [file("V1", "a"), file("V2b", "b")];
    assert.deepEqual(decideFiles(files, records, "repair").map((f) => `${f.path}:${f.action}`), [
      "V1:skip",
      "V2:drop",
      "V2b:apply",
      "V3:missing",
    ]);
    assert.deepEqual(
      decideFiles(files, records, "repair", true).map((f) => `${f.path}:${f.action}`),
      ["V1:skip", "V2:drop", "V2b:apply", "V3:drop"],
    );
  });

  it("applies a changed repeatable file again, even one that runs once, and never calls it late", () => {
    const records = new Map([["V1__t.sql", "t"], ["R__view.sql", "old"], ["R__same.sql", "s"]]);
    const files = [
      file("V1__t.sql", "t", { runOnce: true }),
      file("V2__new.sql", "n", { runOnce: true }),
      file("R__new.sql", "r", { runOnce: true }),
      file("R__same.sql", "s", { runOnce: true }),
      file("R__view.sql", "new", { runOnce: true }),
    ];
    const decided = decideFiles(files, records, "migrate");
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}:${f.outOfOrder ?? ""}`), [
      "V1__t.sql:skip:",
      "V2__new.sql:apply:",
      "R__new.sql:apply:",
      "R__same.sql:skip:",
      "R__view.sql:reapply:",
    ]);
    // A record of a repeatable file gone from the checkout sorts among the repeatables. It has no
    // version, so none is a newer checkout's: repair drops it wherever its name sorts.
    const gone = decideFiles(files.slice(0, 2), records, "repair");
    assert.deepEqual(gone.map((f) => `${f.path}:${f.action}`), [
      "V1__t.sql:skip",
      "V2__new.sql:apply",
      "R__same.sql:drop",
      "R__view.sql:drop",
    ]);
  });

  it("a missing repeatable is missing wherever its name sorts: repair drops it without force", () => {
    const records = new Map([["V1__t.sql", "t"], ["R__a.sql", "a"], ["R__b.sql", "b"]]);
    const files = [file("V1__t.sql", "t", { runOnce: true }), file("R__a.sql", "a")];
    for (const command of ["status", "migrate"] as const) {
      assert.deepEqual(
        decideFiles(files, records, command).map((f) => `${f.path}:${f.action}`),
        ["V1__t.sql:skip", "R__a.sql:skip", "R__b.sql:missing"],
        command,
      );
    }
    assert.deepEqual(
      decideFiles(files, records, "repair").map((f) => `${f.path}:${f.action}`),
      ["V1__t.sql:skip", "R__a.sql:skip", "R__b.sql:drop"],
    );
  });

  it("leaves the files above a target version as they are; repeatable files run as always", () => {
    const files = [
      file("V1__a.sql", "a", { runOnce: true }),
      file("V1.1__b.sql", "b", { runOnce: true }),
      file("release-1.0.1/c.json", "c"),
      file("release-2/d.json", "d2"),
      file("V2__e.sql", "e", { runOnce: true }),
      file("R__view.sql", "v", { runOnce: true }),
    ];
    const records = new Map([["release-2/d.json", "d1"]]);
    const decided = (command: "migrate" | "baseline", target: string) =>
      decideFiles(files, records, command, true, target).map((f) => `${f.path}:${f.action}`);
    assert.deepEqual(decided("migrate", "1.0"), [
      "V1__a.sql:apply",
      "V1.1__b.sql:above-target",
      "release-1.0.1/c.json:above-target",
      "release-2/d.json:above-target",
      "V2__e.sql:above-target",
      "R__view.sql:apply",
    ]);
    assert.deepEqual(decided("baseline", "1.1.0"), [
      "V1__a.sql:record",
      "V1.1__b.sql:record",
      "release-1.0.1/c.json:record",
      "release-2/d.json:above-target",
      "V2__e.sql:above-target",
      // Flyway's baseline leaves repeatable files to the next migrate.
      "R__view.sql:apply",
    ]);
  });

  it("baseline leaves repeatable files pending, as Flyway's does: they run at the next migrate", () => {
    const files = [
      file("V1__a.sql", "a", { runOnce: true }),
      file("R__view.sql", "v", { runOnce: true }),
      file("sub/R__fn.json", "f"),
    ];
    const decided = (records: Map<string, string>, force: boolean) =>
      decideFiles(files, records, "baseline", force).map((f) => `${f.path}:${f.action}`);
    assert.deepEqual(decided(new Map(), false), [
      "V1__a.sql:record",
      "R__view.sql:apply",
      "sub/R__fn.json:apply",
    ]);
    // --force over records: a changed repeatable is left to run again, not recorded as it is.
    const records = new Map([["V1__a.sql", "old"], ["R__view.sql", "old"]]);
    assert.deepEqual(decided(records, true), [
      "V1__a.sql:record",
      "R__view.sql:reapply",
      "sub/R__fn.json:apply",
    ]);
    assert.equal(COMMANDS.baseline.isWork("apply") || COMMANDS.baseline.isWork("reapply"), false);
  });

  it("says which earlier file defines the same resource", () => {
    const decided = decideFiles(
      [
        file("1/x", "1", { resource: "template x" }),
        file("2/y", "2", { resource: "template y" }),
        file("3/x", "3", { resource: "template x" }),
        file("4/x", "4", { resource: "index x" }),
      ],
      new Map(),
      "migrate",
    );
    assert.deepEqual(decided.map((f) => f.sameResourceAs), [
      undefined,
      undefined,
      "1/x",
      undefined,
    ]);
  });

  it("reads the marks of a baseline and of files in progress as no file: never missing, never an undo", () => {
    const files = [file("V1__a.sql", "a"), file("V2__b.sql", "b"), file("V3__c.sql", "c")];
    const records = new Map([
      ["V1__a.sql", "a"],
      ["V2__b.sql", "b"],
      ["V3__c.sql", "c"],
      [baselineMarkerPath("2"), "b"],
      // A mark of an undo in a folder: its last segment reads as an undo file's name.
      [inProgressMarkerPath("sub/U3__c.sql"), "u3"],
    ]);
    for (const command of ["status", "repair", "migrate"] as const) {
      assert.deepEqual(
        decideFiles(files, records, command).map((f) =>
          `${f.path}:${f.action}${f.baselined ? ":baselined" : ""}`
        ),
        ["V1__a.sql:skip:baselined", "V2__b.sql:skip:baselined", "V3__c.sql:skip"],
      );
    }
    assert.equal(readVersionRecords(records.keys()).stateOf("V3__c.sql", "3"), "applied");
  });

  it("reads a version with an undo record beside its record as undone: pending again to migrate", () => {
    const files = [file("V1__a.sql", "a"), file("V2__b.sql", "b"), file("V3__c.sql", "c")];
    // V3 was edited after it was undone: still undone, applied again as it now is.
    const records = new Map([
      ["V1__a.sql", "a"],
      ["V2__b.sql", "b"],
      ["V3__c.sql", "old"],
      ["U2__b.sql", "u2"],
      ["sub/U3__c.sql", "u3"],
    ]);
    const show = (command: Command, target?: string) =>
      decideFiles(files, records, command, false, target).map((f) =>
        `${f.path}:${f.action}${f.outOfOrder ? `<${f.outOfOrder}` : ""}`
      );
    // Undo records are history: never missing, never dropped by repair.
    assert.deepEqual(show("status"), ["V1__a.sql:skip", "V2__b.sql:undone", "V3__c.sql:undone"]);
    assert.deepEqual(show("repair"), ["V1__a.sql:skip", "V2__b.sql:undone", "V3__c.sql:undone"]);
    // Not late: an undone version is no applied one for the order of the others.
    assert.deepEqual(show("migrate"), ["V1__a.sql:skip", "V2__b.sql:apply", "V3__c.sql:apply"]);
    assert.deepEqual(show("migrate", "2"), [
      "V1__a.sql:skip",
      "V2__b.sql:apply",
      "V3__c.sql:above-target",
    ]);
  });

  it("an undone version below an applied one is late; an undo record never takes a rename", () => {
    const records = new Map([["V1__a.sql", "a"], ["V2__b.sql", "b"], ["U1__a.sql", "b"]]);
    const decided = decideFiles(
      [file("V1__a.sql", "a"), file("V2__b.sql", "b"), file("V3__x.sql", "b")],
      records,
      "migrate",
    );
    assert.deepEqual(decided.map((f) => `${f.path}:${f.action}:${f.outOfOrder ?? ""}`), [
      "V1__a.sql:apply:V2__b.sql",
      "V2__b.sql:skip:",
      "V3__x.sql:apply:",
    ]);
  });

  it("property: every file once, every record once (its file, a rename, or missing), in version order", () => {
    const path = fc.stringMatching(/^[1-3](\.[0-9]{1,2})?\/[a-c]$/);
    const hash = fc.constantFrom("h1", "h2", "h3", "h4");
    const command = fc.constantFrom<Command>("migrate", "status", "validate", "baseline", "repair");
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(path, hash, fc.boolean()), { selector: ([p]) => p, maxLength: 8 }),
        fc.uniqueArray(fc.tuple(path, hash), { selector: ([p]) => p, maxLength: 8 }),
        command,
        (fileSpecs, recordSpecs, command) => {
          const files = fileSpecs.map(([p, h, runOnce]) => file(p, h, { runOnce }))
            .sort((a, b) => compareVersionPaths(a.path, b.path));
          const records = new Map(recordSpecs);
          const decided = decideFiles(files, records, command);
          const paths = decided.map((f) => f.path);
          assert.deepEqual(paths, [...paths].sort(compareVersionPaths), "run order");
          assert.equal(new Set(paths).size, paths.length, "nothing twice");
          for (const f of files) assert.ok(paths.includes(f.path), `file ${f.path} listed`);
          const moved = decided.flatMap((f) => f.renamedFrom === undefined ? [] : [f.renamedFrom]);
          for (const [p] of records) {
            const listed = paths.includes(p) ? 1 : 0;
            const renamed = moved.filter((m) => m === p).length;
            assert.equal(listed + renamed, 1, `record ${p}: listed or moved, once`);
          }
          for (const f of decided) {
            const source = files.find((x) => x.path === f.path);
            const recorded = records.get(f.path);
            if (f.action === "rename") {
              assert.equal(recorded, undefined);
              assert.equal(records.get(f.renamedFrom!), source!.hash);
              assert.ok(
                !files.some((x) => x.path === f.renamedFrom),
                "moved from a missing record",
              );
            }
            if (f.action === "skip") assert.equal(recorded, source!.hash);
            if (f.action === "changed") assert.ok(source!.runOnce && recorded !== source!.hash);
            if (f.action === "reapply") assert.ok(!source!.runOnce && recorded !== source!.hash);
            if (f.action === "missing" || f.action === "drop") assert.equal(source, undefined);
            // Only the writing commands have work, and status/validate see only states.
            if (command === "status" || command === "validate") {
              assert.ok(!COMMANDS[command].isWork(f.action));
              assert.ok(!["record", "drop"].includes(f.action));
            }
          }
        },
      ),
      propertyOptions(300),
    );
  });

  it("property: repeatable files and --target against a model of Flyway's rules", () => {
    // One path per version, so that no two files share one, and three repeatables.
    const versioned = [1, 2, 3, 4, 5, 6].map((n) => `V${n}__d${n}.sql`);
    const repeatables = ["R__a.sql", "R__b.sql", "R__c.sql"];
    const path = fc.constantFrom(...versioned, ...repeatables);
    const hash = fc.constantFrom("h1", "h2");
    const versionOf = (p: string) => Number(/^V(\d)__/.exec(p)?.[1]);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(path, hash), { selector: ([p]) => p, maxLength: 9 }),
        fc.uniqueArray(fc.tuple(path, hash), { selector: ([p]) => p, maxLength: 9 }),
        fc.constantFrom<Command>("migrate", "status", "repair"),
        fc.option(fc.integer({ min: 0, max: 7 }), { nil: undefined }),
        fc.boolean(),
        (fileSpecs, recordSpecs, command, target, force) => {
          const files = fileSpecs.map(([p, h]) => file(p, h, { runOnce: true }))
            .sort((a, b) => compareVersionPaths(a.path, b.path));
          const records = new Map(recordSpecs);
          const onDisk = new Set(files.map((f) => f.path));
          const lastVersion = Math.max(
            0,
            ...files.filter((f) => f.path.startsWith("V")).map((f) => versionOf(f.path)),
          );
          const decided = decideFiles(
            files,
            records,
            command,
            force,
            command === "migrate" && target !== undefined ? String(target) : undefined,
          );
          const paths = decided.map((f) => f.path);
          const firstRepeatable = paths.findIndex((p) => p.startsWith("R__"));
          if (firstRepeatable >= 0) {
            assert.ok(paths.slice(firstRepeatable).every((p) => p.startsWith("R__")), "R__ last");
          }
          for (const f of decided) {
            const repeatable = f.path.startsWith("R__");
            const recorded = records.get(f.path);
            const own = files.find((x) => x.path === f.path)?.hash;
            if (repeatable) {
              assert.ok(f.action !== "changed" && f.outOfOrder === undefined, f.path);
              assert.ok(f.action !== "above-target", "a repeatable has no version");
              if (own !== undefined && recorded !== undefined && recorded !== own) {
                assert.equal(f.action, command === "repair" ? "record" : "reapply", f.path);
              }
            }
            if (!onDisk.has(f.path) && f.renamedFrom === undefined) {
              // A record without its file: repair drops it, but not a versioned one newer than
              // every versioned file here, unless forced.
              const newer = !repeatable && versionOf(f.path) > lastVersion;
              const expected = command === "repair" && (force || !newer) ? "drop" : "missing";
              assert.equal(f.action, expected, `${f.path} (${command}, force ${force})`);
            }
            if (
              command === "migrate" && target !== undefined && !repeatable && onDisk.has(f.path)
            ) {
              const pending = recorded === undefined || recorded !== own;
              if (versionOf(f.path) > target && pending && f.action !== "rename") {
                assert.equal(f.action, "above-target", f.path);
              }
              if (versionOf(f.path) <= target) assert.notEqual(f.action, "above-target");
            }
          }
        },
      ),
      propertyOptions(500),
    );
  });
});

describe("withChangedUndos", () => {
  it("property: lists each undo file whose record holds another checksum once, after its V file, as a changed file", () => {
    // Its undo file: none, not run (no undo record), run as it is, or edited since it ran.
    const version = fc.record({ undo: fc.constantFrom("none", "unrun", "same", "edited") });
    fc.assert(
      fc.property(
        fc.array(version, { minLength: 1, maxLength: 6 }),
        fc.constantFrom<Command>("status", "migrate", "undo", "repair", "validate"),
        (versions, command) => {
          const files = versions.map((_, i) => file(`V${i + 1}__f.sql`, `v${i + 1}`));
          const undos = versions.flatMap((v, i) =>
            v.undo === "none" ? [] : [file(`U${i + 1}__f.sql`, `u${i + 1}`)]
          );
          const records = new Map(files.map((f) => [f.path, f.hash]));
          versions.forEach((v, i) => {
            if (v.undo === "same") records.set(`U${i + 1}__f.sql`, `u${i + 1}`);
            if (v.undo === "edited") records.set(`U${i + 1}__f.sql`, "old");
          });
          const decided = decideFiles(files, records, command);
          const shown = withChangedUndos(decided, undos, records, command);
          const expected = versions.flatMap((v, i) => [
            decided[i],
            ...(v.undo === "edited"
              ? [{ path: `U${i + 1}__f.sql`, action: COMMANDS[command].decide("changed", false) }]
              : []),
          ]);
          assert.deepEqual(shown, expected);
        },
      ),
      propertyOptions(),
    );
  });
});
