import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { pairUndos, type UndoableFile } from "../../../src/migrate/plan/undo_pairs.ts";
import { planUndo, type UndoStep } from "../../../src/migrate/plan/undo_plan.ts";
import { baselineMarkerPath } from "../../../src/migrate/plan/baseline_marker.ts";
import { compareVersionPaths } from "../../../src/migrate/plan/version_order.ts";
import { propertyOptions } from "../../property.ts";

const recorded = (...paths: string[]) => new Map(paths.map((path) => [path, "h"]));
const steps = (plan: readonly UndoStep[]) =>
  plan.map((s) => `${s.path} via ${s.undo} as ${s.record}`);

function refusedPlan(
  files: readonly UndoableFile[],
  records: ReadonlyMap<string, string>,
  target: string | undefined,
  file: string,
  reason: RegExp,
): void {
  assert.throws(
    () => planUndo({ files, records, ...(target === undefined ? {} : { target }) }),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, file);
      assert.match(error.message, reason);
      return true;
    },
  );
}

// V1..V3, with undo files for 2 and 3 only, all applied: the case.
const ACCEPTANCE = pairUndos(
  ["U2__users.sql", "U3__slugs.sql", "V1__init.sql", "V2__users.sql", "V3__slugs.sql"]
    .map((path) => ({ path })),
);

