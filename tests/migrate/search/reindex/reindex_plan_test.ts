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
  type SourceFacts,
} from "../../../../src/migrate/search/reindex/reindex_plan.ts";
import type { ReindexSpec } from "../../../../src/migrate/search/plan/search_request.ts";
import { propertyOptions } from "../../../property.ts";

const spec = (extra: Partial<ReindexSpec> = {}): ReindexSpec => ({
  alias: "products",
  index: "products-v2",
  deleteSource: false,
  unblockSource: false,
  ...extra,
});

const observe = (
  o: Partial<Omit<ReindexObservation, "exists" | "uuid">> & {
    indices?: string[];
    uuids?: Record<string, string>;
  },
): ReindexObservation => {
  const indices = new Set(o.indices ?? []);
  return {
    spec: o.spec ?? spec(),
    hash: o.hash ?? "h1",
    ...(o.progress === undefined ? {} : { progress: o.progress }),
    members: o.members ?? [],
    exists: (name) => indices.has(name),
    uuid: (name) => o.uuids?.[name],
    ...(o.source === undefined ? {} : { source: o.source }),
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
  "copy",
  "block",
  "catch-up",
  "verify",
  "swap",
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
    assert.deepEqual(d.kind === "run" && d.steps.slice(-3), ["swap", "delete-source", "forget"]);
  });

  it("keeps the source blocked after the swap, unless the file asks to lift it", () => {
    const members = [{ index: "products-v1", write: true }];
    const kept = decideReindex(observe({ members }));
    assert.deepEqual(kept.kind === "run" && kept.steps.slice(-2), ["swap", "forget"]);
    const lifted = decideReindex(observe({ spec: spec({ unblockSource: true }), members }));
    assert.deepEqual(lifted.kind === "run" && lifted.steps.slice(-3), [
      "swap",
      "unblock",
      "forget",
    ]);
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
      steps: ["forget"],
    });
    const lifting = decideReindex(observe({
      spec: spec({ unblockSource: true }),
      progress: progress(),
      members: [{ index: "products-v2", write: true }],
      indices: ["products-v1"],
    }));
    assert.deepEqual(lifting.kind === "run" && lifting.steps, ["unblock", "forget"]);
    assert.deepEqual(
      decideReindex(observe({ members: [{ index: "products-v2", write: true }] })),
      { kind: "done" },
    );
  });

  it("undoes an earlier version's unfinished run before starting this one", () => {
    const earlier = progress({ hash: "h0", uuid: "u1" });
    const d = decideReindex(observe({
      progress: earlier,
      members: [{ index: "products-v1", write: true }],
      indices: ["products-v2"],
      uuids: { "products-v2": "u1" },
    }));
    assert.deepEqual(d, {
      kind: "run",
      source: "products-v1",
      resumed: false,
      steps: ["unblock-earlier", "discard", "forget-earlier", ...FULL],
      earlier,
    });
  });

  it("deletes only the index the earlier version created, proven by its uuid", () => {
    for (const earlier of [progress({ hash: "h0", uuid: "u1" }), progress({ hash: "h0" })]) {
      const d = decideReindex(observe({
        progress: earlier,
        members: [{ index: "products-v1", write: true }],
        indices: ["products-v2"],
        uuids: { "products-v2": "someone-elses" },
      }));
      assert.equal(d.kind, "refuse");
      assert.match(
        d.kind === "refuse" ? d.reason : "",
        /not the one it created \(or it cannot tell\)/,
      );
      // The earlier run's block is lifted all the same: the alias is still on its source.
      assert.deepEqual(d.kind === "refuse" && d.release, earlier);
    }
  });

  it("adopts its own new index only when the uuid it noted matches", () => {
    const d = decideReindex(observe({
      progress: progress({ uuid: "u1" }),
      members: [{ index: "products-v1", write: true }],
      indices: ["products-v2"],
      uuids: { "products-v2": "u2" },
    }));
    assert.match(d.kind === "refuse" ? d.reason : "", /not the index this reindex created/);
  });

  it("starts from the earlier version's new index when that version's swap happened, its source left blocked", () => {
    const earlier = progress({ hash: "h0", index: "products-v2" });
    const d = decideReindex(observe({
      spec: spec({ index: "products-v3" }),
      progress: earlier,
      members: [{ index: "products-v2", write: true }],
    }));
    assert.deepEqual(d, {
      kind: "run",
      source: "products-v2",
      resumed: false,
      steps: ["forget-earlier", ...FULL],
      earlier,
    });
    // The same index name, changed after its own swap: refused, its source left blocked.
    const same = decideReindex(observe({
      progress: earlier,
      members: [{ index: "products-v2", write: true }],
    }));
    assert.equal(same.kind === "run" && same.thenRefuse?.includes("earlier version"), true);
    assert.deepEqual(same.kind === "run" && same.steps, []);
    // Moved there by hand, not by that version: what that version blocked is lifted.
    const byHand = decideReindex(observe({
      progress: progress({ hash: "h0", index: "products-v9" }),
      members: [{ index: "products-v2", write: true }],
    }));
    assert.deepEqual(byHand.kind === "run" && byHand.steps, ["unblock-earlier"]);
  });

  it("refuses a source that is an alias, blocked by someone else, or that would be deleted under another alias", () => {
    const reason = (facts: SourceFacts, extra: Partial<ReindexSpec> = {}) => {
      const d = decideReindex(observe({
        spec: spec(extra),
        members: [{ index: "products-v1", write: true }],
        source: facts,
      }));
      return d.kind === "refuse" ? d.reason : "";
    };
    const plain = { concrete: true, blocked: false, otherAliases: [] };
    assert.match(reason({ ...plain, concrete: false }), /is an alias or a data stream/);
    assert.match(reason({ ...plain, blocked: true }), /blocked already/);
    assert.match(
      reason({ ...plain, otherAliases: ["reports"] }, { deleteSource: true }),
      /delete_source would delete "products-v1" under its other alias\(es\) "reports"/,
    );
    assert.equal(reason({ ...plain, otherAliases: ["reports"] }), "");
  });

  it("asks about every name it decides on, once each", () => {
    assert.deepEqual(
      namesToCheck(spec({ source: "products-v1" }), progress({ index: "products-v2" })),
      ["products", "products-v2", "products-v1"],
    );
  });
});

