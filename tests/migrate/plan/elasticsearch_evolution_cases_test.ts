// elasticsearch-evolution's own cases about file names, versions, order and duplicate versions,
// as tables run against Thaw's functions. Each row names its source in senacor/elasticsearch-evolution
// (paths under elasticsearch-evolution-core/src/test/java/com/senacor/elasticsearch/evolution/core/,
// shortened to `core/`; resources under elasticsearch-evolution-core/src/test/resources/). Its
// defaults: prefix `V` (case-sensitive), separator `__`, suffix `.http` (case-insensitive), every
// sub-folder flattened and ordered by version only. Thaw reads `.json` (search) and `.sql` files
// instead of `.http`; a row whose answer differs from elasticsearch-evolution's on purpose says
// `differs:` and why, in one line.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  checkMigrationNames,
  compareVersions,
  readMigrationName,
  sameVersion,
} from "../../../src/migrate/plan/migration_name.ts";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { decideFiles } from "../../../src/migrate/plan/file_decisions.ts";
import type { PlannedFile } from "../../../src/migrate/plan/planned_file.ts";
import { readMigrationFiles } from "../../../src/migrate/files/migration_files.ts";
import { parseJsonBytes } from "../../../src/migrate/files/json_text.ts";
import { refused } from "./refused_names.ts";
import { tempDir } from "../../temp_dir.ts";

const sign = (n: number) => Math.sign(n);

// core/internal/model/MigrationVersionTest.java (elasticsearch-evolution's MigrationVersion is
// Flyway's, numbers read as Java ints): how two versions compare.
describe("elasticsearch-evolution's MigrationVersionTest", () => {
  const compared: { a: string; b: string; order: -1 | 0 | 1; source: string }[] = [
    { a: "1.2", b: "1.3", order: -1, source: "isAtLeast.smaller, isNewerThan.smaller" },
    { a: "1.2", b: "1.2", order: 0, source: "isAtLeast.equals, isNewerThan.equals" },
    { a: "1.3", b: "1.2", order: 1, source: "isAtLeast.bigger, isNewerThan.bigger" },
    { a: "2_3", b: "2.3", order: 0, source: "creat.canHandleUnderscoreAsSeparator" },
    { a: "2.0", b: "2", order: 0, source: "creat.removeUnnecessaryVersionParts_removeEndingZero" },
    {
      a: "2.0.1.0",
      b: "2.0.1",
      order: 0,
      source: "creat.removeUnnecessaryVersionParts_middleZeroIsNotRemoved",
    },
    // The middle zero stays: [2, 0, 1] is not [2, 1].
    {
      a: "2.0.1",
      b: "2.1",
      order: -1,
      source: "creat.removeUnnecessaryVersionParts_middleZeroIsNotRemoved",
    },
    { a: "02.01", b: "2.1", order: 0, source: "creat.ignoreLeadingZeros" },
    { a: "2.3", b: "2.4", order: -1, source: "equals.notEqualsToOtherVersion" },
    { a: "2.3", b: "2.3", order: 0, source: "equals.equalsToOtherInstance" },
  ];
  for (const { a, b, order, source } of compared) {
    it(`${source}: ${a} ${["<", "=", ">"][order + 1]} ${b}`, () => {
      assert.equal(sign(compareVersions(a, b)), order);
      assert.equal(sameVersion(a, b), order === 0);
      // As file names: one version is two files of it, refused; two versions run in their order.
      const names = [`V${a}__a.json`, `V${b}__b.json`];
      if (order === 0) refused(names, names[1], /two files of one version/);
      else {
        assert.doesNotThrow(() => checkMigrationNames(names));
        assert.equal(sign(compareVersionPaths(names[0], names[1])), order);
      }
    });
  }

  it("creat.invalidVersion: 1-2 is no version, and its file is refused", () => {
    refused(["V1-2__x.json"], "V1-2__x.json", /1-2 is not a version/);
  });

  it("creat.blankVersion: an empty version is refused; differs: a blank one names no version", () => {
    refused(["V__x.json"], "V__x.json", /has no version/);
    // differs: Thaw reads only a V followed by a digit, `.` or `_` as a version, so `V __x.json`
    // is a name like any other, run in path order (as `Vacation__plan.json` is).
    assert.deepEqual(readMigrationName("V __x.json"), { kind: "other" });
  });
});