describe("planUndo", () => {
  it("counts a file whose version its path gives, and refuses to undo it, naming it", () => {
    const files = pairUndos(
      ["V1__a.sql", "002_b.sql", "V3__c.sql", "U3__c.sql", "004_d.sql"].map((path) => ({ path })),
    );
    const records = recorded("V1__a.sql", "002_b.sql", "V3__c.sql", "004_d.sql", "release-5/x.sql");
    refusedPlan(files, records, "1", "release-5/x.sql", /gone from this checkout.*004_d\.sql/);
    refusedPlan(
      files,
      recorded("V1__a.sql", "002_b.sql", "V3__c.sql", "004_d.sql"),
      undefined,
      "004_d.sql",
      /newest applied version \(004\).*version is read from its path/,
    );
    // Below the newest V file: still a version to undo with a target under it.
    refusedPlan(
      files,
      recorded("V1__a.sql", "002_b.sql", "V3__c.sql"),
      "1",
      "002_b.sql",
      /applied at version 002, above the target 1/,
    );
    assert.deepEqual(
      steps(planUndo({ files, records: recorded("V1__a.sql", "002_b.sql", "V3__c.sql") })),
      ["V3__c.sql via U3__c.sql as U3__c.sql"],
    );
  });

  it("undoes every applied version above the target, newest first", () => {
    const records = recorded("V1__init.sql", "V2__users.sql", "V3__slugs.sql");
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "1" }), [
      { path: "V3__slugs.sql", undo: "U3__slugs.sql", record: "U3__slugs.sql" },
      { path: "V2__users.sql", undo: "U2__users.sql", record: "U2__users.sql" },
    ]);
  });

  it("refuses the whole plan when a version to undo has no undo, naming its V file", () => {
    const records = recorded("V1__init.sql", "V2__users.sql", "V3__slugs.sql");
    refusedPlan(
      ACCEPTANCE,
      records,
      "0",
      "V1__init.sql",
      /^V1__init\.sql: is applied at version 1, above the target 0, and has no undo: add U1__init\.sql beside it/,
    );
  });

  it("undoes the newest applied version alone without a target", () => {
    const records = recorded("V1__init.sql", "V2__users.sql", "V3__slugs.sql");
    assert.deepEqual(steps(planUndo({ files: ACCEPTANCE, records })), [
      "V3__slugs.sql via U3__slugs.sql as U3__slugs.sql",
    ]);
    // V3 undone: the next undo takes V2, then stops at V1, which has none.
    records.set("U3__slugs.sql", "u");
    assert.deepEqual(steps(planUndo({ files: ACCEPTANCE, records })), [
      "V2__users.sql via U2__users.sql as U2__users.sql",
    ]);
    records.set("U2__users.sql", "u");
    refusedPlan(
      ACCEPTANCE,
      records,
      undefined,
      "V1__init.sql",
      /is the newest applied version \(1\), and has no undo/,
    );
  });

  it("skips pending and undone versions, and gives an empty plan when none is left", () => {
    // V2 pending below the applied V3 (out of order): applying it is migrate's, not undo's.
    const records = recorded("V1__init.sql", "V3__slugs.sql");
    assert.deepEqual(steps(planUndo({ files: ACCEPTANCE, records, target: "1" })), [
      "V3__slugs.sql via U3__slugs.sql as U3__slugs.sql",
    ]);
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records: new Map() }), []);
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records: new Map(), target: "0" }), []);
    const undone = recorded("V2__users.sql", "U2__users.sql", "V3__slugs.sql", "U3__slugs.sql");
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records: undone, target: "0" }), []);
  });

  it("gives an empty plan for a target at or above every applied version", () => {
    const records = recorded("V1__init.sql", "V2__users.sql");
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "2" }), []);
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "2.0" }), []);
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "7.1" }), []);
  });

  it("undoes a code migration through its down, recorded as its U path", () => {
    const files = pairUndos([
      { path: "V1__init.sql" },
      { path: "2024/V2__slugs.ts", hasDown: true },
      { path: "U1__init.sql" },
    ]);
    const records = recorded("V1__init.sql", "2024/V2__slugs.ts");
    assert.deepEqual(planUndo({ files, records, target: "0" }), [
      { path: "2024/V2__slugs.ts", undo: "down", record: "2024/U2__slugs.ts" },
      { path: "V1__init.sql", undo: "U1__init.sql", record: "U1__init.sql" },
    ]);
    // Its record marks it undone: a second undo does not take it again.
    records.set("2024/U2__slugs.ts", "h");
    assert.deepEqual(steps(planUndo({ files, records })), [
      "V1__init.sql via U1__init.sql as U1__init.sql",
    ]);
  });

  it("says how to undo a code migration that has no undo", () => {
    const files = pairUndos([{ path: "V1__a.ts" }]);
    refusedPlan(
      files,
      recorded("V1__a.ts"),
      undefined,
      "V1__a.ts",
      /has no undo: export async function down\(context\) from it, or add an undo file U1__a beside it/,
    );
  });

  it("orders by version, not by run order: 1.10 after 1.9, a later folder's lower version after", () => {
    const files = pairUndos(
      [
        "a/U1.10__x.sql",
        "a/V1.10__x.sql",
        "b/U1.9__y.sql",
        "b/V1.9__y.sql",
        "b/U2__z.sql",
        "b/V2__z.sql",
      ].map((path) => ({ path })),
    );
    const records = recorded("a/V1.10__x.sql", "b/V1.9__y.sql", "b/V2__z.sql");
    assert.deepEqual(planUndo({ files, records, target: "1" }).map((s) => s.path), [
      "b/V2__z.sql",
      "a/V1.10__x.sql",
      "b/V1.9__y.sql",
    ]);
  });

  it("reads undo records of the version in any spelling", () => {
    const files = pairUndos(["V1.0__a.sql", "U001__a.sql"].map((path) => ({ path })));
    assert.deepEqual(planUndo({ files, records: recorded("V1.0__a.sql", "U001__a.sql") }), []);
    assert.deepEqual(planUndo({ files, records: recorded("V1.0__a.sql", "x/U1__old.sql") }), []);
  });

  it("refuses a version to undo whose file is gone, naming the recorded path", () => {
    const records = recorded("V1__init.sql", "V2__users.sql", "V3__slugs.sql", "old/V4__gone.sql");
    refusedPlan(
      ACCEPTANCE,
      records,
      undefined,
      "old/V4__gone.sql",
      /is recorded as applied at version 4, but its file is gone from this checkout, and so is its undo/,
    );
    refusedPlan(
      ACCEPTANCE,
      records,
      "2",
      "old/V4__gone.sql",
      /applied at version 4, above the target 2, but its file is gone/,
    );
    // The newest version: repair drops its record only with --force (a newer checkout's file?).
    refusedPlan(ACCEPTANCE, records, undefined, "old/V4__gone.sql", /with "repair --force"/);
    const between = recorded("V1__init.sql", "V2__users.sql", "V2.5__gone.sql", "V3__slugs.sql");
    refusedPlan(ACCEPTANCE, between, "2", "V2.5__gone.sql", /drop its record with "repair"$/);
    // Below the target, or undone already, a gone file is no version to undo.
    assert.equal(planUndo({ files: ACCEPTANCE, records, target: "4" }).length, 0);
    records.set("old/U4__gone.sql", "h");
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "2" }).map((s) => s.path), [
      "V3__slugs.sql",
    ]);
  });

  it("takes a record under another path than the file's as a gone file's", () => {
    // V2 renamed since it ran: its record is not its file's until migrate moves it.
    refusedPlan(
      ACCEPTANCE,
      recorded("V1__init.sql", "V2__old_name.sql"),
      "1",
      "V2__old_name.sql",
      /its file is gone/,
    );
  });

  it("names the newest version that cannot be undone, and how many more", () => {
    const files = pairUndos(["V1__a.sql", "V2__b.sql", "V3__c.sql"].map((path) => ({ path })));
    refusedPlan(
      files,
      recorded("V1__a.sql", "V2__b.sql", "V3__c.sql", "V5__gone.sql"),
      "0",
      "V5__gone.sql",
      /\(and 3 more version\(s\) to undo that cannot be: V3__c\.sql, V2__b\.sql, V1__a\.sql\)$/,
    );
  });

  it("ignores an undo record whose versioned record is gone, and repeatable records", () => {
    const records = recorded("V1__init.sql", "U9__gone.sql", "R__views.sql", "U1__old.sql");
    assert.deepEqual(planUndo({ files: ACCEPTANCE, records, target: "0" }), []);
  });
});

