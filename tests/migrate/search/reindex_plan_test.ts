import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type AliasMember,
  decideReindex,
  namesToCheck,
  type ReindexObservation,
  type ReindexProgress,
  type ReindexStep,
} from "../../../src/migrate/search/reindex_plan.ts";
import type { ReindexSpec } from "../../../src/migrate/search/search_request.ts";
import { propertyOptions } from "../../property.ts";

const spec = (extra: Partial<ReindexSpec> = {}): ReindexSpec => ({
  alias: "products",
  index: "products-v2",
  deleteSource: false,
  ...extra,
});

const observe = (
  o: Partial<Omit<ReindexObservation, "exists">> & { indices?: string[] },
): ReindexObservation => {
  const indices = new Set(o.indices ?? []);
  return {
    spec: o.spec ?? spec(),
    hash: o.hash ?? "h1",
    ...(o.progress === undefined ? {} : { progress: o.progress }),
    members: o.members ?? [],
    exists: (name) => indices.has(name),
  };
};

const progress = (extra: Partial<ReindexProgress> = {}): ReindexProgress => ({
  source: "products-v1",
  index: "products-v2",
  alias: "products",
  hash: "h1",
  started_at: "2026-11-23T00:00:00Z",
  ...extra,
});

const FULL: ReindexStep[] = [
  "note",
  "create",
  "block",
  "copy",
  "verify",
  "swap",
  "unblock",
  "forget",
];

describe("decideReindex", () => {
  it("starts from the alias's write index", () => {
    const d = decideReindex(observe({
      members: [{ index: "products-v0", write: false }, { index: "products-v1", write: true }],
    }));
    assert.deepEqual(d, { kind: "run", source: "products-v1", resumed: false, steps: FULL });
  });

  it("takes an alias's only index as the source, and deletes it last when asked", () => {
    const d = decideReindex(observe({
      spec: spec({ deleteSource: true }),
      members: [{ index: "products-v1", write: false }],
    }));
    assert.equal(d.kind === "run" && d.source, "products-v1");
    assert.deepEqual(d.kind === "run" && d.steps.slice(-3), ["unblock", "delete-source", "forget"]);
  });

  it("refuses, naming why, what it cannot do safely", () => {
    const reason = (o: ReindexObservation) => {
      const d = decideReindex(o);
      return d.kind === "refuse" ? d.reason : `not refused: ${JSON.stringify(d)}`;
    };
    assert.match(reason(observe({})), /alias "products" does not exist: give "source"/);
    assert.match(
      reason(observe({ indices: ["products"] })),
      /"products" is an index, not an alias/,
    );
    assert.match(
      reason(observe({
        members: [{ index: "a", write: false }, { index: "b", write: false }],
      })),
      /none is its write index/,
    );
    assert.match(
      reason(observe({
        spec: spec({ source: "other" }),
        members: [{ index: "products-v1", write: true }],
        indices: ["other"],
      })),
      /the source must be the alias's index/,
    );
    assert.match(
      reason(observe({
        spec: spec({ source: "a" }),
        members: [{ index: "a", write: false }, { index: "b", write: true }],
      })),
      /the write index of alias "products" is "b"/,
    );
    assert.match(
      reason(observe({ spec: spec({ source: "gone" }) })),
      /the source index "gone" does not exist/,
    );
    assert.match(
      reason(observe({
        members: [{ index: "products-v1", write: true }],
        indices: ["products-v2"],
      })),
      /"products-v2" exists already, and this file did not create it/,
    );
    assert.match(
      reason(observe({ progress: progress({ source: "gone" }), indices: ["products-v2"] })),
      /"gone" this reindex was copying from is gone/,
    );
    assert.match(
      reason(observe({
        progress: progress(),
        members: [{ index: "elsewhere", write: true }],
        indices: ["products-v1", "products-v2"],
      })),
      /was moved to "elsewhere" while this reindex/,
    );
  });

  it("copies from an index outside any alias when given, and creates the alias", () => {
    const d = decideReindex(observe({ spec: spec({ source: "legacy" }), indices: ["legacy"] }));
    assert.deepEqual(d, { kind: "run", source: "legacy", resumed: false, steps: FULL });
  });

  it("resumes its own run from the source it noted, wherever the steps stopped", () => {
    const before = decideReindex(observe({
      progress: progress(),
      members: [{ index: "products-v1", write: true }],
      indices: ["products-v2"],
    }));
    assert.deepEqual(before, {
      kind: "run",
      source: "products-v1",
      resumed: true,
      steps: FULL.slice(1),
    });
    const after = decideReindex(observe({
      progress: progress(),
      members: [{ index: "products-v2", write: true }],
      indices: ["products-v1"],
    }));
    assert.deepEqual(after, {
      kind: "run",
      source: "products-v1",
      resumed: true,
      steps: ["unblock", "forget"],
    });
    assert.deepEqual(
      decideReindex(observe({ members: [{ index: "products-v2", write: true }] })),
      { kind: "done" },
    );
  });

  it("undoes an earlier version's unfinished run before starting this one", () => {
    const earlier = progress({ hash: "h0" });
    const d = decideReindex(observe({
      progress: earlier,
      members: [{ index: "products-v1", write: true }],
      indices: ["products-v2"],
    }));
    assert.deepEqual(d, {
      kind: "run",
      source: "products-v1",
      resumed: false,
      steps: ["unblock-earlier", "discard", ...FULL],
      earlier,
    });
  });

  it("asks about every name it decides on, once each", () => {
    assert.deepEqual(
      namesToCheck(spec({ source: "products-v1" }), progress({ index: "products-v2" })),
      ["products", "products-v2", "products-v1"],
    );
  });
});

