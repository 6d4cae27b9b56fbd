import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import {
  downRecordPath,
  readUndoName,
  undoRecordVersion,
} from "../../../src/migrate/plan/undo_name.ts";
import { propertyOptions } from "../../property.ts";

function refusedName(path: string, reason: RegExp): void {
  assert.throws(
    () => readUndoName(path),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, path);
      assert.match(error.message, reason);
      return true;
    },
  );
}

describe("readUndoName", () => {
  it("reads Flyway's undo names, in any folder", () => {
    assert.deepEqual(readUndoName("U2__drop_users.sql"), {
      version: "2",
      description: "drop_users",
    });
    assert.deepEqual(readUndoName("2024/U1.0.1__fix.sql"), {
      version: "1.0.1",
      description: "fix",
    });
    assert.deepEqual(readUndoName("U9_4__x.sql"), { version: "9_4", description: "x" });
    assert.deepEqual(readUndoName("U001__x"), { version: "001", description: "x" });
  });

  it("leaves every other name alone: versioned, repeatable, a word, lowercase, a folder's U", () => {
    for (
      const path of [
        "V1__x.sql",
        "R__views.sql",
        "Users__list.sql",
        "Undo__x.sql",
        "u1__x.sql",
        "U1_x.sql",
        "U1.sql",
        "U1/V1__x.sql",
        "001_init.sql",
        "__U1.sql",
      ]
    ) {
      assert.equal(readUndoName(path), undefined, path);
    }
  });

  it("refuses an undo name that breaks Flyway's rules, as V names are refused", () => {
    refusedName("U__x.sql", /has no version: an undo file is named U<version>__/);
    refusedName("sub/U1..2__x.sql", /1\.\.2 is not a version/);
    refusedName("U.1__x.sql", /\.1 is not a version/);
    refusedName("U1.__x.sql", /1\. is not a version/);
    refusedName("U_8_0__x.sql", /_8_0 is not a version/);
  });
});

describe("undoRecordVersion", () => {
  it("reads an undo record's version, and never throws on a record's name", () => {
    assert.equal(undoRecordVersion("a/U3__x.sql"), "3");
    assert.equal(undoRecordVersion("U3__x.ts"), "3");
    assert.equal(undoRecordVersion("V3__x.sql"), undefined);
    assert.equal(undoRecordVersion("U__x.sql"), undefined);
    assert.equal(undoRecordVersion("U1..2__x.sql"), undefined);
  });
});

describe("downRecordPath", () => {
  it("makes the V of the file's name a U, in the same folder", () => {
    assert.equal(downRecordPath("V3__slugs.ts"), "U3__slugs.ts");
    assert.equal(downRecordPath("2024/V3__slugs.ts"), "2024/U3__slugs.ts");
    assert.equal(downRecordPath("V2024/V3__V.ts"), "V2024/U3__V.ts");
  });

  it("refuses a path that is no versioned file's", () => {
    assert.throws(() => downRecordPath("R__views.ts"), TypeError);
    assert.throws(() => downRecordPath("V1/init.ts"), TypeError);
  });

  it("gives a path that reads back as an undo of the file's version", () => {
    const version = fc.array(fc.nat({ max: 99 }), { minLength: 1, maxLength: 3 })
      .chain((parts) => fc.constantFrom(".", "_").map((joint) => parts.map(String).join(joint)));
    const folder = fc.constantFrom("", "a/", "V1/", "2024/b/");
    fc.assert(
      fc.property(folder, version, fc.stringMatching(/^[a-z_]{1,8}$/), (dir, v, description) => {
        const undo = downRecordPath(`${dir}V${v}__${description}.ts`);
        assert.ok(undo.startsWith(dir));
        assert.equal(undoRecordVersion(undo), v);
        assert.deepEqual(readUndoName(undo), { version: v, description });
      }),
      propertyOptions(200),
    );
  });
});
