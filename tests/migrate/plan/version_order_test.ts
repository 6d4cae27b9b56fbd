import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { propertyOptions } from "../../property.ts";

const sorted = (paths: string[]) => [...paths].sort(compareVersionPaths);

describe("compareVersionPaths", () => {
  it("sorts versions as people read them", () => {
    assert.deepEqual(sorted(["10.0", "2.0", "1.10", "1.9", "1.0.1", "1.0"]), [
      "1.0",
      "1.0.1",
      "1.9",
      "1.10",
      "2.0",
      "10.0",
    ]);
    // Flyway's names: a version's point releases come after it, whatever follows the version.
    assert.deepEqual(sorted(["V2__x.sql", "V1_1__patch.sql", "V1__init.sql", "V1.1__dot.sql"]), [
      "V1__init.sql",
      "V1.1__dot.sql",
      "V1_1__patch.sql",
      "V2__x.sql",
    ]);
    assert.deepEqual(sorted(["1.10.json", "1.0.1.json", "1.9.json", "1.0.json"]), [
      "1.0.json",
      "1.0.1.json",
      "1.9.json",
      "1.10.json",
    ]);
    // A name followed by text sorts where byte order put it, before the same name with a number.
    assert.deepEqual(sorted(["logs2-template.json", "logs-template.json", "a1", "a-1"]), [
      "a-1",
      "a1",
      "logs-template.json",
      "logs2-template.json",
    ]);
    assert.deepEqual(sorted(["V10__b.sql", "V2__a.sql", "V1_1__c.sql"]), [
      "V1_1__c.sql",
      "V2__a.sql",
      "V10__b.sql",
    ]);
  });

  it("compares folder by folder, so a version folder runs before its point releases", () => {
    assert.deepEqual(
      sorted([
        "release-1.10/a.json",
        "release-1.0.1/a.json",
        "release-1.9/a.json",
        "release-1.0/b.json",
      ]),
      ["release-1.0/b.json", "release-1.0.1/a.json", "release-1.9/a.json", "release-1.10/a.json"],
    );
    // A folder's files come before a file named like the folder with more after it.
    assert.ok(compareVersionPaths("a/x.json", "a.json") < 0);
  });

  it("runs repeatable files (R__) after every other file, in any folder, by their paths", () => {
    assert.deepEqual(
      sorted([
        "R__b_view.sql",
        "V2__x.sql",
        "sub/R__a.sql",
        "R__a_view.sql",
        "V1__init.sql",
        "z/1.sql",
      ]),
      ["V1__init.sql", "V2__x.sql", "z/1.sql", "R__a_view.sql", "R__b_view.sql", "sub/R__a.sql"],
    );
    // Only the file name says so: a folder named R__x is a folder like any other.
    assert.ok(compareVersionPaths("R__x/V1__a.sql", "V2__b.sql") < 0);
  });

  it("compares other characters by code point, not by UTF-16 unit", () => {
    // U+FF5E is one UTF-16 unit above a surrogate pair's first unit, but below it as a code point.
    assert.ok(compareVersionPaths("\uff5e", "\u{1f600}") < 0);
    assert.ok(compareVersionPaths("B.json", "a.json") < 0);
    assert.ok(compareVersionPaths("z.json", "é.json") < 0);
  });

  it("orders digit runs of any length by value, and equal values by code point", () => {
    assert.ok(compareVersionPaths("v99999999999999999999999", "v100000000000000000000000") < 0);
    assert.ok(compareVersionPaths("v1", "v01") > 0);
    assert.ok(compareVersionPaths("v01", "v1") < 0);
    assert.ok(compareVersionPaths("v01.x", "v1.y") < 0);
    assert.equal(compareVersionPaths("v1", "v1"), 0);
  });

  it("is consistent on every short path over a small alphabet (exhaustive)", () => {
    const alphabet = ["0", "1", "/", "a", ".", "_"];
    let all = [""];
    const paths: string[] = [];
    for (let length = 1; length <= 4; length++) {
      all = all.flatMap((p) => alphabet.map((c) => p + c));
      paths.push(...all);
    }
    const order = sorted(paths);
    for (let i = 0; i < order.length; i++) {
      for (let j = i + 1; j < order.length; j++) {
        if (compareVersionPaths(order[i], order[j]) >= 0) {
          assert.fail(`${order[i]} sorts before ${order[j]} but does not compare below it`);
        }
      }
    }
    // A cycle a version comparison once had: 01/b < 1 < 1/a < 01/b.
    const three = ["01/b", "1", "1/a"];
    assert.deepEqual(sorted(three), sorted([...three].reverse()));
  });

  const segment = fc.string({
    unit: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("0", "1", "2", "9", "00", "10") },
      { weight: 3, arbitrary: fc.constantFrom(".", "-", "_", "a", "B", "é", "!", "\u{1f600}") },
    ),
    minLength: 1,
    maxLength: 6,
  });
  const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join("/"));

  it("property: a total order (antisymmetric, transitive, equal only for the same path)", () => {
    fc.assert(
      fc.property(path, path, path, (a, b, c) => {
        const ab = Math.sign(compareVersionPaths(a, b));
        assert.equal(ab, 0 - Math.sign(compareVersionPaths(b, a)) || 0);
        assert.equal(ab === 0, a === b);
        if (ab <= 0 && compareVersionPaths(b, c) <= 0) {
          assert.ok(compareVersionPaths(a, c) <= 0, `${a} <= ${b} <= ${c}`);
        }
      }),
      propertyOptions(2000),
    );
  });

  it("property: agrees with numeric order on version-like names", () => {
    // Small numbers, so that one version is often a prefix of the other (1.0 and 1.0.1).
    const version = fc.array(fc.oneof(fc.nat({ max: 3 }), fc.nat({ max: 10_000 })), {
      minLength: 1,
      maxLength: 4,
    });
    const numeric = (x: number[], y: number[]) => {
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    fc.assert(
      fc.property(
        version,
        version,
        fc.constantFrom("", "release-", "V"),
        fc.constantFrom(".", "_"),
        fc.constantFrom("/m.json", ".json", "__name.sql", ""),
        (x, y, prefix, separator, suffix) => {
          const a = `${prefix}${x.join(separator)}${suffix}`;
          const b = `${prefix}${y.join(separator)}${suffix}`;
          assert.equal(Math.sign(compareVersionPaths(a, b)), Math.sign(numeric(x, y)), `${a} ${b}`);
        },
      ),
      propertyOptions(1000),
    );
  });
});
