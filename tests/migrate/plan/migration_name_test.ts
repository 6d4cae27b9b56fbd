import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkMigrationNames,
  compareVersions,
  fileVersion,
  readMigrationName,
  sameVersion,
} from "../../../src/migrate/plan/migration_name.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { refused } from "./refused_names.ts";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { propertyOptions } from "../../property.ts";

// Flyway's own cases, as a table: flyway/flyway, flyway-core/src/test/java/org/flywaydb/core/api/
// MigrationVersionSmallTest.java (versions, written here as `V<version>__x.sql` file names).
describe("Flyway's MigrationVersionSmallTest, as file names", () => {
  const equal: [string, string][] = [
    ["1", "1.0"], // compareTo
    ["1.1", "1.1.0.0"], // compareTo
    ["1.2.3.3", "1.2.3.3"], // testEquals
    ["1.0", "001.0"], // leadingZeroes
    ["1.00", "1"], // trailingZeroes
    ["0.0", "0"], // zeros
  ];
  for (const [a, b] of equal) {
    it(`${a} and ${b} are one version: two files of it are refused`, () => {
      assert.equal(sameVersion(a, b), true);
      refused(
        [`V${a}__first.sql`, `V${b}__second.sql`],
        `V${b}__second.sql`,
        /version .* as V.* has: two files of one version/,
      );
    });
  }

  const ordered: [string, string][] = [
    ["1", "1.1"], // compareTo
    ["1.1", "1.1.0.1"], // compareTo
    ["1.1.0.1", "2"], // compareTo
    ["201004171859", "201004180000"], // compareTo
    ["1.2.3.3", "1.2.13.3"], // testNumber
    ["1.2.1", "1.2.1.3"], // testLength1, testLength2
  ];
  for (const [a, b] of ordered) {
    it(`${a} is an earlier version than ${b}`, () => {
      assert.equal(sameVersion(a, b), false);
      assert.doesNotThrow(() => checkMigrationNames([`V${a}__a.sql`, `V${b}__b.sql`]));
    });
  }

  // doubleDot, dot, startDot, endDot, dash, alphaNumeric
  for (const bad of ["1..1", ".", ".1", "1.", "1.2.1-3", "1.2.1a-3"]) {
    it(`refuses the version ${bad}`, () => {
      refused([`V${bad}__x.sql`], `V${bad}__x.sql`, /is not a version/);
    });
  }

  it("letters: a name with a letter after its V is no version to Thaw, but any other name", () => {
    // Flyway refuses `Vabc1.0__x.sql`; Thaw takes names of every form, and `Vacation__plan.json`
    // is one: only a V followed by a digit, `.` or `_` (or `__`) is read as Flyway's form.
    assert.deepEqual(readMigrationName("Vabc1.0__x.sql"), { kind: "other" });
  });

  it("keeps a version longer than any number type (testWouldOverflowLong)", () => {
    const raw = "9999999999999999999999999999999999.8888888231231231231231298797298789132.22";
    const name = readMigrationName(`V${raw}__x.sql`);
    assert.deepEqual(name, { kind: "versioned", version: raw, description: "x" });
    assert.equal(sameVersion(raw, `${raw}.0`), true);
    assert.equal(sameVersion(raw, raw.replace(/2$/, "3")), false);
  });
});

// flyway/flyway, flyway-core/src/test/java/org/flywaydb/core/internal/resolver/
// MigrationInfoHelperSmallTest.java, with Flyway's default prefixes (V, R), separator (__) and
// suffix: the cases with a custom prefix or separator have no counterpart in Thaw.
describe("Flyway's MigrationInfoHelperSmallTest", () => {
  it("reads a repeatable name, and refuses one with a version (repeatableMigrationVersion)", () => {
    assert.deepEqual(readMigrationName("R__EmailAxel.sql"), {
      kind: "repeatable",
      description: "EmailAxel",
    });
    refused(["R1.0__EmailAxel.sql"], "R1.0__EmailAxel.sql", /repeatable .* has no version/);
  });

  it("refuses an undo file (U<version>__) as a migration: only undo runs it", () => {
    refused(["V1__a.sql", "U1__a.sql"], "U1__a.sql", /an undo file .* run only by undo/);
    refused(["U1.1__Drop_users.sql"], "U1.1__Drop_users.sql", /an undo file/);
    // Not Flyway's undo form (no version): any other name, as before.
    for (const name of ["Update__prices.json", "U__x.sql", "U2F_keys__init.sql", "U8g__x.sql"]) {
      assert.deepEqual(readMigrationName(name), { kind: "other" }, name);
    }
  });

  it("refuses a versioned name without a version (versionedMigrationNoVersion)", () => {
    refused(["V__EmailAxel.sql"], "V__EmailAxel.sql", /has no version/);
  });

  it("reads 9_4 as 9.4 (extractSchemaVersionDefaults), leading zeroes kept as written", () => {
    assert.deepEqual(readMigrationName("V9_4__EmailAxel.sql"), {
      kind: "versioned",
      version: "9_4",
      description: "EmailAxel",
    });
    assert.equal(sameVersion("9_4", "9.4"), true);
    assert.equal(sameVersion("009_4", "9.4"), true); // extractSchemaVersionWithLeadingZeroes
    refused(["V9_4__a.sql", "V9.4__b.sql"], "V9.4__b.sql", /version 9\.4, as V9_4__a\.sql has/);
  });

  it("refuses a version that starts with a separator (...WithLeadingUnderscoreAndPrefix)", () => {
    refused(["V_8_0__Description.sql"], "V_8_0__Description.sql", /is not a version/);
  });
});