// A model cluster: indices holding documents (id -> version), each with the sequence number of
// its last write, and a sequence number every write moves; write blocks, one alias, the progress
// document, and the `_reindex` tasks running. It has what a sick cluster adds: the writer updates
// and deletes too, between any two steps and between the catch-ups of the copy; the node running
// a copy may hang, its copy going on where nobody can cancel it and writing, once the node is
// back, what it read when it began; a block lifted by hand between any two steps before the
// swap; and a node that hangs as a run starts and comes back after it, writing once through the
// alias as it saw it then, to the index it was on.
interface ModelIndex {
  uuid: string;
  docs: Map<number, number>;
  seqs: Map<number, number>;
  seq: number;
  /** The documents copies wrote into it since a rebase last looked. */
  copied: Set<number>;
}
/** A `_reindex` task on the model cluster. */
interface Task {
  readonly id: string;
  /** The index it writes into, by name: a new index of that name gets its writes too. */
  readonly into: string;
  /** The source as the task read it when it began. */
  readonly snapshot: ReadonlyMap<number, number>;
  /** Its node hangs: the task cannot be cancelled or proven ended. */
  away: boolean;
  /**
   * That node is out of the cluster: a list of the tasks does not ask it (and so does not fail),
   * and only a copy noted by its id, or a start noted before it was sent, is known to be there.
   */
  left: boolean;
}