// ---- Property tests against a reference model --------------------------------------------------

// Versions are small integers, written in any of their equal spellings; the model reads them back
// as numbers, apart from the code under test.
const spelling = (n: number) => fc.constantFrom(`${n}`, `${n}.0`, `00${n}`, `${n}_0`);
const folder = fc.constantFrom("", "a/", "b/");
const numberOf = (path: string, prefix: "V" | "U"): number | undefined => {
  const found = new RegExp(`(?:^|/)${prefix}(\\d+)(?:[._]0)*__`).exec(path);
  return found === null ? undefined : Number(found[1]);
};
const downRecord = (path: string) => path.replace(/(^|\/)V(?=[^/]*$)/, "$1U");

interface Entry {
  /** Its V file here, where it has one: its folder, and how it is undone. */
  readonly file: { readonly dir: string; readonly undo: "none" | "file" | "down" } | undefined;
  /** Its V record: under its file's path, under another (its file gone), or none. */
  readonly record: "none" | "own" | "gone";
  /** An undo record of its version. */
  readonly undone: boolean;
}

const entry: fc.Arbitrary<Entry> = fc.record({
  file: fc.option(
    fc.record({
      dir: folder,
      undo: fc.constantFrom("none" as const, "file" as const, "down" as const),
    }),
    { nil: undefined },
  ),
  record: fc.constantFrom("none" as const, "own" as const, "gone" as const),
  undone: fc.boolean(),
});

// A connection: its entries by version (1, 2, …), each version spelled one way.
const connection = fc.array(entry, { minLength: 1, maxLength: 8 }).chain((entries) =>
  fc.tuple(fc.constant(entries), fc.tuple(...entries.map((_, i) => spelling(i + 1))))
);

interface Built {
  readonly files: UndoableFile[];
  readonly records: Map<string, string>;
  /** What the model reads of version n: its V file's path and undo, its recorded path. */
  readonly byVersion: Map<number, { file?: UndoableFile; recordPath?: string }>;
}

function build(entries: readonly Entry[], spellings: readonly string[]): Built {
  const sources: { path: string; hasDown?: boolean }[] = [];
  const records = new Map<string, string>();
  const byVersion = new Map<number, { file?: UndoableFile; recordPath?: string }>();
  entries.forEach((e, i) => {
    const n = i + 1, v = spellings[i];
    const path = e.file === undefined
      ? undefined
      : `${e.file.dir}V${v}__f${e.file.undo === "down" ? ".ts" : ".sql"}`;
    if (e.file !== undefined) {
      sources.push({ path: path!, ...(e.file.undo === "down" ? { hasDown: true } : {}) });
      if (e.file.undo === "file") sources.push({ path: `${e.file.dir}U${n}__f.sql` });
    }
    const recordPath = e.record === "none"
      ? undefined
      : e.record === "own" && path !== undefined
      ? path
      : `old/V${v}__gone.sql`;
    if (recordPath !== undefined) records.set(recordPath, `h${n}`);
    if (e.undone) {
      records.set(
        recordPath === path && e.file?.undo === "down" ? downRecord(path!) : `old/U${n}__u.sql`,
        `u${n}`,
      );
    }
    byVersion.set(n, { ...(recordPath === undefined ? {} : { recordPath }) });
  });
  sources.sort((a, b) => compareVersionPaths(a.path, b.path));
  const files = pairUndos(sources);
  for (const file of files) byVersion.get(numberOf(file.path, "V")!)!.file = file;
  return { files, records, byVersion };
}