describe("readMigrationName", () => {
  it("leaves every other name as it is: ordered by its path, as before", () => {
    for (
      const name of [
        "001_init.sql",
        "1.0.json",
        "Vacation__plan.json", // not V followed by a version
        "V1-init.sql", // no __
        "Release__notes.json",
        "logs-template.json",
      ]
    ) {
      assert.deepEqual(readMigrationName(name), { kind: "other" }, name);
    }
  });

  it("reads the file name only, in any folder", () => {
    assert.deepEqual(readMigrationName("release-1.0/V2__x.sql").kind, "versioned");
    assert.deepEqual(readMigrationName("V2__dir/a.sql").kind, "other");
  });
});

describe("versions for --target", () => {
  it("compares as Flyway's MigrationVersion does", () => {
    assert.equal(compareVersions("1", "1.0"), 0);
    assert.ok(compareVersions("1", "1.0.1") < 0);
    assert.ok(compareVersions("1.0.1", "1.1") < 0);
    assert.ok(compareVersions("1.2.13.3", "1.2.3.3") > 0);
    assert.ok(compareVersions("99999999999999999999", "100000000000000000000") < 0);
    assert.equal(compareVersions("009_4", "9.4"), 0);
  });

  it("takes a file's version from its V name, else from the first folder or name with one", () => {
    const versions = [
      "V2_1__x.sql",
      "release-1.0/V9__y.sql",
      "release-1.0/users.json",
      "1.0.1.json",
    ]
      .map(fileVersion);
    assert.deepEqual(versions, ["2_1", "9", "1.0", "1.0.1"]);
    assert.equal(fileVersion("R__view.sql"), undefined);
    assert.equal(fileVersion("logs-template.json"), undefined);
  });

  it("reads a folder's digits as a version only where the name starts with it, or after a v or a separator", () => {
    const versions = [
      "oauth2/001_init.sql",
      "s3-export/010_x.json",
      "e2e/2.1-users.json",
      "v1.2/users.json",
      "release_3/users.json",
      "2024-01-05 fix/x.sql",
      "2fa/004_keys.sql",
    ].map(fileVersion);
    assert.deepEqual(versions, ["001", "010", "2.1", "1.2", "3", "2024", "004"]);
  });

  it("refuses a target that would split the run order: a file at or below it after one above it", () => {
    // Run order is by path: V2__a.sql, then archive/V0_5__old.sql. With --target 1, V2 would be
    // left and V0.5 run after it, so the next migrate would find V2 late.
    const paths = ["V1__init.sql", "V2__a.sql", "archive/V0_5__old.sql", "R__v.sql"]
      .sort(compareVersionPaths);
    assert.deepEqual(paths, ["V1__init.sql", "V2__a.sql", "archive/V0_5__old.sql", "R__v.sql"]);
    assert.throws(
      () => checkMigrationNames(paths, "1"),
      (error: unknown) =>
        error instanceof MigrationFileError && error.file === "archive/V0_5__old.sql" &&
        /runs after V2__a\.sql, which is above 1/.test(error.message),
    );
    assert.doesNotThrow(() => checkMigrationNames(paths, "2"));
    assert.doesNotThrow(() => checkMigrationNames(paths));
  });

  it("property: under a target, the files above it are the last of the run order, or the names are refused", () => {
    const segment = fc.oneof(
      fc.integer({ min: 0, max: 9 }).map((n) => `${n}.x`),
      fc.constantFrom("a", "b", "release-2", "oauth2"),
    );
    const name = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 9 }), fc.constantFrom("a", "b")).map(([n, d]) =>
        `V${n}__${d}.sql`
      ),
      fc.constantFrom("R__v.sql", "R__w.sql"),
    );
    const path = fc.tuple(fc.array(segment, { maxLength: 2 }), name).map(([folders, n]) =>
      [...folders, n].join("/")
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(path, { maxLength: 8 }),
        fc.integer({ min: 0, max: 9 }),
        (unsorted, target) => {
          const paths = [...unsorted].sort(compareVersionPaths);
          try {
            checkMigrationNames(paths, String(target));
          } catch (error) {
            if (error instanceof MigrationFileError) return;
            throw error;
          }
          const above = paths.filter((p) => !p.includes("R__")).map((p) =>
            compareVersions(fileVersion(p)!, String(target)) > 0
          );
          assert.deepEqual(above, [...above].sort(), `${paths.join(", ")} at ${target}`);
        },
      ),
      propertyOptions(500),
    );
  });

  it("refuses, under a target, a file with no version to place, but not a repeatable one", () => {
    assert.doesNotThrow(() => checkMigrationNames(["V1__a.sql", "R__v.sql"], "1"));
    assert.doesNotThrow(() => checkMigrationNames(["logs-template.json"]));
    assert.throws(
      () => checkMigrationNames(["V1__a.sql", "logs-template.json"], "1"),
      (error: unknown) =>
        error instanceof MigrationFileError && error.file === "logs-template.json" &&
        /has no version in its path/.test(error.message),
    );
  });

  it("property: agrees with comparing the numbers, a missing one read as 0", () => {
    const version = fc.array(fc.nat({ max: 12 }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(version, version, (x, y) => {
        let model = 0;
        for (let i = 0; i < Math.max(x.length, y.length) && model === 0; i++) {
          model = Math.sign((x[i] ?? 0) - (y[i] ?? 0));
        }
        assert.equal(Math.sign(compareVersions(x.join("."), y.join("_"))), model, `${x} ${y}`);
      }),
      propertyOptions(500),
    );
  });

  it("property: agrees with big numbers, zero-padded, joined by . or _", () => {
    // Parts past 2^53, each written with leading zeros, separators mixed.
    const part = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.nat({ max: 3 }));
    const version = fc.array(part, { minLength: 1, maxLength: 4 });
    const write = (v: [bigint, number][], seps: boolean[]) =>
      v.map(([n, zeros], i) => (i === 0 ? "" : seps[i] ? "_" : ".") + "0".repeat(zeros) + n)
        .join("");
    fc.assert(
      fc.property(version, version, fc.array(fc.boolean(), { minLength: 4 }), (x, y, seps) => {
        let model = 0;
        for (let i = 0; i < Math.max(x.length, y.length) && model === 0; i++) {
          const [p, q] = [x[i]?.[0] ?? 0n, y[i]?.[0] ?? 0n];
          model = p === q ? 0 : p < q ? -1 : 1;
        }
        const [a, b] = [write(x, seps), write(y, seps)];
        assert.equal(Math.sign(compareVersions(a, b)), model, `${a} ${b}`);
        assert.equal(sameVersion(a, b), model === 0, `${a} ${b}`);
      }),
      propertyOptions(500),
    );
  });
});