// core/internal/migration/input/MigrationScriptParserImplTest.java, nested class parseFilename and
// parseCollection, with prefix V and suffix .http (here .json).
describe("elasticsearch-evolution's MigrationScriptParserImplTest", () => {
  it("parseFilename.isParsable: V0123.01_0002__... has version 123.1.2", () => {
    const name = readMigrationName("V0123.01_0002__my_description text.json");
    assert.equal(name.kind, "versioned");
    if (name.kind !== "versioned") return;
    assert.equal(sameVersion(name.version, "123.1.2"), true);
    assert.equal(compareVersions(name.version, "123.1.2"), 0);
    // differs: ees reads `_` in a description as a space ("my description text"); Thaw records
    // the file's path, not a description, and keeps the description as written.
    assert.equal(name.description, "my_description text");
  });

  it("parseFilename.notMatching_MajorVersionMustBeGreaterThan0; differs: 0.1 is a version", () => {
    // differs: ees reserves major version 0 for its own use and refuses V0.1__x.http; Thaw keeps
    // Flyway's rules, where 0 and 0.1 are versions like any other.
    assert.deepEqual(readMigrationName("V0.1__my_description text.json"), {
      kind: "versioned",
      version: "0.1",
      description: "my_description text",
    });
    assert.doesNotThrow(() => checkMigrationNames(["V0.1__my_description text.json"]));
  });

  it("parseFilename.notMatching_wrongSeparator; differs: no __, so a name like any other", () => {
    // differs: ees refuses a V file without `__`; Thaw runs every file of its suffix, and a name
    // without `__` is not in Flyway's form: it runs in path order (`V1-init.sql` too).
    assert.deepEqual(readMigrationName("V0123.01_0002-my_description text.json"), {
      kind: "other",
    });
  });

  it("parseFilename.notMatching_wrongVersion: V123.a__ is refused", () => {
    const path = "V123.a__my_description text.json";
    refused([path], path, /123\.a is not a version/);
  });

  it("parseCollection.success: V1__create and V2__update, versions 1 and 2", () => {
    assert.deepEqual(readMigrationName("V1__create.json"), {
      kind: "versioned",
      version: "1",
      description: "create",
    });
    assert.deepEqual(readMigrationName("V2__update.json"), {
      kind: "versioned",
      version: "2",
      description: "update",
    });
    assert.ok(compareVersionPaths("V1__create.json", "V2__update.json") < 0);
  });
});

// README.md, "4.2 Migration script file name", and the MigrationVersion it describes
// (elasticsearch-evolution-core/src/main/java/com/senacor/elasticsearch/evolution/core/api/
// migration/MigrationVersion.java, tokenize: each part an Integer).
describe("elasticsearch-evolution's README on versions", () => {
  it("1.0.1 < 1.1 < 1.2.1 < (2.0.0 == 2)", () => {
    const versions = ["2", "1.2.1", "2.0.0", "1.1", "1.0.1"];
    const names = versions.map((v) => `V${v}__x.json`).sort(compareVersionPaths);
    assert.deepEqual(names.slice(0, 3), ["V1.0.1__x.json", "V1.1__x.json", "V1.2.1__x.json"]);
    assert.equal(compareVersions("2.0.0", "2"), 0);
    refused(["V2__x.json", "V2.0.0__y.json"], "V2.0.0__y.json", /two files of one version/);
  });

  it("each part at most 2,147,483,647; differs: Thaw compares parts of any length", () => {
    // differs: ees refuses a part over Java's int (a timestamp, 201004171859); Thaw keeps
    // Flyway's rule (its testWouldOverflowLong) and compares digits of any length exactly.
    assert.doesNotThrow(() =>
      checkMigrationNames(["V2147483648__x.json", "V201004171859__y.json"])
    );
    assert.ok(compareVersions("2147483647", "2147483648") < 0);
    assert.ok(compareVersionPaths("V201004171859__a.json", "V201004180000__b.json") < 0);
  });
});

/** A migrations root holding `files` (paths from the root), removed after `use`. */
async function withFolder(
  files: Record<string, string>,
  use: (root: string) => Promise<void>,
): Promise<void> {
  await using root = await tempDir("thaw-ees-");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root.path, path, ".."), { recursive: true });
    await writeFile(join(root.path, path), text);
  }
  await use(root.path);
}

