import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkAllMoved, copyThenBlock, startAliasWriter, writtenMore } from "../alias_writer.ts";
import { Workspace } from "../cluster.ts";
import { startFaultServer } from "../fault_server.ts";
import { node, NODES, recordsReady, seedIndex } from "../three_nodes.ts";
import { UndoRuns } from "./undo_runs.ts";

// The undo of a reindex on the three-node cluster (tools/opensearch_cluster.sh), while an
// application writes through the alias on every node: the figures it prints are the ones the
// release note quotes.

describe("a reindex undone on three nodes while an application writes through the alias", () => {
  it("takes writes while it copies back, blocks them only for the last catch-up, and loses none", async () => {
    const seeded = 20_000;
    // The writers of the reindex, then those of its undo: one through each node, each on its own
    // share of the documents (lanes of six), so that the last check covers both.
    const before: Writer[] = [];
    const during: Writer[] = [];
    const order = copyThenBlock(() => total(during, "writes"));
    // Seen only while the undo runs: the reindex's copy and block come first.
    let undoing = false;
    const front = await startFaultServer(NODES[0], (r) => undoing ? order.see(r) : "forward");
    await using ws = await Workspace.create();
    const [alias, users, v2] = [`${ws.id}-people`, `${ws.id}-users`, `${ws.id}-users-v2`];
    try {
      await recordsReady(ws.recordsIndex);
      await seedIndex(users, alias, seeded);
      const hosts = [new URL(front.url), new URL(NODES[1])];
      const runs = new UndoRuns({ ...ws.connection(NODES[0]), hosts }, alias, users, v2);
      const writing = (lanes: Writer[], from: number) => {
        for (const [i, url] of NODES.entries()) {
          const call = (m: string, p: string, b?: unknown) => node(url, m, p, b);
          lanes.push(startAliasWriter(call, alias, seeded, "d", { at: from + i, of: 6 }));
        }
      };
      writing(before, 0);
      await writtenMore(before, 30, "writes before the reindex");
      const moved = await runs.runForward({
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });
      await writtenMore(before, 30, "writes after the reindex");
      await Promise.all(before.map((w) => w.stop()));
      assert.equal(moved.result, "reindexed");
      writing(during, 3);
      await writtenMore(during, 30, "writes before the undo");
      undoing = true;
      const started = Date.now();
      const undone = await runs.runUndo();
      const wall = Date.now() - started;
      await writtenMore(during, 30, "writes after the undo");
      await Promise.all(during.map((w) => w.stop()));
      assert.equal(undone.result, "reindexed", runs.said.join("\n"));
      assert.equal(undone.reindex.deletedSource, true);
      assert.equal(total([...before, ...during], "failed"), 0, "only block refusals");
      const duringCopy = order.assertOrder();
      const members = await node(NODES[1], "GET", `/_alias/${alias}`);
      assert.deepEqual(members.body, {
        [users]: { aliases: { [alias]: { is_write_index: true } } },
      });
      assert.equal((await node(NODES[1], "HEAD", `/${v2}`)).status, 404);
      const call = (m: string, p: string, b?: unknown) => node(NODES[1], m, p, b);
      await checkAllMoved(call, users, seeded, [...before, ...during]);
      const blockedMs = undone.reindex.writeBlockedMs;
      assert.ok(blockedMs !== undefined, "the run measured its blocked window");
      const seen = Math.max(...during.map((w) => w.windowMs));
      const [created, updated, deleted] = (["created", "updated", "deleted"] as const)
        .map((k) => during.reduce((sum, w) => sum + w.counts[k], 0));
      const count = (await node(NODES[1], "GET", `/${users}/_count`)).body.count;
      const s = (ms: number | undefined) => `${((ms ?? NaN) / 1000).toFixed(2)} s`;
      console.log(
        `reindex undo on three nodes: ${undone.reindex.documents} document(s) copied back ` +
          `(${count} in the previous index at the end); ${total(during, "writes")} acknowledged ` +
          `write(s) during the undo (${created} created, ${updated} updated, ${deleted} ` +
          `deleted; ${duringCopy} while it copied), ${total([...before, ...during], "writes")} ` +
          `with those of the reindex, all checked, 0 lost; writes blocked ${s(blockedMs)} ` +
          `(the run's report), ${s(seen)} as the writers saw it (${total(during, "refused")} ` +
          `refusal(s) retried); undo ${s(wall)}. The reindex before it, under the same writers: ` +
          `blocked ${s(moved.reindex.writeBlockedMs)}, ` +
          `${s(Math.max(...before.map((w) => w.windowMs)))} as the writers saw it`,
      );
    } finally {
      await Promise.all([...before, ...during].map((w) => w.stop()));
      await front.close();
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
    }
  });
});

type Writer = ReturnType<typeof startAliasWriter>;

/** The sum of one figure over `writers`. */
function total(writers: readonly Writer[], figure: "writes" | "failed" | "refused"): number {
  return writers.reduce((sum, w) => sum + w[figure], 0);
}