// The model's state of a version: applied where its V record is there and no undo record of it.
function appliedVersions(records: ReadonlyMap<string, string>): Set<number> {
  const undone = new Set(
    [...records.keys()].map((p) => numberOf(p, "U")).filter((n) => n !== undefined),
  );
  return new Set(
    [...records.keys()].map((p) => numberOf(p, "V")).filter((n): n is number =>
      n !== undefined && !undone.has(n)
    ),
  );
}

type ModelVersion = [number, { file?: UndoableFile; recordPath?: string }];

// The model: versions applied and not undone, by their recorded path, newest first.
function appliedNewestFirst(entries: readonly Entry[], built: Built): ModelVersion[] {
  return [...built.byVersion].filter(([n, v]) =>
    v.recordPath !== undefined && !entries[n - 1].undone
  ).sort(([a], [b]) => b - a);
}

// What planUndo must do with the versions the model chose: refuse, naming the newest one that
// cannot be undone (its file gone, renamed, or without an undo), or plan exactly those.
function assertPlansChosen(request: Parameters<typeof planUndo>[0], chosen: ModelVersion[]) {
  const cannot = chosen.filter(([, v]) =>
    v.file === undefined || v.recordPath !== v.file.path || v.file.undo === undefined
  );
  if (cannot.length > 0) {
    assert.throws(() => planUndo(request), (error: unknown) => {
      assert.ok(error instanceof MigrationFileError);
      assert.equal(error.file, cannot[0][1].recordPath);
      return true;
    });
    return;
  }
  const plan = planUndo(request);
  assert.deepEqual(
    plan,
    chosen.map(([, v]) => ({
      path: v.file!.path,
      undo: v.file!.undo!,
      record: v.file!.undo === "down" ? downRecord(v.file!.path) : v.file!.undo!,
    })),
  );
  return plan;
}