// Which files of a folder are migrations, and in which order.
describe("elasticsearch-evolution's reader and migrate_OK folder", () => {
  it("core/ElasticsearchEvolutionIT.java migrate_OK: all 10 files, .Http too, in version order", async () => {
    // elasticsearch-evolution-core/src/test/resources/es/ElasticsearchEvolutionTest/migrate_OK/:
    // ees runs all 10 (one ends in `.Http`) in this order. Here with `.json`, one as `.Json`.
    const ordered = [
      "V001.00__createTemplateWithIndexMapping.json",
      "V001.01__addDocument.json",
      "V001.02__addDocumentInOtherIndex.json",
      "V002.00__extendIndexMappingViaTemplate.json",
      "V002.01__updateMappingOfExistingIndices.json",
      "V002.02__moveFieldToSearchable.json",
      "V003.00__addDocumentWithNewStructure.Json",
      "V003.0.1__removeDocumentFromOtherIndex.json",
      "V003.01__addDocumentWithNewStructureToOtherIndex.json",
      "V004.00__bulkAPIRequiresNewlineAtTheEndOfTheMigrationFile.json",
    ];
    const files = Object.fromEntries([...ordered].reverse().map((name) => [`main/${name}`, "{}"]));
    await withFolder(files, async (root) => {
      const folder = (await readMigrationFiles(root, "main", ".json"))!;
      assert.deepEqual(folder.files.map((f) => f.path), ordered);
      assert.deepEqual(folder.ignored, []);
      assert.doesNotThrow(() => checkMigrationNames(ordered));
    });
  });

  it("core/internal/migration/input/MigrationScriptReaderImplTest.java readResources", async () => {
    // fromClassPath.nonJarFile, .multipleSuffixes and fromFileSystem.normalPath, on
    // resources/scriptreader/ (prefix "c"): content.http and sub/content_sub.http are read;
    // content.other only when .other is a suffix; sub/sub.http (not "c"...) and the empty
    // content_empty.http are not.
    await withFolder({
      "main/content.json": "{}",
      "main/content.other": "{}",
      "main/content_empty.json": "",
      "main/sub/content_sub.json": "{}",
      "main/sub/sub.json": "{}",
    }, async (root) => {
      const folder = (await readMigrationFiles(root, "main", ".json"))!;
      // Sub-folders are read, as ees reads them; a file of another suffix is not a migration
      // (Thaw lists it as ignored, for `status`).
      assert.deepEqual(folder.ignored, ["content.other"]);
      // differs: every `.json` file is a migration, whatever its prefix (ees reads only those
      // starting with its prefix, case-sensitive: `sub.http`, `v1__x.http` are skipped unseen);
      // a name not in `V<version>__` form runs in path order.
      assert.deepEqual(folder.files.map((f) => f.path), [
        "content.json",
        "content_empty.json",
        "sub/content_sub.json",
        "sub/sub.json",
      ]);
      assert.deepEqual(readMigrationName("v1__x.json"), { kind: "other" });
      // differs: an empty file is not skipped (ees skips it unseen): it is not JSON, and stops
      // the plan, naming it.
      assert.throws(() => parseJsonBytes(folder.files[1].bytes));
    });
  });

  it("MigrationScriptReaderImplTest exclude_locations_with_suffix: a sibling folder is not read", async () => {
    // resources/scriptreader/issue36/: the location `location` must not read `location_with_suffix`.
    await withFolder({
      "location/content.json": "{}",
      "location_with_suffix/content_sub.json": "{}",
    }, async (root) => {
      const folder = (await readMigrationFiles(root, "location", ".json"))!;
      assert.deepEqual(folder.files.map((f) => f.path), ["content.json"]);
    });
  });

  it("README.md configuration, locations; differs: folder by folder, not flattened", () => {
    // ees: "All scripts in all locations/subdirectories will be flattened, and only the version
    // number will be used to order them": b/V1 runs before a/V2.
    // differs: Thaw orders by path, folder by folder, so that `release-1.0/` runs before
    // `release-1.1/` whatever its files are named: a/V2 runs first.
    assert.ok(compareVersionPaths("a/V2__x.json", "b/V1__y.json") < 0);
    assert.ok(compareVersionPaths("V1__y.json", "V2__x.json") < 0, "in one folder, by version");
  });
});

// Two files of one version.
describe("elasticsearch-evolution's duplicate versions", () => {
  it("core/ElasticsearchEvolutionIT.java migrate_failed_duplicate_versions: refused, naming both", () => {
    // resources/es/ElasticsearchEvolutionTest/duplicate_versions/sub1/ and sub2/.
    const first = "sub1/V001.00__createTemplateWithIndexMapping1.json";
    const second = "sub2/V001.00__createTemplateWithIndexMapping2.json";
    refused([first, second], second, /has version 1, as sub1\/V001\.00__create.*1\.json has/);
  });

  it("core/internal/migration/execution/MigrationServiceImplTest.java duplicateVersions_should_failWithMigrationException", () => {
    // ees: two V1.0__1.0.http ("the same version '1'"); one folder cannot hold one name twice.
    refused(["a/V1.0__1.0.json", "b/V1.0__1.0.json"], "b/V1.0__1.0.json", /has version 1,/);
    refused(["V1.0__1.0.json", "V1__1.json"], "V1__1.json", /has version 1,/);
  });
});

