import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CALLBACK_EVENTS,
  FLYWAY_EVENT_IDS,
  readCallbackName,
} from "../../../src/migrate/plan/callback_name.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { propertyOptions } from "../../property.ts";

/** Asserts that `path` is refused naming itself and matching `pattern`. */
function refusedName(path: string, pattern: RegExp): void {
  assert.throws(
    () => readCallbackName(path),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, path);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

describe("readCallbackName", () => {
  for (const event of CALLBACK_EVENTS) {
    it(`reads ${event}, with and without a description`, () => {
      assert.deepEqual(readCallbackName(`${event}.sql`), { event, supported: true });
      assert.deepEqual(readCallbackName(`${event}__vacuum_tables.sql`), {
        event,
        description: "vacuum_tables",
        supported: true,
      });
    });
  }

  it("lists the twelve events in the order a migrate run, then an undo run, reaches them", () => {
    assert.deepEqual(CALLBACK_EVENTS, [
      "beforeValidate",
      "afterValidate",
      "beforeMigrate",
      "beforeEachMigrate",
      "afterEachMigrate",
      "afterMigrate",
      "afterMigrateError",
      "beforeUndo",
      "beforeEachUndo",
      "afterEachUndo",
      "afterUndo",
      "afterUndoError",
    ]);
    for (const event of CALLBACK_EVENTS) assert.ok(FLYWAY_EVENT_IDS.includes(event), event);
    assert.equal(new Set(FLYWAY_EVENT_IDS).size, FLYWAY_EVENT_IDS.length);
  });

  it("strips any last suffix, in any case", () => {
    for (const suffix of [".sql", ".SQL", ".Sql", ".json", ".ts", ".js", ".JSON"]) {
      assert.deepEqual(readCallbackName(`afterMigrate${suffix}`), {
        event: "afterMigrate",
        supported: true,
      });
    }
    assert.deepEqual(readCallbackName("afterMigrate__v1.2.sql"), {
      event: "afterMigrate",
      description: "v1.2",
      supported: true,
    });
    // Only the last suffix goes: `.d.ts` leaves `afterMigrate.d`, no event.
    assert.equal(readCallbackName("afterMigrate.d.ts"), undefined);
    assert.equal(readCallbackName("afterMigrate.sql.bak"), undefined);
  });

  it("splits at the first __: the rest, underscores included, is the description", () => {
    assert.deepEqual(readCallbackName("beforeEachMigrate__set__role.sql"), {
      event: "beforeEachMigrate",
      description: "set__role",
      supported: true,
    });
  });

  it("reads an empty description as Flyway does: another callback than none", () => {
    assert.deepEqual(readCallbackName("beforeMigrate__.sql"), {
      event: "beforeMigrate",
      description: "",
      supported: true,
    });
  });

  it("reads a callback in a sub-folder by its last segment", () => {
    assert.deepEqual(readCallbackName("sub/afterMigrate.sql"), {
      event: "afterMigrate",
      supported: true,
    });
    assert.deepEqual(readCallbackName("1.0/more/beforeValidate__check.json"), {
      event: "beforeValidate",
      description: "check",
      supported: true,
    });
    // A folder named like an event says nothing of the file in it.
    assert.equal(readCallbackName("afterMigrate/V1__init.sql"), undefined);
  });

  it("recognises Flyway's other event ids, as not supported", () => {
    for (
      const id of [
        "afterEachMigrateError",
        "beforeInfo",
        "beforeClean",
        "beforeEachUndoStatement",
        "afterEachUndoStatementError",
        "afterEachUndoError",
        "createSchema",
        "afterMigrateApplied",
        "beforeRepeatables",
        "afterVersioned",
        "beforeBaseline",
        "afterRepairError",
        "afterValidateError",
        "afterMigrateOperationFinish",
        "afterInfoOperationFinish",
        "beforeConnect",
      ]
    ) {
      assert.ok(FLYWAY_EVENT_IDS.includes(id), id);
      assert.deepEqual(readCallbackName(`${id}.sql`), { event: id, supported: false });
      assert.deepEqual(readCallbackName(`${id}__x.sql`), {
        event: id,
        description: "x",
        supported: false,
      });
    }
    for (const id of FLYWAY_EVENT_IDS) {
      assert.equal(readCallbackName(`${id}.sql`)?.supported, CALLBACK_EVENTS.includes(id as never));
    }
  });

  it("is no callback for names that only contain or start with an id", () => {
    for (
      const path of [
        "V1__beforeMigrate.sql",
        "R__afterMigrate.sql",
        "beforeMigrateX.sql",
        "beforeMigrate_x.sql",
        "beforeMigrate-x.sql",
        "beforeMigrate.x.sql",
        "x__beforeMigrate.sql",
        "_beforeMigrate.sql",
        "001_init.sql",
        "logs-template.json",
        // Flyway gives every `…OperationFinish` but migrate's and info's the id
        // afterInfoOperationFinish: these spellings are no ids.
        "afterCleanOperationFinish.sql",
        "afterEach.sql",
        "migrate.sql",
      ]
    ) {
      assert.equal(readCallbackName(path), undefined, path);
    }
  });

  it("refuses an event spelled in another case, naming the right spelling", () => {
    refusedName(
      "BeforeMigrate.sql",
      /event beforeMigrate, spelled BeforeMigrate.*beforeMigrate\.sql/,
    );
    refusedName("AFTERMIGRATE.sql", /event afterMigrate, spelled AFTERMIGRATE.*afterMigrate\.sql/);
    refusedName(
      "sub/aftereachmigrate__log.SQL",
      /event afterEachMigrate.*afterEachMigrate__log\.SQL/,
    );
    refusedName("Beforeclean.sql", /event beforeClean/);
  });

  it("property: a name of the form V<digits>__<anything> is never a callback", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{1,6}$/),
        fc.string({ maxLength: 30 }),
        fc.constantFrom("", ".sql", ".SQL", ".json", ".ts"),
        fc.constantFrom("", "sub/", "1.0/afterMigrate/"),
        (digits, rest, suffix, folder) => {
          const path = `${folder}V${digits}__${rest.replaceAll("/", "")}${suffix}`;
          assert.equal(readCallbackName(path), undefined, path);
        },
      ),
      propertyOptions(200),
    );
  });

  it("property: an id with any description and suffix is read back", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FLYWAY_EVENT_IDS),
        fc.option(fc.string({ maxLength: 20 }).map((s) => s.replace(/[/.]/g, ""))),
        fc.constantFrom(".sql", ".SQL", ".json", ".ts", ".js"),
        (id, description, suffix) => {
          const path = `${id}${description === null ? "" : `__${description}`}${suffix}`;
          const name = readCallbackName(path);
          assert.equal(name?.event, id, path);
          assert.equal(name?.description, description ?? undefined, path);
        },
      ),
      propertyOptions(200),
    );
  });
});
