// Which resources `--drift` compares, and with what (src/migrate/search/drift/drift_plan.ts): pure.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type DriftCheck,
  driftChecks,
  envelopeEffects,
  matches,
} from "../../../../src/migrate/search/drift/drift_plan.ts";
import { planDocument } from "../../../../src/migrate/search/plan/plan_request.ts";
import type { SearchFile, SearchPlannedFile } from "../../../../src/migrate/search/search_file.ts";
import type { CodeFile } from "../../../../src/migrate/code/code_file.ts";
import type { FileAction, FileReport, FileResult } from "../../../../src/migrate/run_report.ts";
import type { FileRecord } from "../../../../src/migrate/driver.ts";
import { propertyOptions } from "../../../property.ts";

function file(path: string, doc: unknown): SearchFile {
  const r = planDocument(path, doc);
  return {
    path,
    hash: `h-${path}`,
    runOnce: r.runOnce === true,
    request: `${r.method} ${r.path}`,
    searchRequest: r,
  };
}

/**
 * The files with an action each (`skip` unless said), as the runner decides them. A file with a
 * record (`skip`, `changed`, `reapply`) was recorded at its position's minute, unless `records`
 * says otherwise; `records` also holds records of files no longer in the folder.
 */
function checks(
  files: readonly SearchPlannedFile[],
  actions: Record<string, FileAction | [FileAction, FileResult]> = {},
  records: Record<string, FileRecord> = {},
): DriftCheck[] {
  const held = new Map<string, FileRecord>();
  const decided: FileReport[] = files.map((f, i) => {
    const a = actions[f.path] ?? "skip";
    const [action, result] = Array.isArray(a) ? a : [a, undefined];
    if (["skip", "changed", "reapply"].includes(action)) {
      held.set(f.path, { hash: f.hash, executedAt: minute(i) });
    }
    return { path: f.path, action, ...(result === undefined ? {} : { result }) };
  });
  for (const [path, record] of Object.entries(records)) held.set(path, record);
  return driftChecks(files, { decided, records: held });
}

const minute = (n: number) => new Date(Date.UTC(2026, 10, 1, 10, n)).toISOString();

const described = (list: readonly DriftCheck[]) =>
  list.map((c) => `${c.resource} <- ${c.file.path}`);

const logs = (v: number) => ({ index_patterns: ["logs*"], version: v });
const users = {
  settings: { number_of_shards: 1 },
  mappings: { properties: { name: { type: "text" } } },
  aliases: { people: {} },
};

