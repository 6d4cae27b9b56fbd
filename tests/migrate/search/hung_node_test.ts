import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Workspace } from "./cluster.ts";
import { startFaultServer } from "./fault_server.ts";
import { hang, node, NODES, resume, seedIndex, waitForNodes } from "./three_nodes.ts";

// A node that hangs (SIGSTOP) in the middle of a reindex copy, on the three-node cluster. Its copy
// stops with it, and nobody can cancel it; once the node resumes, the copy goes on writing the
// source's documents as they were when it began, into the new index.
/** Waits until no `_reindex` into `index` runs on any node (each node answering). */
async function copiesEnded(index: string): Promise<void> {
  for (let tries = 0; tries < 120; tries++) {
    const listed = await node(NODES[0], "GET", "/_tasks?actions=*reindex&detailed=true");
    assert.equal(listed.body.node_failures, undefined, JSON.stringify(listed.body.node_failures));
    const tasks: { description?: string }[] = Object.values(listed.body.nodes ?? {})
      .flatMap((n) => Object.values((n as { tasks: object }).tasks));
    if (!tasks.some((t) => t.description?.endsWith(`to [${index}]`))) return;
    // Asked again once the cluster had time to move: a task list has no wait of its own.
    await node(NODES[0], "GET", "/_cluster/health?wait_for_events=languid&timeout=1s");
  }
  assert.fail(`a copy into ${index} is still running`);
}

describe("reindex with the node running the copy hung", () => {
  it("never moves the alias while that copy may still write, and brings no deleted document back", async () => {
    const seeded = 20_000;
    // node-3 runs the copy: the runner sends its requests to the first host it is given.
    let hung = false;
    const front = await startFaultServer(NODES[2], (r) => {
      if (!hung && r.method === "GET" && r.path.startsWith("/_tasks/")) {
        hung = true;
        hang(3);
      }
      return "forward";
    });
    const ws = await Workspace.create({
      hosts: [front.url, NODES[0], NODES[1]],
      settings: "    timeout: 2\n",
    });
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    try {
      await seedIndex(v1, alias, seeded);
      await ws.file("2-products-reindex.json", {
        alias,
        index: v2,
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });

      const first = await ws.run();
      assert.ok(hung, "node-3 was never hung: the copy did not run there");
      assert.notEqual(first.code, 0, `the first run moved the alias:\n${first.out}\n${first.err}`);
      assert.match(first.err, /not proven stopped/);
      assert.deepEqual(Object.keys((await node(NODES[0], "GET", `/_alias/${alias}`)).body), [v1]);

      // Still away: the copy there is still not proven stopped, whoever runs next.
      const second = await ws.run();
      assert.notEqual(second.code, 0, `the second run moved the alias:\n${second.out}`);
      assert.match(second.err, /not proven stopped/);

      // The application deletes documents through the alias while node-3 is away.
      const deleted = Array.from({ length: 3_000 }, (_, i) => `d${i * 5}`);
      const bulk = await node(
        NODES[0],
        "POST",
        `/${alias}/_bulk?refresh=true`,
        deleted.map((id) => JSON.stringify({ delete: { _id: id } })).join("\n") + "\n",
      );
      assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body.items?.[0]));

      resume(3);
      hung = false;
      await waitForNodes(3);
      const third = await ws.ok();
      assert.match(third.err, /alias \S+ moved to/);

      // Whatever node-3's copy still had to write is written (or cancelled) before the count.
      await copiesEnded(v2);
      await node(NODES[0], "POST", `/${v2}/_refresh`);
      const total = await node(NODES[0], "GET", `/${alias}/_count`);
      assert.equal(total.body.count, seeded - deleted.length);
      const back = await node(NODES[0], "POST", `/${alias}/_count`, {
        query: { ids: { values: deleted } },
      });
      assert.equal(back.body.count, 0, "deleted documents came back");
    } finally {
      resume(3);
      await front.close();
      await waitForNodes(3);
      // A replica that was starting on node-3 when it left waits a minute before it is placed
      // again: the indices go, and the cluster is green for whoever comes next.
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
      await waitForNodes(3, true);
    }
  });
});
