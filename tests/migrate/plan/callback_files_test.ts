import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { splitCallbacks } from "../../../src/migrate/plan/callback_files.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import type { MigrationFile } from "../../../src/migrate/files/migration_files.ts";
import { propertyOptions } from "../../property.ts";

function file(path: string): MigrationFile {
  return { path, bytes: new Uint8Array(), hash: "", source: `/migrations/db/${path}` };
}

const paths = (files: readonly { path: string }[]) => files.map((f) => f.path);

/** Asserts that splitting `names` refuses `second`, naming `first` too. */
function refusedTwice(names: string[], first: string, second: string): void {
  assert.throws(
    () => splitCallbacks(names.map(file)),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, second);
      assert.ok(error.message.includes(`as ${first} is`), error.message);
      return true;
    },
  );
}

describe("splitCallbacks", () => {
  it("takes the callbacks out, and leaves the migrations in their order", () => {
    const { migrations, callbacks } = splitCallbacks(
      [
        "V1__init.sql",
        "afterMigrate.sql",
        "V2__beforeMigrate.sql",
        "sub/beforeMigrate.sql",
        "R__view.sql",
        "beforeMigrate_x.sql",
      ].map(file),
    );
    assert.deepEqual(paths(migrations), [
      "V1__init.sql",
      "V2__beforeMigrate.sql",
      "R__view.sql",
      "beforeMigrate_x.sql",
    ]);
    assert.deepEqual(paths(callbacks.map((c) => c.file)), [
      "sub/beforeMigrate.sql",
      "afterMigrate.sql",
    ]);
    assert.deepEqual(callbacks[0].name, { event: "beforeMigrate", supported: true });
    assert.equal(callbacks[0].file.source, "/migrations/db/sub/beforeMigrate.sql");
  });

  it("orders callbacks by event, then none before a description, then by description", () => {
    const { callbacks } = splitCallbacks(
      [
        "afterMigrateError.sql",
        "afterMigrate__b.sql",
        "afterMigrate.sql",
        "afterMigrate__a.sql",
        "afterMigrate__.sql",
        "afterEachMigrate.sql",
        "beforeEachMigrate.sql",
        "beforeMigrate.sql",
        "afterValidate.sql",
        "beforeValidate.sql",
        "beforeClean.sql",
        "afterEachMigrateError.sql",
      ].map(file),
    );
    assert.deepEqual(paths(callbacks.map((c) => c.file)), [
      "beforeValidate.sql",
      "afterValidate.sql",
      "beforeMigrate.sql",
      "beforeEachMigrate.sql",
      "afterEachMigrate.sql",
      "afterMigrate.sql",
      "afterMigrate__.sql",
      "afterMigrate__a.sql",
      "afterMigrate__b.sql",
      "afterMigrateError.sql",
      // Events Thaw does not run, last, in the order of Flyway's Event enum.
      "beforeClean.sql",
      "afterEachMigrateError.sql",
    ]);
  });

  it("orders descriptions by code point, `_` read as a space as Flyway reads it", () => {
    const { callbacks } = splitCallbacks(
      [
        "afterMigrate__b.sql",
        "afterMigrate__a-c.sql",
        "afterMigrate__a_c.sql",
        "afterMigrate__B.sql",
        "afterMigrate__\u{1f600}.sql",
        "afterMigrate__\uff5e.sql",
        "afterMigrate__10.sql",
        "afterMigrate__9.sql",
      ].map(file),
    );
    assert.deepEqual(callbacks.map((c) => c.name.description), [
      "10", // not by number: descriptions compare as text, as in Flyway
      "9",
      "B",
      "a_c", // "a c": a space sorts before "-"
      "a-c",
      "b",
      "\uff5e",
      "\u{1f600}",
    ]);
  });

  it("takes a callback in a sub-folder and with any suffix", () => {
    const { migrations, callbacks } = splitCallbacks(
      ["sub/afterMigrate.sql", "deep/er/beforeEachMigrate.SQL", "afterMigrate__log.json"].map(
        file,
      ),
    );
    assert.deepEqual(migrations, []);
    assert.deepEqual(paths(callbacks.map((c) => c.file)), [
      "deep/er/beforeEachMigrate.SQL",
      "sub/afterMigrate.sql",
      "afterMigrate__log.json",
    ]);
  });

  it("refuses one event and description found twice, naming both files", () => {
    refusedTwice(
      ["beforeMigrate.sql", "sub/beforeMigrate.sql"],
      "beforeMigrate.sql",
      "sub/beforeMigrate.sql",
    );
    refusedTwice(
      ["beforeMigrate.ts", "beforeMigrate.sql"],
      "beforeMigrate.sql",
      "beforeMigrate.ts",
    );
    refusedTwice(
      ["a/afterMigrate__log.sql", "V1__x.sql", "b/afterMigrate__log.SQL"],
      "a/afterMigrate__log.sql",
      "b/afterMigrate__log.SQL",
    );
    refusedTwice(["x/beforeClean.sql", "beforeClean.sql"], "beforeClean.sql", "x/beforeClean.sql");
    // The same file is named whatever order the two came in.
    refusedTwice(
      ["sub/beforeMigrate.sql", "beforeMigrate.sql"],
      "beforeMigrate.sql",
      "sub/beforeMigrate.sql",
    );
  });

  it("keeps apart names that differ in description, even an empty one", () => {
    const { callbacks } = splitCallbacks(
      ["beforeMigrate.sql", "beforeMigrate__.sql", "beforeMigrate__a.sql"].map(file),
    );
    assert.equal(callbacks.length, 3);
  });

  it("refuses an event in the wrong case rather than run it as a migration", () => {
    assert.throws(
      () => splitCallbacks(["V1__init.sql", "BeforeMigrate.sql"].map(file)),
      (error: unknown) =>
        error instanceof MigrationFileError && error.file === "BeforeMigrate.sql" &&
        /beforeMigrate\.sql/.test(error.message),
    );
  });

  // Names that may or may not be callbacks: event ids (some out of scope), descriptions, folders,
  // suffixes, and migration names that look like them.
  const name = fc.oneof(
    fc.tuple(
      fc.constantFrom("beforeMigrate", "afterMigrate", "afterEachMigrate", "beforeInfo"),
      fc.option(fc.constantFrom("", "a", "b", "a_b", "a b", "x__y")),
    ).map(([id, description]) => (description === null ? id : `${id}__${description}`)),
    fc.tuple(fc.nat({ max: 30 }), fc.constantFrom("init", "beforeMigrate", "x"))
      .map(([v, d]) => `V${v}__${d}`),
    fc.constantFrom("R__view", "beforeMigrate_x", "001_init", "beforeMigrateX"),
  );
  const path = fc.tuple(
    fc.constantFrom("", "sub/", "1.0/", "a/b/"),
    name,
    fc.constantFrom(".sql", ".SQL", ".ts", ".json"),
  ).map(([folder, n, suffix]) => `${folder}${n}${suffix}`);
  const files = fc.uniqueArray(path, { maxLength: 12 });

  it("property: a partition, migrations in their order, or a refusal of a repeated callback", () => {
    fc.assert(
      fc.property(files, (list) => {
        let split;
        try {
          split = splitCallbacks(list.map(file));
        } catch (error) {
          assert.ok(error instanceof MigrationFileError, String(error));
          assert.match(error.message, /callback, as .* is/);
          return;
        }
        const { migrations, callbacks } = split;
        const out = [...paths(migrations), ...paths(callbacks.map((c) => c.file))];
        assert.deepEqual([...out].sort(), [...list].sort(), "every file once");
        const kept = new Set(paths(migrations));
        assert.deepEqual(paths(migrations), list.filter((p) => kept.has(p)), "input order");
        const keys = callbacks.map((c) => `${c.name.event}\n${c.name.description ?? "\0"}`);
        assert.equal(new Set(keys).size, keys.length, "no event and description twice");
      }),
      propertyOptions(200),
    );
  });

  it("property: the order of callbacks, and which file is refused, ignore the input order", () => {
    fc.assert(
      fc.property(
        files.chain((list) =>
          fc.tuple(
            fc.constant(list),
            fc.shuffledSubarray(list, {
              minLength: list.length,
            }),
          )
        ),
        ([list, shuffled]) => {
          const run = (input: string[]) => {
            try {
              const { migrations, callbacks } = splitCallbacks(input.map(file));
              return {
                callbacks: paths(callbacks.map((c) => c.file)),
                migrations: new Set(paths(migrations)),
              };
            } catch (error) {
              assert.ok(error instanceof MigrationFileError, String(error));
              return { refused: error.message };
            }
          };
          assert.deepEqual(run(shuffled), run(list));
        },
      ),
      propertyOptions(200),
    );
  });
});