// core/internal/migration/execution/MigrationServiceImplTest.java, nested class
// getPendingScriptsToBeExecuted: which files run, given the history. ees's test scripts are
// `DELETE /` requests named V<version>__<version>.http, each with a checksum; Thaw's are
// `V<version>__<version>.json` files holding a DELETE envelope, which runs once. ees records
// failed runs too; Thaw records a file only once it succeeded, so a failed one has no record.
describe("elasticsearch-evolution's MigrationServiceImplTest.getPendingScriptsToBeExecuted", () => {
  const name = (version: string) => `V${version}__${version}.json`;
  const script = (version: string, checksum = "1"): PlannedFile => ({
    path: name(version),
    hash: checksum,
    runOnce: true,
  });
  /** Thaw's decisions for `scripts` (given in any order, as ees's tests give them). */
  const decide = (
    scripts: PlannedFile[],
    history: [string, string][],
    command: "migrate" | "baseline" = "migrate",
    target?: string,
  ) =>
    decideFiles(
      [...scripts].sort((a, b) => compareVersionPaths(a.path, b.path)),
      new Map(history.map(([version, checksum]) => [name(version), checksum])),
      command,
      false,
      target,
    ).map((f) => `${f.path}:${f.action}${f.outOfOrder ? `:late,before ${f.outOfOrder}` : ""}`);

  it("emptyHistory_allScriptsHaveToBeReturned: 1.0 then 1.1", () => {
    assert.deepEqual(decide([script("1.1"), script("1.0")], []), [
      "V1.0__1.0.json:apply",
      "V1.1__1.1.json:apply",
    ]);
  });

  it("scriptsAndHistoryInSync_noScriptsWillBeReturned", () => {
    assert.deepEqual(decide([script("1.1"), script("1.0")], [["1.0", "1"], ["1.1", "1"]]), [
      "V1.0__1.0.json:skip",
      "V1.1__1.1.json:skip",
    ]);
  });

  it("lastHistoryVersionWasFailing_AllScriptsInclFailedWillBeReturned: 1.1 runs again", () => {
    // ees: 1.1 recorded as failed. Thaw: no record for 1.1.
    assert.deepEqual(decide([script("1.1"), script("1.0")], [["1.0", "1"]]), [
      "V1.0__1.0.json:skip",
      "V1.1__1.1.json:apply",
    ]);
  });

  it("moreHistoryVersionsThanScripts_warningIsShownAnNoScriptsWillBeReturned", () => {
    // ees: 1.2 recorded (failed), its script gone: a warning, nothing to run. Thaw: a record
    // whose file is gone is `missing` (listed, warned about), and nothing runs.
    assert.deepEqual(
      decide([script("1.1"), script("1.0")], [["1.0", "1"], ["1.1", "1"], ["1.2", "1"]]),
      ["V1.0__1.0.json:skip", "V1.1__1.1.json:skip", "V1.2__1.2.json:missing"],
    );
  });

  it("outOfOrderExecutionIsDisabled; differs: by default a late 1.0.1 runs, with a warning", () => {
    // ees (outOfOrder=false, its default): migrate fails at 1.0.1. differs: Thaw's default applies
    // it, warning that it sorts before 1.1; `--strict-order` (migrations.strict_order: true)
    // refuses exactly the files marked late here, as ees does, before anything is written.
    assert.deepEqual(
      decide([script("1.1"), script("1.0.1"), script("1.0")], [["1.0", "1"], ["1.1", "1"]]),
      [
        "V1.0__1.0.json:skip",
        "V1.0.1__1.0.1.json:apply:late,before V1.1__1.1.json",
        "V1.1__1.1.json:skip",
      ],
    );
  });

  it("outOfOrderExecutionIsEnabled_happy_path: only 1.0.1 runs", () => {
    const decided = decide([script("1.1"), script("1.0.1"), script("1.0")], [
      ["1.0", "1"],
      ["1.1", "1"],
    ]);
    assert.deepEqual(decided.filter((d) => d.includes(":apply")).map((d) => d.split(":")[0]), [
      "V1.0.1__1.0.1.json",
    ]);
  });

  it("outOfOrderExecutionIsEnabled_missing_executed_migration_script; differs: a rename", () => {
    // ees: 1.0 applied, its script gone, 1.0.1 new, every script with checksum 1: 1.0.1 runs.
    // differs: Thaw takes a new file holding what a missing record's file held for that file,
    // renamed (the record moves, nothing is sent: a renamed POST does not run twice).
    assert.deepEqual(decide([script("1.1"), script("1.0.1")], [["1.0", "1"], ["1.1", "1"]]), [
      "V1.0.1__1.0.1.json:rename",
      "V1.1__1.1.json:skip",
    ]);
    // With a content of its own, 1.0.1 runs, as in ees (late: it sorts before 1.1).
    assert.deepEqual(decide([script("1.1"), script("1.0.1", "5")], [["1.0", "1"], ["1.1", "1"]]), [
      "V1.0__1.0.json:missing",
      "V1.0.1__1.0.1.json:apply:late,before V1.1__1.1.json",
      "V1.1__1.1.json:skip",
    ]);
  });

  it("outOfOrderExecutionIsEnabled_execute_failed_script: 1.0 and 1.0.1 run", () => {
    // ees: 1.0 recorded as failed. Thaw: no record for 1.0.
    assert.deepEqual(
      decide([script("1.1"), script("1.0.1"), script("1.0")], [["1.1", "1"]]),
      [
        "V1.0__1.0.json:apply:late,before V1.1__1.1.json",
        "V1.0.1__1.0.1.json:apply:late,before V1.1__1.1.json",
        "V1.1__1.1.json:skip",
      ],
    );
  });

  it("failingScriptWasEdited_shouldReturnAllScriptsInclFailing: 1.1 and 1.2 run", () => {
    // ees: 1.1 recorded as failed with checksum 2, now 3. Thaw: no record for 1.1.
    assert.deepEqual(
      decide([script("1.1", "3"), script("1.0", "1"), script("1.2", "4")], [["1.0", "1"]]),
      ["V1.0__1.0.json:skip", "V1.1__1.1.json:apply", "V1.2__1.2.json:apply"],
    );
  });

  it("successfulScriptWasEdited_shouldThrowChecksumMismatchException; differs: reported", () => {
    // ees (validateOnMigrate=true, its default): migrate fails. differs: Thaw reports the edited
    // run-once file as `changed` and does not send it (validate fails on it); a declarative file
    // (a PUT, a template) is applied again. migrations.flyway_compatible: true refuses it instead.
    const history: [string, string][] = [["1.0", "1"], ["1.1", "2"]];
    assert.deepEqual(decide([script("1.1", "3"), script("1.0", "1")], history), [
      "V1.0__1.0.json:skip",
      "V1.1__1.1.json:changed",
    ]);
    const declarative = { ...script("1.1", "3"), runOnce: false };
    assert.deepEqual(decide([declarative, script("1.0", "1")], history), [
      "V1.0__1.0.json:skip",
      "V1.1__1.1.json:reapply",
    ]);
  });

  it("successfulScriptWasEdited_shouldContinueIfValidateOnMigrateIsDisabled: nothing runs", () => {
    // ees (validateOnMigrate=false): nothing runs. Thaw: the run-once file is not run either.
    const decided = decide([script("1.1", "3"), script("1.0", "1")], [["1.0", "1"], ["1.1", "2"]]);
    assert.ok(decided.every((d) => !d.includes(":apply") && !d.includes(":reapply")), `${decided}`);
  });

  it("usingABaseline_onlyScriptsWithVersionHigherThanBaselineWillBeReturned; differs: <=", () => {
    // ees (baselineVersion=2.0): 1.0 is skipped, 2.0 runs. differs: Thaw's `baseline --version`
    // is Flyway's: the baseline version is the state you have, so 2.0 is recorded as applied too;
    // ees's result is `baseline --version 1.0`: 1.0 recorded, 2.0 left for migrate.
    const scripts = [script("1.0"), script("2.0")];
    assert.deepEqual(decide(scripts, [], "baseline", "2.0"), [
      "V1.0__1.0.json:record",
      "V2.0__2.0.json:record",
    ]);
    assert.deepEqual(decide(scripts, [], "baseline", "1.0"), [
      "V1.0__1.0.json:record",
      "V2.0__2.0.json:above-target",
    ]);
  });

  it("noPendingScriptsIfMigrationScriptListIsEmpty", () => {
    assert.deepEqual(decide([], []), []);
  });
});