interface Model {
  indices: Map<string, ModelIndex>;
  blocked: Set<string>;
  members: AliasMember[];
  progress?: ReindexProgress | undefined;
  tasks: Task[];
  // What the cluster acknowledged: a document's last version, or null once deleted.
  acked: Map<number, number | null>;
  // The alias's write index as a hung node saw it when it hung: where it sends writes once back.
  stale?: string | undefined;
  next: number;
  uuids: number;
  taskIds: number;
}

/** What one run of the model meets. */
interface Trouble {
  /** The number of steps after which the runner is killed (Infinity: never). */
  readonly kill: number;
  /** The copy this run starts hangs with its node... */
  readonly hang: boolean;
  /** ...which then leaves the cluster. */
  readonly left: boolean;
  /** The answer to the copy's start is lost: the task runs, its id unknown to the runner. */
  readonly lostAnswer: boolean;
  /** The block is lifted by hand after this many steps (Infinity: never). */
  readonly liftAt: number;
  /** Hung nodes are back before this run (their copies then write what they read). */
  readonly back: boolean;
  /** A node hangs as this run starts, and comes back after it with the state it had. */
  readonly stale: boolean;
}

const newIndex = (m: Model): ModelIndex => ({
  uuid: `u${m.uuids++}`,
  docs: new Map(),
  seqs: new Map(),
  seq: 0,
  copied: new Set(),
});

// The copies overwrite: a document there already takes the version the copy read.
function applyCopy(m: Model, task: Task) {
  const to = m.indices.get(task.into);
  if (to === undefined) return;
  for (const [id, v] of task.snapshot) {
    to.docs.set(id, v);
    to.copied.add(id);
  }
}

// A node comes back: each copy it held writes what it read, then ends.
function nodesBack(m: Model) {
  for (const task of m.tasks.filter((t) => t.away)) applyCopy(m, task);
  m.tasks = m.tasks.filter((t) => !t.away);
}

class StepFailed extends Error {}

// reindex.ts's proof that no copy into the new index is going but `keep`: a hung member fails the
// list of tasks; the copies listed are cancelled; a noted copy whose node hangs, or a start noted
// without an answer while a node the list does not reach (out of the cluster) may hold it, fails
// the step; the other noted ones ended.
function stopOthers(m: Model, index: string, keep?: string) {
  if (m.tasks.some((t) => t.away && !t.left)) throw new StepFailed("a node did not answer");
  m.tasks = m.tasks.filter((t) => t.into !== index || t.id === keep || t.away);
  const copies = (m.progress?.copies ?? []).filter((id) => {
    if (id === keep) return true;
    const unproven = id === "?"
      ? m.tasks.some((t) => t.left)
      : m.tasks.some((t) => t.id === id && t.away);
    if (unproven) throw new StepFailed("a noted copy is not proven stopped");
    return false;
  });
  m.progress = { ...m.progress!, copies };
}