describe("planUndo, against a reference model", () => {
  const target = fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined });

  it("plans the applied, not undone versions above the target, newest first, or refuses iff one cannot be undone", () => {
    fc.assert(
      fc.property(connection, target, fc.boolean(), ([entries, spellings], t, spellTarget) => {
        const built = build(entries, spellings);
        const { files, records } = built;
        const request = {
          files,
          records,
          ...(t === undefined ? {} : { target: spellTarget ? `${t}.0` : `${t}` }),
        };
        const applied = appliedNewestFirst(entries, built);
        const chosen = t === undefined ? applied.slice(0, 1) : applied.filter(([n]) => n > t);
        const plan = assertPlansChosen(request, chosen);
        if (plan === undefined) return;
        // Newest first, each above the target, each applied and not undone.
        const versions = plan.map((s) => numberOf(s.path, "V")!);
        assert.deepEqual(versions, [...versions].sort((a, b) => b - a));
        const now = appliedVersions(records);
        for (const n of versions) {
          assert.ok(now.has(n), `version ${n} is applied`);
          if (t !== undefined) assert.ok(n > t, `version ${n} is above ${t}`);
        }
      }),
      propertyOptions(200),
    );
  });

  it("undoes the count newest applied versions, or down to an inclusive target, against the model", () => {
    const range = fc.oneof(
      fc.record({ count: fc.integer({ min: 1, max: 9 }) }),
      fc.record({ target: fc.integer({ min: 0, max: 9 }), inclusive: fc.constant(true as const) }),
    );
    fc.assert(
      fc.property(connection, range, ([entries, spellings], r) => {
        const built = build(entries, spellings);
        const request = {
          files: built.files,
          records: built.records,
          ...("count" in r
            ? { count: r.count }
            : { target: `${r.target}`, inclusive: true as const }),
        };
        const applied = appliedNewestFirst(entries, built);
        const chosen = "count" in r
          ? applied.slice(0, r.count)
          : applied.filter(([n]) => n >= r.target);
        assertPlansChosen(request, chosen);
      }),
      propertyOptions(200),
    );
  });

  it("stops at the baseline: a plan that reaches a version at or below it is refused, naming it", () => {
    fc.assert(
      fc.property(
        connection,
        target,
        fc.integer({ min: 0, max: 9 }),
        fc.boolean(),
        ([entries, spellings], t, b, spellBaseline) => {
          const built = build(entries, spellings);
          const { files, records } = built;
          records.set(baselineMarkerPath(spellBaseline ? `${b}.0` : `${b}`), "h");
          const request = { files, records, ...(t === undefined ? {} : { target: `${t}` }) };
          const applied = appliedNewestFirst(entries, built);
          const chosen = t === undefined ? applied.slice(0, 1) : applied.filter(([n]) => n > t);
          const below = chosen.filter(([n]) => n <= b);
          if (below.length > 0) {
            assert.throws(() => planUndo(request), (error: unknown) => {
              assert.ok(error instanceof MigrationFileError);
              assert.equal(error.file, below[0][1].recordPath);
              assert.match(error.message, new RegExp(`baseline \\(version ${b}(\\.0)?,`));
              return true;
            });
            return;
          }
          // Above the baseline, the plan is the one made without it, or the same refusal.
          const without = new Map(records);
          without.delete(baselineMarkerPath(spellBaseline ? `${b}.0` : `${b}`));
          let expected: unknown, got: unknown;
          try {
            expected = planUndo({ ...request, records: without });
          } catch (error) {
            expected = (error as Error).message;
          }
          try {
            got = planUndo(request);
          } catch (error) {
            got = (error as Error).message;
          }
          assert.deepEqual(got, expected);
        },
      ),
      propertyOptions(200),
    );
  });

  it("applying to N, undoing to M and applying again leaves the records applying to N leaves", () => {
    // Every version has a V file and an undo; the starting records hold versions up to N only.
    const full = fc.array(
      fc.record({
        dir: folder,
        down: fc.boolean(),
        start: fc.constantFrom("pending", "applied", "undone"),
      }),
      { minLength: 1, maxLength: 8 },
    ).chain((entries) =>
      fc.tuple(
        fc.constant(entries),
        fc.tuple(...entries.map((_, i) => spelling(i + 1))),
        fc.integer({ min: 0, max: entries.length }),
        fc.integer({ min: 0, max: entries.length + 1 }),
      )
    );
    fc.assert(
      fc.property(full, ([entries, spellings, n, m]) => {
        const sources = entries.flatMap((e, i) => {
          const v = spellings[i];
          return e.down
            ? [{ path: `${e.dir}V${v}__f.ts`, hasDown: true }]
            : [{ path: `${e.dir}V${v}__f.sql` }, { path: `${e.dir}U${i + 1}__f.sql` }];
        }).sort((a, b) => compareVersionPaths(a.path, b.path));
        const files = pairUndos(sources);
        const start = new Map<string, string>();
        for (const file of files) {
          const k = numberOf(file.path, "V")!;
          const state = entries[k - 1].start;
          if (k > n || state === "pending") continue;
          start.set(file.path, `h${k}`);
          if (state === "undone") {
            start.set(file.undo === "down" ? downRecord(file.path) : file.undo!, `u${k}`);
          }
        }
        // The model of migrate --target: writes the record of each file up to it that is not
        // applied, and drops the undo records of its version.
        const migrate = (records: Map<string, string>, to: number) => {
          const out = new Map(records);
          for (const file of files) {
            const k = numberOf(file.path, "V")!;
            if (k > to || appliedVersions(out).has(k)) continue;
            out.set(file.path, `h${k}`);
            for (const path of [...out.keys()]) if (numberOf(path, "U") === k) out.delete(path);
          }
          return out;
        };
        // The model of undo: each step's record written, in the plan's order.
        const undo = (records: Map<string, string>, to?: number) => {
          const out = new Map(records);
          const plan = planUndo({
            files,
            records: out,
            ...(to === undefined ? {} : { target: `${to}` }),
          });
          for (const step of plan) out.set(step.record, `u${numberOf(step.path, "V")}`);
          return out;
        };
        const straight = migrate(start, n);
        assert.deepEqual(
          appliedVersions(straight),
          new Set(files.map((_, i) => i + 1).filter((k) => k <= n)),
        );
        const undone = undo(straight, m);
        assert.deepEqual(
          appliedVersions(undone),
          new Set([...appliedVersions(straight)].filter((k) => k <= m)),
        );
        // (c) applied again: the very records applying straight to N left.
        assert.deepEqual(migrate(undone, n), straight);
        // One version at a time, without a target, reaches the same records as the target.
        let stepwise = straight;
        for (let k = n; k > m; k--) stepwise = undo(stepwise);
        assert.deepEqual(stepwise, undone);
      }),
      propertyOptions(200),
    );
  });
});