// A model cluster: indices with document ids, write blocks, one alias, the progress document.
interface Model {
  indices: Map<string, Set<number>>;
  blocked: Set<string>;
  members: AliasMember[];
  progress?: ReindexProgress;
  acked: Set<number>;
  next: number;
}

// What each step does to the model, as reindex.ts does it to the cluster.
function runStep(
  m: Model,
  step: ReindexStep,
  source: string,
  s: ReindexSpec,
  hash: string,
  earlier?: ReindexProgress,
) {
  switch (step) {
    case "unblock-earlier":
      m.blocked.delete(earlier!.source);
      break;
    case "discard":
      m.indices.delete(earlier!.index);
      break;
    case "note":
      m.progress = { source, index: s.index, alias: s.alias, hash, started_at: "" };
      break;
    case "create":
      if (!m.indices.has(s.index)) m.indices.set(s.index, new Set());
      break;
    case "block":
      m.blocked.add(source);
      break;
    case "copy":
      for (const id of m.indices.get(source)!) m.indices.get(s.index)!.add(id);
      break;
    case "verify":
      assert.equal(m.indices.get(s.index)!.size, m.indices.get(source)!.size, "verify");
      break;
    case "swap":
      m.members = [
        ...m.members.filter((x) => x.index !== source && x.index !== s.index),
        { index: s.index, write: true },
      ];
      break;
    case "unblock":
      m.blocked.delete(source);
      break;
    case "delete-source":
      m.indices.delete(source);
      break;
    case "forget":
      m.progress = undefined;
  }
}

// A client writing through the alias between any two steps: acknowledged only when not blocked.
function write(m: Model) {
  const target = m.members.find((x) => x.write)?.index;
  if (target === undefined || m.blocked.has(target)) return;
  const id = m.next++;
  m.indices.get(target)!.add(id);
  m.acked.add(id);
}

describe("decideReindex under runners killed at any step (model)", () => {
  it("ends with the alias on the new index holding every acknowledged write, nothing blocked", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(12), { maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        fc.nat(4),
        (kills, deleteSource, changeFile, changeAt) => {
          const m: Model = {
            indices: new Map([["products-v1", new Set([0, 1, 2])]]),
            blocked: new Set(),
            members: [{ index: "products-v1", write: true }],
            acked: new Set([0, 1, 2]),
            next: 3,
          };
          let s = spec({ deleteSource });
          let hash = "h1";
          // Each run stops after its kill's number of steps; the last run is never killed.
          for (const [run, kill] of [...kills, Infinity].entries()) {
            // A new version of the file (another index name) replaces one that did not finish.
            const swapped = m.members.some((x) => x.write && x.index === s.index);
            if (changeFile && run === changeAt && m.progress !== undefined && !swapped) {
              s = spec({ deleteSource, index: "products-v3" });
              hash = "h2";
            }
            const d = decideReindex({
              spec: s,
              hash,
              ...(m.progress ? { progress: m.progress } : {}),
              members: m.members,
              exists: (n) => m.indices.has(n),
            });
            assert.notEqual(d.kind, "refuse", JSON.stringify(d));
            if (d.kind !== "run") continue;
            for (const [i, step] of d.steps.entries()) {
              if (i >= kill) break;
              write(m);
              runStep(m, step, d.source, s, hash, d.earlier);
              write(m);
            }
          }
          const writeIndex = m.members.find((x) => x.write)?.index;
          assert.equal(writeIndex, s.index);
          const docs = m.indices.get(s.index)!;
          for (const id of m.acked) assert.ok(docs.has(id), `acknowledged write ${id} lost`);
          assert.deepEqual([...m.blocked], []);
          assert.equal(m.progress, undefined);
          assert.equal(m.indices.has("products-v1"), !deleteSource);
        },
      ),
      propertyOptions(300),
    );
  });
});