// What each step does to the model, as reindex.ts does it to the cluster, faults included.
function runSteps(
  m: Model,
  d: Extract<ReturnType<typeof decideReindex>, { kind: "run" }>,
  s: ReindexSpec,
  hash: string,
  trouble: Trouble,
  writes: () => void,
) {
  const { source, earlier } = d;
  const from = () => m.indices.get(source)!;
  const into = () => m.indices.get(s.index)!;
  let fence: number | undefined;
  let mayBeBlocked = d.resumed;
  // The copy the fault meets is the first this run starts.
  let started = false;
  // What catch_up.ts's prune and rebase keep: the documents of the source (id -> sequence
  // number) the new index holds.
  let baseline: Map<number, number> | undefined;
  const since = (): number | undefined => {
    const [uuid, seq] = (m.progress?.since ?? "").split("/");
    return uuid === from().uuid ? Number(seq) : undefined;
  };
  // One copy of the documents written after `after` (all when undefined), overwriting.
  const copy = (after: number | undefined) => {
    stopOthers(m, s.index);
    // Noted before it is sent: a start whose answer is lost leaves this.
    m.progress = { ...m.progress!, copies: [...(m.progress!.copies ?? []), "?"] };
    const fault = !started;
    started = true;
    const task: Task = {
      id: `n${m.taskIds++}`,
      into: s.index,
      snapshot: new Map(
        [...from().docs].filter(([id]) => after === undefined || from().seqs.get(id)! > after),
      ),
      away: fault && trouble.hang,
      left: fault && trouble.hang && trouble.left,
    };
    m.tasks.push(task);
    if (fault && trouble.lostAnswer) throw new StepFailed("the start got no answer");
    m.progress = {
      ...m.progress!,
      task: task.id,
      copies: [...(m.progress!.copies ?? []).filter((id) => id !== "?"), task.id],
    };
    // Waiting for a copy whose node hangs times out.
    if (task.away) throw new StepFailed("the copy got no answer");
    applyCopy(m, task);
    m.tasks = m.tasks.filter((t) => t !== task);
    const { task: _t, ...rest } = m.progress!;
    m.progress = { ...rest, copies: (rest.copies ?? []).filter((id) => id !== task.id) };
  };
  const catchUp = () => {
    const checkpoint = from().seq;
    copy(since());
    m.progress = { ...m.progress!, since: `${from().uuid}/${checkpoint}` };
  };
  // The new index holds exactly the source's documents up to `upTo`, as catch_up.ts makes it,
  // looking only where it looks: every document the first time (the prune), then the documents
  // of the baseline whose sequence number changed, and those copied since.
  const rebase = (upTo: number) => {
    const looked = baseline === undefined ? [...into().docs.keys()] : [
      ...[...baseline].filter(([id, seq]) => from().seqs.get(id) !== seq).map(([id]) => id),
      ...into().copied,
    ];
    baseline ??= new Map();
    into().copied.clear();
    for (const id of looked) {
      const seq = from().seqs.get(id);
      if (seq !== undefined && seq <= upTo) baseline.set(id, seq);
      else {
        baseline.delete(id);
        into().docs.delete(id);
      }
    }
  };
  const swapAt = d.steps.indexOf("swap");
  for (const [i, step] of d.steps.entries()) {
    if (i >= trouble.kill) return;
    // By hand, while the alias is on the source: after the swap nothing asks for it.
    if (i === trouble.liftAt && !moved(m, s)) m.blocked.delete(source);
    writes();
    try {
      switch (step) {
        case "unblock-earlier":
          if (earlier!.source === source) mayBeBlocked = true;
          stopOthers(m, earlier!.index);
          m.blocked.delete(earlier!.source);
          break;
        case "forget-earlier":
          m.progress = undefined;
          break;
        case "discard":
          m.indices.delete(earlier!.index);
          break;
        case "note":
          m.progress = { source, index: s.index, alias: s.alias, hash, started_at: "" };
          break;
        case "create":
          if (!m.indices.has(s.index)) m.indices.set(s.index, newIndex(m));
          m.progress = { ...m.progress!, uuid: into().uuid };
          break;
        case "copy": {
          const { task: _t, ...rest } = m.progress!;
          m.progress = rest;
          if (m.blocked.has(source)) {
            mayBeBlocked = true;
            break;
          }
          if (since() === undefined) catchUp();
          writes();
          catchUp();
          writes();
          rebase(since()!);
          writes();
          catchUp();
          writes();
          rebase(since()!);
          break;
        }
        case "block":
          mayBeBlocked = true;
          m.blocked.add(source);
          fence = from().seq;
          break;
        case "catch-up":
          copy(since());
          m.progress = { ...m.progress!, since: `${from().uuid}/${from().seq}` };
          rebase(Infinity);
          break;
        case "verify":
          if (into().docs.size !== from().docs.size) throw new StepFailed("counts differ");
          break;
        case "swap":
          stopOthers(m, s.index);
          if (!m.blocked.has(source) || from().seq !== fence) {
            throw new StepFailed("the block was lifted, or the source took writes");
          }
          m.members = [
            ...m.members.filter((x) => x.index !== source && x.index !== s.index),
            { index: s.index, write: true },
          ];
          break;
        case "unblock":
          m.blocked.delete(source);
          break;
        case "delete-source":
          // Its settings go with it, the block included.
          m.indices.delete(source);
          m.blocked.delete(source);
          break;
        case "forget":
          m.progress = undefined;
      }
    } catch (error) {
      if (!(error instanceof StepFailed) || (swapAt >= 0 && i > swapAt)) throw error;
      // The rollback: copies it can list are cancelled, the others stay noted; the block goes.
      m.tasks = m.tasks.filter((t) => t.into !== s.index || t.away);
      if (m.progress !== undefined) {
        const { task: _t, ...rest } = m.progress;
        m.progress = rest;
      }
      if (mayBeBlocked) m.blocked.delete(source);
      return;
    }
    writes();
  }
}

