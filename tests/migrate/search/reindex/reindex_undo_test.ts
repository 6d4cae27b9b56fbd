import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import { runReindexUndo } from "../../../../src/migrate/search/reindex/reindex_undo.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type Received, startFaultServer } from "../fault_server.ts";
import { startAliasWriter, whileWriting } from "../alias_writer.ts";
import { UndoRuns } from "./undo_runs.ts";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests read freely
type Json = any;

/** Creates `index` holding `s0`..`s<count-1>` (one shard), with `alias` on it as write index. */
async function seed(index: string, alias: string, count: number): Promise<void> {
  const created = await os("PUT", `/${index}`, {
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: { properties: { seq: { type: "long" }, price: { type: "keyword" } } },
    aliases: { [alias]: { is_write_index: true } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines: string[] = [];
  for (let seq = 0; seq < count; seq++) {
    lines.push(JSON.stringify({ create: { _id: `s${seq}` } }), JSON.stringify({ seq }));
  }
  const bulk = await os("POST", `/${index}/_bulk?refresh=true`, lines.join("\n") + "\n");
  assert.equal(bulk.body.errors, false);
}

/** Every document of `index`, id to source, as a sorted object. */
async function documents(index: string): Promise<Record<string, unknown>> {
  await os("POST", `/${index}/_refresh`);
  const found = await os("POST", `/${index}/_search`, { size: 10_000, sort: ["_doc"] });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  const docs = (found.body.hits.hits as Json[]).map((h) => [h._id, h._source] as const);
  return Object.fromEntries(docs.sort(([a], [b]) => a.localeCompare(b)));
}

/** A workspace whose alias `<id>-people` is on `<id>-users`, moved by a reindex to `-users-v2`. */
async function reindexed(count: number, host = OPENSEARCH_URL) {
  const ws = await Workspace.create();
  const [alias, users, v2] = [`${ws.id}-people`, `${ws.id}-users`, `${ws.id}-users-v2`];
  await seed(users, alias, count);
  const forward = new UndoRuns(ws.connection(), alias, users, v2);
  const moved = await forward.runForward({
    mappings: { properties: { seq: { type: "long" }, price: { type: "keyword" } } },
  });
  assert.equal(moved.result, "reindexed");
  // The index the reindex moved the alias off, as its record names it.
  assert.equal(moved.movedOff?.name, users);
  const runs = host === OPENSEARCH_URL
    ? forward
    : new UndoRuns(ws.connection(host), alias, users, v2);
  runs.movedOff = forward.movedOff;
  return { ws, alias, users, v2, runs, [Symbol.asyncDispose]: () => ws[Symbol.asyncDispose]() };
}

/** The alias is on `index` only, as its write index, and `index` takes writes. */
async function assertBackOn(alias: string, index: string, made: string): Promise<void> {
  const members = await os("GET", `/_alias/${alias}`);
  assert.deepEqual(members.body, { [index]: { aliases: { [alias]: { is_write_index: true } } } });
  const blocks = await os("GET", `/${index}/_settings/index.blocks.write`);
  assert.equal(
    blocks.body[index]?.settings?.index?.blocks?.write,
    undefined,
    "the previous index takes writes again",
  );
  assert.equal((await os("HEAD", `/${made}`)).status, 404, "the reindex's index is deleted");
}

describe("a reindex undone on the real node", () => {
  it("puts back every create, update and delete made since the reindex, then the reindex runs again", async () => {
    await using fixture = await reindexed(2_000);
    const { ws, alias, users, v2, runs } = fixture;
    // What the application wrote since the reindex, through the alias.
    const lines: string[] = [];
    for (let n = 0; n < 300; n++) {
      lines.push(JSON.stringify({ index: { _id: `w${n}` } }), JSON.stringify({ seq: 5_000 + n }));
      lines.push(JSON.stringify({ index: { _id: `s${n}` } }), JSON.stringify({ seq: 9_000 + n }));
      lines.push(JSON.stringify({ delete: { _id: `s${1_000 + n}` } }));
    }
    const bulk = await os("POST", `/${alias}/_bulk?refresh=true`, lines.join("\n") + "\n");
    assert.equal(bulk.body.errors, false);
    const wanted = await documents(v2);
    assert.equal(Object.keys(wanted).length, 2_000);
    const undone = await runs.runUndo();
    assert.equal(undone.result, "reindexed");
    assert.equal(undone.reindex.source, v2);
    assert.equal(undone.reindex.index, users);
    assert.equal(undone.reindex.documents, 2_000);
    assert.equal(undone.reindex.deletedSource, true);
    assert.ok((undone.reindex.writeBlockedMs ?? -1) >= 0, "the blocked window is measured");
    await assertBackOn(alias, users, v2);
    assert.deepEqual(await documents(users), wanted);
    assert.ok(
      runs.said.some((l) => l.startsWith(`reindex (undo) ${v2} -> ${users}: copying`)),
      runs.said.join("\n"),
    );
    assert.ok(runs.said.includes(`reindex (undo): deleted ${v2}`), runs.said.join("\n"));
    const id = await recordId(ws.id, `${ws.id}/U3__people-reindex.json`);
    assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/reindex-${id}`)).status, 404);
    // Undone already: nothing to do.
    assert.equal((await runs.runUndo()).result, "exists");
    // The reindex file applies again, from the previous index.
    const again = await runs.runForward();
    assert.equal(again.result, "reindexed");
    assert.equal(again.reindex.source, users);
    assert.deepEqual(await documents(v2), wanted);
  });

  it("refuses, naming delete_source, when the previous index was deleted, and changes nothing", async () => {
    await using fixture = await reindexed(100);
    const { ws, alias, users, v2, runs } = fixture;
    assert.equal((await os("DELETE", `/${users}`)).status, 200);
    await assert.rejects(runs.runUndo(), (error: Error) => {
      assert.match(error.message, /reindex \(undo\) not started: the previous index .* is gone/);
      assert.match(error.message, /"delete_source": false/);
      return true;
    });
    const members = await os("GET", `/_alias/${alias}`);
    assert.deepEqual(Object.keys(members.body), [v2]);
    const id = await recordId(ws.id, `${ws.id}/U3__people-reindex.json`);
    assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/reindex-${id}`)).status, 404);
    // The reindex file itself refuses at plan time already.
    await assert.rejects(
      runReindexUndo(runs.undo, { ...runs.forward, deleteSource: true }, await runs.context("U"), {
        file: "V3__people-reindex.json",
      }),
      /"delete_source": true/,
    );
  });

  it("refuses when the alias was moved on since the reindex, and changes nothing", async () => {
    await using fixture = await reindexed(100);
    const { alias, users, v2, runs } = fixture;
    const v3 = `${v2}-v3`;
    assert.equal((await os("PUT", `/${v3}`)).status, 200);
    await os("POST", "/_aliases", {
      actions: [{ remove: { index: v2, alias } }, {
        add: { index: v3, alias, is_write_index: true },
      }],
    });
    await assert.rejects(runs.runUndo(), new RegExp(`is "${v3}", not "${v2}"`));
    assert.equal((await os("HEAD", `/${v2}`)).status, 200);
    const blocks = await os("GET", `/${users}/_settings/index.blocks.write`);
    assert.equal(blocks.body[users].settings.index.blocks.write, "true", "left as it was");
  });
});

