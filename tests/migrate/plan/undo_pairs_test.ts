import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { pairUndos, type UndoSource } from "../../../src/migrate/plan/undo_pairs.ts";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { propertyOptions } from "../../property.ts";

const paths = (...list: string[]): UndoSource[] => list.map((path) => ({ path }));

function refusedPairs(files: UndoSource[], file: string, reason: RegExp): void {
  assert.throws(
    () => pairUndos(files),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, file);
      assert.match(error.message, reason);
      return true;
    },
  );
}

describe("pairUndos", () => {
  it("pairs each V file with the U file of its version, in any folder, and down", () => {
    const files: UndoSource[] = [
      ...paths("U2__users.sql", "V1__init.sql", "V2__users.sql"),
      { path: "V3__slugs.ts", hasDown: true },
      ...paths("V4__x.sql", "R__views.sql", "later/U4__x.sql"),
    ];
    assert.deepEqual(pairUndos(files), [
      { path: "V1__init.sql", version: "1" },
      { path: "V2__users.sql", version: "2", undo: "U2__users.sql" },
      { path: "V3__slugs.ts", version: "3", undo: "down" },
      { path: "V4__x.sql", version: "4", undo: "later/U4__x.sql" },
    ]);
  });

  it("compares versions by value: U1 undoes V1.0, U002 undoes V2, U9_4 undoes V9.4", () => {
    assert.deepEqual(
      pairUndos(paths("U1__a.sql", "V1.0__a.sql", "U002__b.sql", "V2__b.sql", "V3__c.sql"))
        .map((f) => f.undo),
      ["U1__a.sql", "U002__b.sql", undefined],
    );
    assert.deepEqual(
      pairUndos(paths("V9.4__a.sql", "U9_4__a.sql", "V10__b.sql", "U10.0.0__b.sql"))
        .map((f) => f.undo),
      ["U9_4__a.sql", "U10.0.0__b.sql"],
    );
  });

  it("leaves repeatable files out; a repeatable's down undoes nothing", () => {
    assert.deepEqual(pairUndos([{ path: "R__views.ts", hasDown: true }, ...paths("init.sql")]), []);
  });

  it("lists a file whose version its path gives as unnamed, with no undo", () => {
    assert.deepEqual(
      pairUndos([...paths("001_init.sql", "1.0/a.json"), { path: "002_b.ts", hasDown: true }]),
      [
        { path: "001_init.sql", version: "001", unnamed: true },
        { path: "1.0/a.json", version: "1.0", unnamed: true },
        { path: "002_b.ts", version: "002", unnamed: true },
      ],
    );
  });

  it("refuses an undo file whose version no V file has, naming it", () => {
    refusedPairs(
      paths("V1__a.sql", "V3__c.sql", "U4__d.sql"),
      "U4__d.sql",
      /undoes version 4, and no V4 file is here/,
    );
    refusedPairs(paths("U1__a.sql"), "U1__a.sql", /undoes version 1, and no V1 file/);
    // A repeatable or another name is no version's file.
    refusedPairs(paths("R__x.sql", "1/x.sql", "U1__x.sql"), "U1__x.sql", /no V1 file/);
  });

  it("refuses a second undo file of one version, naming the second, in any folder", () => {
    refusedPairs(
      paths("a/U2__x.sql", "a/V2__x.sql", "b/U2.0__y.sql"),
      "b/U2.0__y.sql",
      /undoes version 2\.0, as a\/U2__x\.sql does: a version has one undo file/,
    );
  });

  it("refuses an undo file of a version whose code migration exports down", () => {
    refusedPairs(
      [{ path: "V3__slugs.ts", hasDown: true }, ...paths("U3__slugs.sql")],
      "U3__slugs.sql",
      /undoes version 3, and V3__slugs\.ts exports down, which undoes it too/,
    );
  });

  it("refuses an undo name that breaks Flyway's rules, and a V name that does", () => {
    refusedPairs(paths("V1__a.sql", "U__a.sql"), "U__a.sql", /has no version/);
    refusedPairs(paths("V1__a.sql", "U1..2__a.sql"), "U1..2__a.sql", /is not a version/);
    refusedPairs(paths("V1..2__a.sql"), "V1..2__a.sql", /is not a version/);
  });

  it("pairs as a reference model does, or refuses where it does, for any folder of files", () => {
    // Small integer versions in their equal spellings; a reference compares the numbers.
    const spelled = (n: number) =>
      fc.constantFrom(`${n}`, `${n}.0`, `00${n}`, `${n}_0`, `${n}.0.0`);
    const folder = fc.constantFrom("", "a/", "b/");
    const entry = fc.record({
      v: fc.option(fc.tuple(folder, fc.boolean()), { nil: undefined }),
      u: fc.array(folder, { maxLength: 2 }),
    });
    const layout = fc.array(entry, { minLength: 1, maxLength: 6 }).chain((entries) =>
      fc.tuple(fc.constant(entries), fc.tuple(...entries.map((_, n) => spelled(n + 1))))
    );
    fc.assert(
      fc.property(layout, ([entries, spellings]) => {
        const files: UndoSource[] = [];
        entries.forEach(({ v, u }, n) => {
          if (v !== undefined) {
            const [dir, down] = v;
            files.push({
              path: `${dir}V${spellings[n]}__f.ts`,
              ...(down ? { hasDown: true } : {}),
            });
          }
          u.forEach((dir, i) => files.push({ path: `${dir}U${n + 1}__u${i}.sql` }));
        });
        files.sort((a, b) => compareVersionPaths(a.path, b.path));
        // The reference: the first undo file in run order that has no V file, a V file with
        // down, or an earlier undo file of its version.
        const seen = new Set<number>();
        let refusal: string | undefined;
        for (const { path } of files) {
          const undo = /(?:^|\/)U(\d+)__/.exec(path);
          if (undo === null) continue;
          const n = Number(undo[1]) - 1;
          if (entries[n].v === undefined || entries[n].v![1] || seen.has(n)) {
            refusal = path;
            break;
          }
          seen.add(n);
        }
        if (refusal !== undefined) {
          assert.throws(
            () => pairUndos(files),
            (e: unknown) => (e as MigrationFileError).file === refusal,
          );
          return;
        }
        const paired = pairUndos(files);
        assert.deepEqual(
          paired.map((f) => f.path),
          files.map((f) => f.path).filter((p) => /(?:^|\/)V/.test(p)),
        );
        for (const f of paired) {
          const n = Number(f.version.split(/[._]/)[0]) - 1;
          const expected = entries[n].v![1]
            ? "down"
            : files.find((g) => new RegExp(`(?:^|/)U${n + 1}__`).test(g.path))?.path;
          assert.equal(f.undo, expected);
        }
      }),
      propertyOptions(200),
    );
  });
});