// Whether the alias is on the new index.
function moved(m: Model, s: ReindexSpec): boolean {
  return m.members.some((x) => x.write && x.index === s.index);
}

// A client writing through the alias, as the node it asks resolves it (`target`; by default the
// alias's write index): a new document, a new version of one, or a delete. Refused by a block, or
// by an index that is gone.
function writeOrDelete(m: Model, op: number, target = m.members.find((x) => x.write)?.index) {
  if (target === undefined || m.blocked.has(target)) return;
  const index = m.indices.get(target);
  if (index === undefined) return;
  const live = [...m.acked].filter(([, v]) => v !== null).map(([id]) => id);
  if (op === 2 && live.length > 0) {
    const id = live[m.next++ % live.length];
    index.docs.delete(id);
    index.seqs.delete(id);
    m.acked.set(id, null);
  } else {
    const id = op === 1 && live.length > 0 ? live[m.next % live.length] : m.next;
    const version = (m.acked.get(id) ?? 0) + 1;
    m.next++;
    index.docs.set(id, version);
    index.seqs.set(id, index.seq + 1);
    m.acked.set(id, version);
  }
  index.seq++;
}

describe("decideReindex and its steps on a sick cluster (model)", () => {
  it("ends with the alias on the new index, every acknowledged write, no deleted document back, only the source blocked", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // Mostly runs that go to their end, so that a swap meets what earlier runs left.
            kill: fc.oneof(
              { arbitrary: fc.constant(Infinity), weight: 3 },
              { arbitrary: fc.nat(10), weight: 1 },
            ),
            hang: fc.boolean(),
            left: fc.boolean(),
            lostAnswer: fc.boolean(),
            liftAt: fc.oneof(
              { arbitrary: fc.constant(Infinity), weight: 3 },
              { arbitrary: fc.nat(10), weight: 1 },
            ),
            back: fc.boolean(),
            stale: fc.boolean(),
          }),
          { maxLength: 5 },
        ),
        fc.array(fc.nat(2), { minLength: 1, maxLength: 12 }),
        fc.constantFrom("keep", "delete", "unblock"),
        fc.boolean(),
        fc.nat(4),
        (runs, ops, after, changeFile, changeAt) => {
          const deleteSource = after === "delete";
          const unblockSource = after === "unblock";
          const m: Model = {
            indices: new Map(),
            blocked: new Set(),
            members: [{ index: "products-v1", write: true }],
            tasks: [],
            acked: new Map(),
            next: 0,
            uuids: 0,
            taskIds: 0,
          };
          m.indices.set("products-v1", newIndex(m));
          let w = 0;
          const writes = () => writeOrDelete(m, ops[w++ % ops.length]);
          for (let i = 0; i < 4; i++) writes();
          let s = spec({ deleteSource, unblockSource });
          let hash = "h1";
          // The last run meets nothing: hung nodes are back, nobody kills or lifts.
          const calm: Trouble = {
            kill: Infinity,
            hang: false,
            left: false,
            lostAnswer: false,
            liftAt: Infinity,
            back: true,
            stale: false,
          };
          for (const [n, trouble] of [...runs, calm].entries()) {
            if (trouble.back) nodesBack(m);
            // A new version of the file (another index name) replaces one that did not finish.
            const swapped = m.members.some((x) => x.write && x.index === s.index);
            if (changeFile && n === changeAt && m.progress !== undefined && !swapped) {
              s = spec({ deleteSource, unblockSource, index: "products-v3" });
              hash = "h2";
            }
            const candidate = m.members.find((x) => x.write)?.index;
            const d = decideReindex({
              spec: s,
              hash,
              ...(m.progress ? { progress: m.progress } : {}),
              members: m.members,
              exists: (name) => m.indices.has(name),
              uuid: (name) => m.indices.get(name)?.uuid,
              ...(candidate === undefined ? {} : {
                source: { concrete: true, blocked: m.blocked.has(candidate), otherAliases: [] },
              }),
            });
            assert.notEqual(d.kind, "refuse", JSON.stringify(d));
            // Lifting the block after the swap is what `unblock_source` risks: not here.
            if (trouble.stale && !unblockSource) m.stale = candidate;
            if (d.kind === "run") runSteps(m, d, s, hash, trouble, writes);
            // An operator lifts a block a killed runner left, while the alias is on its source.
            if (m.progress !== undefined && trouble.liftAt !== Infinity && !moved(m, s)) {
              m.blocked.delete(m.progress.source);
            }
            // The hung node is back: one write through the alias as it saw it, then it learns.
            if (m.stale !== undefined) writeOrDelete(m, ops[w++ % ops.length], m.stale);
            m.stale = undefined;
            writes();
          }
          // Every hung node is back at last, and its copies write what they read.
          nodesBack(m);
          const last = m.members.find((x) => x.write)?.index;
          if (last !== s.index) {
            // The calm run could not finish only when a fault of its own remained: never.
            assert.fail(`the alias is on ${last}: ${JSON.stringify(m.progress)}`);
          }
          const docs = m.indices.get(s.index)!.docs;
          for (const [id, v] of m.acked) {
            if (v === null) assert.equal(docs.has(id), false, `deleted document ${id} came back`);
            else assert.equal(docs.get(id), v, `acknowledged write ${id}@${v} lost`);
          }
          // The source stays blocked, unless deleted or asked: a node that hung writes there.
          assert.deepEqual([...m.blocked], after === "keep" ? ["products-v1"] : []);
          assert.equal(m.progress, undefined);
          assert.equal(m.indices.has("products-v1"), !deleteSource);
        },
      ),
      propertyOptions(1000),
    );
  });
});