describe("a reindex undo stopped at a step (the runner killed)", () => {
  const steps: [string, (v2: string) => (r: Received) => boolean][] = [
    ["while the copy task runs", () => (r) => r.method === "GET" && r.path.startsWith("/_tasks/")],
    ["as it blocks writes", () => (r) => r.method === "PUT" && r.path.endsWith("/_block/write")],
    ["before the swap", () => (r) => r.method === "POST" && r.path.startsWith("/_aliases?")],
    [
      "after the swap, deleting the reindex's index",
      (v2) => (r) => r.method === "DELETE" && r.path === `/${v2}`,
    ],
  ];
  for (const [when, test] of steps) {
    it(`is finished by the next run, no acknowledged write lost (stopped ${when})`, async () => {
      let holding = true;
      let held: (r: Received) => boolean = () => false;
      const fault = await startFaultServer(
        OPENSEARCH_URL,
        (r) => holding && held(r) ? "hang" : "forward",
      );
      try {
        await using fixture = await reindexed(3_000, fault.url);
        const { alias, users, v2, runs } = fixture;
        held = test(v2);
        const writer = startAliasWriter(os, alias, 3_000);
        const lost = new AbortController();
        await whileWriting(writer, async () => {
          const first = runs.runUndo(lost.signal);
          const stopped = await Promise.race([
            fault.waitFor(held).then(() => "held"),
            first.then(() => "ended", () => "ended"),
          ]);
          assert.equal(stopped, "held", "the run reached the step");
          lost.abort();
          await first.then(() => assert.fail("ran on after it was stopped"), () => {});
          holding = false;
          const again = await runs.runUndo();
          assert.equal(again.result, "reindexed");
          assert.equal(again.reindex.resumed, true);
        });
        await assertBackOn(alias, users, v2);
        await writer.checkMoved(users);
        assert.equal(writer.failed, 0, "only refusals of the block, retried");
      } finally {
        await fault.close();
      }
    });
  }
});