describe("driftChecks", () => {
  it("takes, per resource, the last file in run order, when its record matches", () => {
    const files = [
      file("1.0/logs-template.json", logs(1)),
      file("1.0/hot-policy.json", { policy: { states: [] } }),
      file("1.0/users-index.json", users),
      file("2.0/logs-template.json", logs(2)),
      file("2.0/seed.json", { method: "POST", path: "/users/_doc", body: { name: "a" } }),
    ];
    assert.deepEqual(described(checks(files)), [
      "policy hot <- 1.0/hot-policy.json",
      "index users <- 1.0/users-index.json",
      "template logs <- 2.0/logs-template.json",
    ]);
    // The last file pending or changed: it is about to change the resource, nothing is compared.
    for (const action of ["apply", "reapply", "rename"] as const) {
      assert.deepEqual(
        described(checks(files, { "2.0/logs-template.json": action })),
        ["policy hot <- 1.0/hot-policy.json", "index users <- 1.0/users-index.json"],
        action,
      );
    }
    const template = checks(files).find((c) => c.kind === "template")!;
    assert.deepEqual(template.kind === "template" && template.body, {
      index_patterns: ["logs*"],
      version: 2,
    });
  });

  it("leaves an index whose alias a later reindex moved, and checks the last reindex of an alias", () => {
    const files = [
      file("1.0/orders_v1-index.json", { aliases: { orders: {} } }),
      file("1.0/other-index.json", { aliases: { others: {} } }),
      file("2.0/orders-reindex.json", {
        alias: "orders",
        index: "orders_v2",
        mappings: { properties: { a: { type: "keyword" } } },
      }),
    ];
    assert.deepEqual(described(checks(files)), [
      "index other <- 1.0/other-index.json",
      "index orders_v2 <- 2.0/orders-reindex.json",
      "alias orders <- 2.0/orders-reindex.json",
    ]);
    const v2 = checks(files).find((c) => c.resource === "index orders_v2")!;
    assert.deepEqual(v2.kind === "index" && v2.definition, {
      mappings: { properties: { a: { type: "keyword" } } },
    });
    // Not applied yet: the index file still says what is live.
    assert.deepEqual(described(checks(files, { "2.0/orders-reindex.json": "apply" })), [
      "index orders_v1 <- 1.0/orders_v1-index.json",
      "index other <- 1.0/other-index.json",
    ]);
    const again = [
      ...files,
      file("3.0/orders-reindex.json", { alias: "orders", index: "orders_v3", delete_source: true }),
    ];
    assert.deepEqual(described(checks(again)), [
      "index other <- 1.0/other-index.json",
      "index orders_v3 <- 3.0/orders-reindex.json",
      "alias orders <- 3.0/orders-reindex.json",
    ]);
    // A reindex that deletes its explicit source takes that index out too.
    const deleted = [
      file("1.0/a-index.json", { settings: {} }),
      file("2.0/b-reindex.json", { alias: "b", index: "b_v2", source: "a", delete_source: true }),
    ];
    assert.deepEqual(described(checks(deleted)), [
      "index b_v2 <- 2.0/b-reindex.json",
      "alias b <- 2.0/b-reindex.json",
    ]);
  });

  it("adds what later applied envelopes send to an index, and drops what they replace", () => {
    const files = [
      file("1.0/users-index.json", users),
      file("1.0/logs-template.json", logs(1)),
      file("1.1/created-at.json", {
        method: "PUT",
        path: "/users/_mapping",
        body: { properties: { created_at: { type: "date" } } },
      }),
      file("1.2/by-alias.json", {
        method: "PUT",
        path: "/people/_mapping?timeout=5s",
        body: { properties: { name: { type: "text", fields: { raw: { type: "keyword" } } } } },
      }),
      file("1.3/refresh.json", {
        method: "PUT",
        path: "/users,other/_settings",
        body: { index: { refresh_interval: "5s" } },
      }),
      file("1.4/pending.json", {
        method: "PUT",
        path: "/users/_mapping",
        body: { properties: { later: { type: "long" } } },
      }),
      file("1.5/aliases.json", {
        method: "POST",
        path: "/_aliases",
        body: { actions: [{ remove: { index: "users", alias: "people" } }] },
      }),
    ];
    const [index, template] = checks(files, { "1.4/pending.json": "apply" });
    assert.equal(template.resource, "template logs");
    assert.deepEqual(index.kind === "index" && index.definition, {
      settings: { "index.number_of_shards": "1", "index.refresh_interval": "5s" },
      mappings: {
        properties: {
          name: { type: "text", fields: { raw: { type: "keyword" } } },
          created_at: { type: "date" },
        },
      },
      aliases: {},
    });
    // Applied in this very run: it counts.
    const [ran] = checks(files, { "1.4/pending.json": ["apply", "sent"] });
    assert.ok(
      ran.kind === "index" &&
        Object.hasOwn((ran.definition.mappings as { properties: object }).properties, "later"),
    );
    const replaced = [
      ...files,
      file("2.0/drop.json", { method: "DELETE", path: "/users" }),
      file("2.0/logs.json", { method: "PUT", path: "/_index_template/logs", body: logs(3) }),
    ];
    assert.deepEqual(described(checks(replaced)), []);
  });

  it("marks what a later applied code file may have changed, so that it is never applied again", () => {
    const retag: CodeFile = {
      path: "2.0/retag.ts",
      hash: "h-retag",
      runOnce: true,
      code: { kind: "file", url: "file:///m/2.0/retag.ts" },
    };
    const files: SearchPlannedFile[] = [
      file("1.0/logs-template.json", logs(1)),
      file("1.0/users-index.json", users),
      retag,
      file("3.0/orders-index.json", { settings: {} }),
    ];
    const after = (list: readonly DriftCheck[]) =>
      list.map((c) => `${c.resource} <- ${c.file.path}, ${c.codeAfter ?? "-"}`);
    assert.deepEqual(after(checks(files)), [
      "template logs <- 1.0/logs-template.json, 2.0/retag.ts",
      "index users <- 1.0/users-index.json, 2.0/retag.ts",
      "index orders <- 3.0/orders-index.json, -",
    ]);
    // Not run (pending, or failed): it changed nothing yet.
    const notRun: (FileAction | [FileAction, FileResult])[] = ["apply", ["apply", "failed"]];
    const codeOf = (list: readonly DriftCheck[]) => after(list).map((l) => l.split(", ")[1]);
    for (const action of notRun) {
      assert.deepEqual(codeOf(checks(files, { "2.0/retag.ts": action })), ["-", "-", "-"]);
    }
    // Run in this very run: after every file that was already recorded.
    assert.deepEqual(
      codeOf(checks(files, { "2.0/retag.ts": ["apply", "sent"] })),
      ["2.0/retag.ts", "2.0/retag.ts", "2.0/retag.ts"],
    );
    // Recorded, whatever it is decided now (edited, or above a --target): it ran.
    for (const action of ["changed", "above-target"] as const) {
      assert.deepEqual(
        codeOf(checks(files, { "2.0/retag.ts": action }, {
          "2.0/retag.ts": { hash: "old", executedAt: minute(2) },
        })),
        ["2.0/retag.ts", "2.0/retag.ts", "-"],
        action,
      );
    }
  });

  it("a code file that ran after a file by its record, or whose file is gone, counts too", () => {
    const late: CodeFile = {
      path: "0.5/V0_5__late.ts",
      hash: "h-late",
      runOnce: true,
      code: { kind: "file", url: "file:///m/0.5/V0_5__late.ts" },
    };
    const files: SearchPlannedFile[] = [
      late,
      file("1.0/logs-template.json", logs(1)),
      file("2.0/users-index.json", users),
    ];
    const codeOf = (list: readonly DriftCheck[]) => list.map((c) => c.codeAfter ?? "-");
    // Recorded before both: it ran before them.
    assert.deepEqual(codeOf(checks(files)), ["-", "-"]);
    // Added late: it sorts first, and ran after the template's file, before the index's.
    const ranLate = { hash: "h-late", executedAt: minute(1) };
    assert.deepEqual(codeOf(checks(files, {}, { [late.path]: ranLate })), [late.path, "-"]);
    // At the same minute as a file: it may have run after it.
    assert.deepEqual(
      codeOf(checks(files, {}, { [late.path]: { hash: "h-late", executedAt: minute(2) } })),
      [late.path, late.path],
    );
    // A record that does not say when: its place in the folder decides.
    assert.deepEqual(codeOf(checks(files, {}, { [late.path]: { hash: "h-late" } })), ["-", "-"]);
    // Recorded, and no longer in the folder: when it ran is not known.
    const gone = { "9.0/V9__gone.js": { hash: "h", executedAt: minute(0) } };
    assert.deepEqual(codeOf(checks(files.slice(1), {}, gone)), [
      "9.0/V9__gone.js",
      "9.0/V9__gone.js",
    ]);
    // A record of a JSON file no longer in the folder is no code.
    const json = { "9.0/gone.json": { hash: "h", executedAt: minute(9) } };
    assert.deepEqual(codeOf(checks(files.slice(1), {}, json)), ["-", "-"]);
  });

  it("matches index expressions: lists, stars, _all, aliases; never exclusions or date math", () => {
    assert.ok(matches("logs-*", "logs-1", []));
    assert.ok(matches("a,b*", "bc", []));
    assert.ok(matches("_all", "x", []));
    assert.ok(matches("people", "users", ["people"]));
    assert.ok(matches("*s*s*", "sss", []));
    assert.ok(!matches("-users", "users", []));
    assert.ok(!matches("<logs-{now/d}>", "logs", []));
    assert.ok(!matches("logs-*", "logs", []));
    assert.ok(!matches("a*b", "a".repeat(5000), []), "no runaway backtracking");
    const plain = fc.stringMatching(/^[a-z0-9_.*?+]{1,8}$/);
    fc.assert(
      fc.property(plain, fc.stringMatching(/^[a-z0-9_.?+]{0,8}$/), (a, b) => {
        const prefix = a.replaceAll("*", "");
        if (prefix === "") return;
        assert.ok(matches(prefix, prefix, []), `${prefix} matches itself`);
        assert.ok(matches(`${prefix}*`, `${prefix}${b}`, []), `${prefix}* matches ${prefix}${b}`);
        assert.ok(matches(a, a.replaceAll("*", "x"), []), `${a} matches its stars as x`);
      }),
      propertyOptions(),
    );
  });

  it("reads what an envelope does from its method and path", () => {
    assert.deepEqual(envelopeEffects("GET", "/users/_mapping", undefined), []);
    assert.deepEqual(envelopeEffects("DELETE", "/users/", undefined), [
      { kind: "replaces", resource: "index", names: "users" },
    ]);
    assert.deepEqual(envelopeEffects("DELETE", "/users", undefined), [
      { kind: "replaces", resource: "index", names: "users" },
    ]);
    assert.deepEqual(envelopeEffects("PUT", "/_plugins/_ism/policies/Hot%20Warm", {}), [
      { kind: "replaces", resource: "policy", names: "Hot Warm" },
    ]);
    assert.deepEqual(envelopeEffects("DELETE", "/_ilm/policy/Old%20Logs", undefined), [
      { kind: "replaces", resource: "policy", names: "Old Logs" },
    ]);
    assert.deepEqual(envelopeEffects("PUT", "/users/_alias/a,b", undefined), [
      { kind: "aliases", names: ["a", "b"] },
    ]);
    assert.deepEqual(envelopeEffects("POST", "/_aliases", { actions: "nonsense" }), [
      { kind: "aliases", names: ["*"] },
    ]);
    assert.deepEqual(envelopeEffects("POST", "/users/_doc", {}), []);
    assert.deepEqual(envelopeEffects("POST", "/_reindex", {}), []);
  });
});