describe("decideReindex into an existing index (the undo of a reindex)", () => {
  // The undo of products-v1 -> products-v2: back into products-v1, kept by the forward run.
  const back = spec({ index: "products-v1", source: "products-v2", deleteSource: true });
  const into = (o: Parameters<typeof observe>[0]): ReindexObservation => ({
    ...observe({ spec: back, ...o }),
    into: "existing",
  });
  const onV2 = [{ index: "products-v2", write: true }];
  const present = { indices: ["products-v1", "products-v2"], uuids: { "products-v1": "u1" } };
  const STEPS: ReindexStep[] = [
    "note",
    "open",
    "copy",
    "block",
    "catch-up",
    "verify",
    "swap",
    "delete-source",
    "forget",
  ];
  const mine = progress({ source: "products-v2", index: "products-v1", uuid: "u1" });

  it("opens the previous index instead of creating it, and deletes the forward's index last", () => {
    const d = decideReindex(into({ members: onV2, ...present }));
    assert.deepEqual(d, { kind: "run", source: "products-v2", resumed: false, steps: STEPS });
  });

  it("refuses, naming delete_source, when the previous index is gone", () => {
    const d = decideReindex(into({ members: onV2, indices: ["products-v2"] }));
    assert.equal(d.kind, "refuse");
    assert.match(d.kind === "refuse" ? d.reason : "", /gone.*"delete_source": false/);
  });

  it("refuses when the previous index is in the alias, or the write index is another", () => {
    const inAlias = decideReindex(into({
      members: [...onV2, { index: "products-v1", write: false }],
      ...present,
    }));
    assert.match(inAlias.kind === "refuse" ? inAlias.reason : "", /without it being its write/);
    const moved = decideReindex(into({
      members: [{ index: "products-v3", write: true }],
      ...present,
    }));
    assert.match(
      moved.kind === "refuse" ? moved.reason : "",
      /is "products-v3", not "products-v2"/,
    );
    const none = decideReindex(into({ ...present }));
    assert.match(none.kind === "refuse" ? none.reason : "", /does not exist/);
  });

  it("resumes its own progress from open, and refuses a previous index made again", () => {
    const d = decideReindex(into({ members: onV2, ...present, progress: mine }));
    assert.deepEqual(d, {
      kind: "run",
      source: "products-v2",
      resumed: true,
      steps: STEPS.slice(1),
    });
    const other = decideReindex(into({
      members: onV2,
      indices: present.indices,
      uuids: { "products-v1": "u9" },
      progress: mine,
    }));
    assert.equal(other.kind, "refuse");
    assert.deepEqual(other.kind === "refuse" && other.release, mine, "its block is released");
  });

  it("finishes after its swap: deletes the forward's index and forgets; else nothing to do", () => {
    const swapped = [{ index: "products-v1", write: true }];
    const d = decideReindex(into({ members: swapped, ...present, progress: mine }));
    assert.deepEqual(d, {
      kind: "run",
      source: "products-v2",
      resumed: true,
      steps: ["delete-source", "forget"],
    });
    assert.deepEqual(decideReindex(into({ members: swapped, ...present })), { kind: "done" });
  });

  it("never discards the index an earlier version of the file copied into", () => {
    const earlier = { ...mine, hash: "h0" };
    const d = decideReindex(into({ members: onV2, ...present, progress: earlier }));
    assert.equal(d.kind, "run");
    assert.ok(d.kind === "run" && !d.steps.includes("discard"), JSON.stringify(d));
    assert.deepEqual(
      d.kind === "run" && d.steps.slice(0, 3),
      ["unblock-earlier", "forget-earlier", "note"],
    );
    const after = decideReindex(into({
      members: [{ index: "products-v1", write: true }],
      ...present,
      progress: earlier,
    }));
    assert.deepEqual(after.kind === "run" && after.steps, ["delete-source", "forget-earlier"]);
    assert.equal(after.kind === "run" && after.thenRefuse, undefined);
  });

  it("never deletes the index it copies into, whatever the cluster holds", () => {
    const name = fc.constantFrom("products-v1", "products-v2", "products-v3");
    fc.assert(
      fc.property(
        fc.array(fc.record({ index: name, write: fc.boolean() }), { maxLength: 3 }),
        fc.subarray(["products-v1", "products-v2", "products-v3"]),
        fc.option(
          fc.record({
            source: name,
            index: name,
            hash: fc.constantFrom("h0", "h1"),
            uuid: fc.option(fc.constantFrom("u1", "u9"), { nil: undefined }),
          }),
          { nil: undefined },
        ),
        (members, indices, p) => {
          const unique = [...new Map(members.map((m) => [m.index, m])).values()];
          const d = decideReindex(into({
            members: unique,
            indices,
            uuids: indices.includes("products-v1") ? { "products-v1": "u1" } : {},
            ...(p === undefined ? {} : {
              progress: progress({
                source: p.source,
                index: p.index,
                hash: p.hash,
                ...(p.uuid === undefined ? {} : { uuid: p.uuid }),
              }),
            }),
          }));
          if (d.kind !== "run") return;
          assert.ok(!d.steps.includes("discard") && !d.steps.includes("create"));
          if (d.steps.includes("delete-source")) assert.notEqual(d.source, "products-v1");
          if (d.steps.includes("copy")) {
            assert.ok(
              indices.includes("products-v1"),
              "copies into a previous index that is there",
            );
            assert.ok(d.steps.includes("open"));
          }
        },
      ),
      propertyOptions(500),
    );
  });
});