describe("checkMigrationNames", () => {
  it("takes one version in two connections' folders, and files without versions", () => {
    assert.doesNotThrow(() =>
      checkMigrationNames(["V1__a.sql", "V1.1__b.sql", "R__view.sql", "x.sql", "y/1.0.sql"])
    );
  });

  it("refuses one version in two folders of one connection", () => {
    refused(["a/V2__x.sql", "b/V2.0__y.sql"], "b/V2.0__y.sql", /as a\/V2__x\.sql has/);
  });

  it("refuses one repeatable with two suffixes in one folder, and takes it in two folders", () => {
    refused(
      ["R__views.sql", "R__views.ts"],
      "R__views.ts",
      /is the repeatable file views, as R__views\.sql is/,
    );
    refused(["a/R__x.js", "a/R__x.sql"], "a/R__x.sql", /as a\/R__x\.js is/);
    assert.doesNotThrow(() =>
      checkMigrationNames(["a/R__views.sql", "b/R__views.sql", "R__views2.sql"])
    );
  });

  const version = fc.array(fc.oneof(fc.nat({ max: 2 }), fc.nat({ max: 99 })), {
    minLength: 1,
    maxLength: 4,
  });
  const written = (parts: number[], pad: number[], separator: string) =>
    parts.map((p, i) => "0".repeat(pad[i % pad.length]) + p).join(separator);
  const value = (parts: number[]) => {
    const trimmed = [...parts];
    while (trimmed.length > 0 && trimmed[trimmed.length - 1] === 0) trimmed.pop();
    return trimmed.join(".");
  };

  it("property: two versions are one when their numbers are, trailing zeros and padding aside", () => {
    fc.assert(
      fc.property(
        version,
        version,
        fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(".", "_"),
        fc.constantFrom(".", "_"),
        (x, y, pad, sx, sy) => {
          const a = written(x, pad, sx), b = written(y, [0], sy);
          assert.equal(sameVersion(a, b), value(x) === value(y), `${a} ${b}`);
          const check = () => checkMigrationNames([`V${a}__a.sql`, `V${b}__b.sql`]);
          if (value(x) === value(y)) assert.throws(check, MigrationFileError);
          else assert.doesNotThrow(check);
        },
      ),
      propertyOptions(500),
    );
  });
});
