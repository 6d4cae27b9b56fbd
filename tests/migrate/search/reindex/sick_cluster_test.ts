import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  checkAllMoved,
  copyThenBlock,
  startAliasWriter,
  whileWriting,
  writtenMore,
} from "../alias_writer.ts";
import { Workspace } from "../cluster.ts";
import { type Fault, type Received, startFaultServer } from "../fault_server.ts";
import {
  hang,
  node,
  NODES,
  recordsReady,
  resume,
  seedIndex,
  waitForNodes,
} from "../three_nodes.ts";

// The search runner on the three-node cluster (tools/opensearch_cluster.sh), where one node at a
// time hangs (SIGSTOP, its sockets open), leaves the cluster and comes back, or is written to
// behind the runner's back while the runner talks to another.

/** Waits until no `_reindex` into `index` runs on any node (each node answering). */
async function copiesEnded(index: string): Promise<void> {
  for (let tries = 0; tries < 12; tries++) {
    const listed = await node(NODES[0], "GET", "/_tasks?actions=*reindex&detailed=true");
    assert.equal(listed.body.node_failures, undefined, JSON.stringify(listed.body.node_failures));
    const running = Object.values(listed.body.nodes ?? {})
      .flatMap((n) => Object.entries((n as { tasks: object }).tasks))
      .filter(([, t]) => (t as { description?: string }).description?.endsWith(`to [${index}]`));
    if (running.length === 0) return;
    for (const [id] of running) {
      await node(NODES[0], "GET", `/_tasks/${id}?wait_for_completion=true&timeout=10s`);
    }
  }
  assert.fail(`a copy into ${index} is still running`);
}

/**
 * A workspace whose first host is a fault server in front of node-3 that hangs node-3 once a
 * request matching `test` reaches it (then does `answer` with it: by default forwards it, held
 * by the stopped node), with node-1 and node-2 after it; `others` says what becomes of every
 * other request. Its records index is made green first. `close` resumes node-3, deletes what
 * the test made (`names`, with the records index) and waits for green. `timeoutSeconds` is the
 * client's: each run waits it out once on the hung node-3, and the nodes that answer must beat
 * it, an index created on a loaded machine included.
 */
async function node3HangingOn(
  test: (r: Received) => boolean,
  timeoutSeconds: number,
  answer: Fault = "forward",
  others: (r: Received) => Fault = () => "forward",
) {
  let hung = false;
  const front = await startFaultServer(NODES[2], (r) => {
    if (!hung && test(r)) {
      hung = true;
      hang(3);
      return answer;
    }
    return others(r);
  });
  const ws = await Workspace.create({
    hosts: [front.url, NODES[0], NODES[1]],
    settings: `    timeout: ${timeoutSeconds}\n`,
  });
  return {
    ws,
    front,
    [Symbol.asyncDispose]: () => ws[Symbol.asyncDispose](),
    hung: () => hung,
    ready: () => recordsReady(ws.recordsIndex),
    async close(names: string) {
      resume(3);
      await front.close();
      await waitForNodes(3);
      // A replica that was starting on node-3 when it left waits a minute before it is placed
      // again: the indices go, and the cluster is green for whoever comes next.
      await node(NODES[0], "DELETE", `/${names},${ws.recordsIndex}`);
      await waitForNodes(3, true);
    },
  };
}

/** Seeds `<id>-p-v1` under alias `<id>-p` and writes the reindex file moving it to `<id>-p-v2`. */
async function moving(ws: Workspace, seeded: number) {
  const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
  await seedIndex(v1, alias, seeded);
  await ws.file("2-products-reindex.json", {
    alias,
    index: v2,
    settings: { number_of_shards: 3, number_of_replicas: 1 },
  });
  return { alias, v1, v2 };
}

/** Deletes `ids` through `alias`, as the application would. */
async function deleteThrough(alias: string, ids: readonly string[]): Promise<void> {
  const bulk = await node(
    NODES[0],
    "POST",
    `/${alias}/_bulk?refresh=true`,
    ids.map((id) => JSON.stringify({ delete: { _id: id } })).join("\n") + "\n",
  );
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body.items?.[0]));
}

/** Once no copy into `index` runs: `alias` holds `count` documents, none of `deleted`. */
async function assertNoneBack(
  alias: string,
  index: string,
  count: number,
  deleted: readonly string[],
): Promise<void> {
  await copiesEnded(index);
  await node(NODES[0], "POST", `/${index}/_refresh`);
  assert.equal((await node(NODES[0], "GET", `/${alias}/_count`)).body.count, count);
  const back = await node(NODES[0], "POST", `/${alias}/_count`, {
    query: { ids: { values: deleted } },
  });
  assert.equal(back.body.count, 0, "deleted documents came back");
}

// A node that hangs in the middle of a reindex copy: its copy stops with it, and nobody can cancel
// it; once the node resumes, the copy goes on writing the source's documents as they were when it
// began, into the new index.
describe("reindex with the node running the copy hung", () => {
  it("never moves the alias while that copy may still write, and brings no deleted document back", async () => {
    const seeded = 20_000;
    // node-3 runs the copy: the runner sends its requests to the first host it is given. The copy
    // must still run when node-3 hangs, at the first read of its task, however slow the machine:
    // throttled to 2,000 documents a second, the copy of 20 batches lasts 10 s at the least. Only
    // that first copy: a later run's copies go at full speed.
    let throttled = false;
    await using sick = await node3HangingOn(
      (r) => r.method === "GET" && r.path.startsWith("/_tasks/"),
      5,
      "forward",
      (r) => {
        if (throttled || r.method !== "POST" || !r.path.startsWith("/_reindex?")) return "forward";
        throttled = true;
        return { forwardAs: `${r.path}&requests_per_second=2000` };
      },
    );
    const { ws } = sick;
    try {
      await sick.ready();
      const { alias, v1, v2 } = await moving(ws, seeded);

      const first = await ws.run();
      assert.ok(sick.hung(), "node-3 was never hung: the copy did not run there");
      assert.notEqual(first.code, 0, `the first run moved the alias:\n${first.out}\n${first.err}`);
      assert.match(first.err, /not proven stopped/);
      assert.deepEqual(Object.keys((await node(NODES[0], "GET", `/_alias/${alias}`)).body), [v1]);

      // Still away: the copy there is still not proven stopped, whoever runs next.
      const second = await ws.run();
      assert.notEqual(second.code, 0, `the second run moved the alias:\n${second.out}`);
      assert.match(second.err, /not proven stopped/);

      // The application deletes documents through the alias while node-3 is away.
      const deleted = Array.from({ length: 3_000 }, (_, i) => `d${i * 5}`);
      await deleteThrough(alias, deleted);

      resume(3);
      await waitForNodes(3);
      const third = await ws.ok();
      assert.match(third.err, /alias \S+ moved to/);
      // Whatever node-3's copy still had to write is written (or cancelled) before the count.
      await assertNoneBack(alias, v2, seeded - deleted.length, deleted);
    } finally {
      await sick.close(`${ws.id}-*`);
    }
  });
});

describe("reindex whose copy start was taken by a node that hung before answering", () => {
  const answers: [string, Fault][] = [
    ["no answer", "forward"],
    // The node holds the start all the same: a balancer's 5xx says nothing of it.
    ["a balancer's 504", {
      status: 504,
      text: "<html><head><title>504 Gateway Time-out</title></head></html>",
      forwarded: true,
    }],
  ];
  for (const [what, answer] of answers) {
    it(`never moves the alias while that node is away, since it may start the copy once back (${what})`, async () => {
      const seeded = 5_000;
      await using sick = await node3HangingOn(
        (r) => r.method === "POST" && r.path.startsWith("/_reindex"),
        5,
        answer,
      );
      const { ws } = sick;
      try {
        await sick.ready();
        const { alias, v2 } = await moving(ws, seeded);
        const first = await ws.run();
        // Said whole: the run's own account of where its requests went is what tells why.
        assert.ok(sick.hung(), `node-3 never took the start:\n${first.out}\n${first.err}`);
        assert.notEqual(first.code, 0, `the first run moved the alias:\n${first.out}`);
        assert.match(first.err, /not proven stopped/);

        // node-3 is out of the cluster now: nobody can list what it holds.
        await waitForNodes(2);
        const second = await ws.run();
        assert.notEqual(second.code, 0, `the second run moved the alias:\n${second.out}`);
        // Why, depends on whether the first run's list of copies still reached node-3 before it
        // left the cluster: the copy is then known by its task, else by the start with no answer.
        // Either way the refusal names the node that is away.
        assert.match(
          second.err,
          /(whose start got no answer is not proven stopped: it may run on node|\(task [^)]+\) is not proven stopped: its node \S+ is not in the cluster)/,
        );
        const deleted = Array.from({ length: 500 }, (_, i) => `d${i * 7}`);
        await deleteThrough(alias, deleted);

        resume(3);
        await waitForNodes(3);
        await ws.ok();
        await assertNoneBack(alias, v2, seeded - deleted.length, deleted);
      } finally {
        await sick.close(`${ws.id}-*`);
      }
    });
  }
});

describe("the records index with the node of its primary hung", () => {
  it("has a replica, which the cluster promotes: the next run applies and remembers", async () => {
    await using ws = await Workspace.create({ hosts: NODES, settings: "    timeout: 5\n" });
    let hung: number | undefined;
    try {
      await ws.file(`1-${ws.id}-a-index.json`, { settings: { number_of_replicas: 1 } });
      await ws.ok();
      await waitForNodes(3, true);
      const shards = await node(
        NODES[0],
        "GET",
        `/_cat/shards/${ws.recordsIndex}?format=json&h=prirep,node`,
      );
      const primary = shards.body.find((s: { prirep: string }) => s.prirep === "p");
      assert.equal(shards.body.length, 2, "the records index has no replica");
      hung = Number(primary.node.replace("node-", ""));
      const live = NODES.find((_, i) => i + 1 !== hung)!;
      hang(hung);
      await waitForNodes(2, false, live);

      await ws.file(`2-${ws.id}-b-index.json`, { settings: { number_of_replicas: 1 } });
      const run = await ws.run("--json");
      assert.equal(run.code, 0, `${run.out}\n${run.err}`);
      const files = run.report!.connections[0].files;
      assert.deepEqual(
        files.map((f) => [f.path, f.action, f.result]),
        [[`1-${ws.id}-a-index.json`, "skip", undefined], [
          `2-${ws.id}-b-index.json`,
          "apply",
          "created",
        ]],
      );
    } finally {
      if (hung !== undefined) resume(hung);
      await waitForNodes(3);
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
      await waitForNodes(3, true);
    }
  });
});

describe("a template update taken by a node that hung", () => {
  it("is said when it is applied through another host, and --drift puts a later version back", async () => {
    // Every cluster-state update waits for a hung member until it leaves (about 3 s here).
    await using sick = await node3HangingOn(
      (r) => r.method === "PUT" && r.path.startsWith("/_index_template/"),
      8,
    );
    const { ws, front } = sick;
    const name = `1-${ws.id}-t`;
    const template = (version: number) => ({
      index_patterns: [`${ws.id}-t-*`],
      _meta: { version },
    });
    const version = async () =>
      (await node(NODES[0], "GET", `/_index_template/${name}`)).body.index_templates[0]
        .index_template._meta.version;
    try {
      await sick.ready();
      await ws.file(`${name}-template.json`, template(1));
      const first = await ws.run();
      assert.equal(first.code, 0, `${first.out}\n${first.err}`);
      assert.ok(sick.hung(), "node-3 was never hung");
      assert.match(
        first.err,
        new RegExp(`note: .*${front.url} took this request without answering before another host`),
      );

      // A later version, applied through the nodes that answer.
      await ws.file(`${name}-template.json`, template(2));
      const config = join(ws.configDir, "application.yml");
      await writeFile(
        config,
        (await readFile(config, "utf8")).replace(`"${front.url}", `, ""),
      );
      await ws.ok();
      assert.equal(await version(), 2);

      // node-3 resumes. It may apply what it held, over the later version (seen on this cluster,
      // though not each time: a held request whose connection closed may be dropped). The older
      // version is put there as it would land, so that what follows does not hang on that.
      resume(3);
      await waitForNodes(3);
      const late = await node(NODES[0], "PUT", `/_index_template/${name}`, template(1));
      assert.equal(late.status, 200, JSON.stringify(late.body));
      const drift = await ws.run("status", "--drift");
      assert.match(drift.out + drift.err, /_meta\.version: file 2, cluster 1/);
      await ws.ok("migrate", "--drift");
      assert.equal(await version(), 2);
    } finally {
      await node(NODES[0], "DELETE", `/_index_template/${name}`);
      await sick.close(`${ws.id}-*`);
    }
  });
});

describe("a write block lifted on another node during the catch-up", () => {
  it("stops the swap, and the next run carries the update made meanwhile", async () => {
    let v1 = "", alias = "";
    let lifted: Promise<unknown> | undefined;
    const front = await startFaultServer(NODES[0], (r) => {
      // The verify step's first count, once the copy is done: lift the block through node-2 and
      // update a document through the alias on node-3, then let the count through.
      if (lifted === undefined && r.method === "GET" && r.path.startsWith(`/${v1}/_count`)) {
        lifted = (async () => {
          await node(NODES[1], "PUT", `/${v1}/_settings`, { "index.blocks.write": null });
          const update = await node(NODES[2], "PUT", `/${alias}/_doc/d5?refresh=true`, {
            seq: 777,
          });
          assert.equal(update.status, 200, JSON.stringify(update.body));
        })();
        return { after: lifted };
      }
      return "forward";
    });
    await using ws = await Workspace.create({ hosts: [front.url] });
    [alias, v1] = [`${ws.id}-p`, `${ws.id}-p-v1`];
    const v2 = `${ws.id}-p-v2`;
    try {
      await seedIndex(v1, alias, 5_000);
      await ws.file("2-products-reindex.json", {
        alias,
        index: v2,
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });
      const failed = await ws.run("--json");
      assert.equal(failed.code, 1, failed.out);
      assert.match(
        failed.report!.error!.message,
        /reindex step swap: the write block on \S+-p-v1 was lifted during the catch-up/,
      );
      assert.deepEqual(Object.keys((await node(NODES[0], "GET", `/_alias/${alias}`)).body), [v1]);
      await ws.ok();
      assert.deepEqual(Object.keys((await node(NODES[0], "GET", `/_alias/${alias}`)).body), [v2]);
      assert.equal((await node(NODES[2], "GET", `/${v2}/_doc/d5`)).body._source.seq, 777);
      await node(NODES[0], "POST", `/${v2}/_refresh`);
      assert.equal((await node(NODES[1], "GET", `/${alias}/_count`)).body.count, 5_000);
    } finally {
      await front.close();
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
    }
  });
});

describe("a reindex on three nodes while an application writes through the alias", () => {
  it("takes writes while it copies, and the new index holds every acknowledged create, update and delete", async () => {
    const seeded = 20_000;
    let writer: ReturnType<typeof startAliasWriter> | undefined;
    const order = copyThenBlock(() => writer!.writes);
    const front = await startFaultServer(NODES[0], (r) => order.see(r));
    await using ws = await Workspace.create({ hosts: [front.url, NODES[1]] });
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    try {
      await seedIndex(v1, alias, seeded);
      await ws.file("2-products-reindex.json", {
        alias,
        index: v2,
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });
      writer = startAliasWriter((m, p, b) => node(NODES[2], m, p, b), alias, seeded, "d");
      const run = await whileWriting(writer, () => ws.run("--json"));
      assert.equal(run.code, 0, run.out);
      assert.equal(writer.failed, 0);
      order.assertOrder();
      await writer.checkMoved(v2);
    } finally {
      await front.close();
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
    }
  });
});

/** Points `ws`'s connection at `hosts`. */
async function useHosts(ws: Workspace, hosts: readonly string[]): Promise<void> {
  const config = join(ws.configDir, "application.yml");
  const yml = await readFile(config, "utf8");
  await writeFile(
    config,
    yml.replace(/hosts: \[[^\]]*\]/, `hosts: [${hosts.map((h) => JSON.stringify(h)).join(", ")}]`),
  );
}

// A node hung while a reindex runs keeps the cluster state it had: once resumed, it resolves the
// alias to the source until it hears of the swap, and sends the writes it takes there.

/**
 * A write through node `url` that gives up after a minute with status 0, as a client would: a
 * node that was hung may hold a write for good (seen: its primary operation on a shard copy the
 * cluster had failed meanwhile). Given up on, it is not acknowledged, and the writer sends it
 * again; held there, it can only reach the source, where its stale state sent it.
 */
async function writeOrGiveUp(url: string, method: string, path: string, body?: unknown) {
  try {
    return await node(url, method, path, body, AbortSignal.timeout(60_000));
  } catch {
    return { status: 0, body: undefined };
  }
}

describe("a reindex with a node hung from the first catch-up until after the run", () => {
  it("keeps the source write-blocked: every write acknowledged through that node, stale, is in the new index", async () => {
    const seeded = 1_200;
    await using ws = await Workspace.create({ hosts: NODES, settings: "    timeout: 20\n" });
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    const numberOf = (name: string) => Number(name.replace("node-", ""));
    // The hung node is neither the records' primary nor the cluster manager (the run would only
    // wait for them), nor the node the runner asks, which runs the copy.
    await recordsReady(ws.recordsIndex);
    const shards = await node(
      NODES[0],
      "GET",
      `/_cat/shards/${ws.recordsIndex}?format=json&h=prirep,node`,
    );
    const records = numberOf(shards.body.find((s: { prirep: string }) => s.prirep === "p").node);
    const manager = numberOf(
      (await node(NODES[0], "GET", "/_cat/cluster_manager?format=json")).body[0].node,
    );
    const stale = [1, 2, 3].find((n) => n !== records && n !== manager)!;
    const [copier, other] = [1, 2, 3].filter((n) => n !== stale);
    const url = (n: number) => NODES[n - 1];
    let reindexes = 0;
    let hung = false;
    const front = await startFaultServer(url(copier), (r) => {
      if (r.method !== "POST" || !r.path.startsWith("/_reindex")) return "forward";
      // The first catch-up: the node hangs, and the copy goes on once the cluster dropped it.
      if (++reindexes !== 2) return "forward";
      hang(stale);
      hung = true;
      return { after: waitForNodes(2, false, url(copier)) };
    });
    await useHosts(ws, [front.url, url(other)]);
    // Four writers through the node that hangs, one through each other node.
    const through = [stale, stale, stale, stale, copier, other];
    const writers: ReturnType<typeof startAliasWriter>[] = [];
    try {
      await seedIndex(v1, alias, seeded);
      await ws.file("2-products-reindex.json", {
        alias,
        index: v2,
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });
      writers.push(
        ...through.map((n, at) =>
          startAliasWriter((m, p, b) => writeOrGiveUp(url(n), m, p, b), alias, seeded, "d", {
            at,
            of: through.length,
          })
        ),
      );
      const viaStale = writers.filter((_, i) => through[i] === stale);
      await writtenMore(writers, 5, "writes before the run");
      const run = await ws.run("--json");
      assert.equal(run.code, 0, `${run.out}\n${run.err}`);
      assert.ok(hung, `node-${stale} was never hung: no catch-up ran`);
      assert.deepEqual(Object.keys((await node(url(copier), "GET", `/_alias/${alias}`)).body), [
        v2,
      ]);

      // Back with the state it had: it writes through the alias to the source until it learns.
      const refusedBefore = viaStale.reduce((sum, w) => sum + w.refused, 0);
      resume(stale);
      await waitForNodes(3, false, url(copier));
      await writtenMore(writers, 10, `writes through node-${stale} once back`);
      await Promise.all(writers.map((w) => w.stop()));
      // What the node sent to the source from the state it had, refused there by the block.
      const refused = viaStale.reduce((sum, w) => sum + w.refused, 0) - refusedBefore;
      console.log(
        `node-${stale} hung from the first catch-up: ${refused} write(s) it took once back ` +
          `refused by the source's block and retried`,
      );
      await checkAllMoved((m, p, b) => node(url(copier), m, p, b), v2, seeded, writers);
      // The fault happened: the node wrote to the source from the state it had.
      assert.ok(refused > 0, `node-${stale} sent no write to the source once back`);
      const blocked = await node(url(copier), "GET", `/${v1}/_settings/index.blocks.write`);
      assert.equal(blocked.body[v1]?.settings?.index?.blocks?.write, "true", "v1 takes writes");
    } finally {
      resume(stale);
      await Promise.all(writers.map((w) => w.stop()));
      await front.close();
      await waitForNodes(3);
      await node(NODES[0], "DELETE", `/${ws.id}-*,${ws.recordsIndex}`);
      await waitForNodes(3, true);
    }
  });
});

describe("drift after a rollover on the three-node cluster", () => {
  it("never puts the alias back on the file's index: writes through it keep working", async () => {
    await using ws = await Workspace.create({ hosts: NODES });
    const [name, alias, next] = [`${ws.id}_logs-000001`, `${ws.id}_logs`, `${ws.id}_logs-000002`];
    try {
      await ws.file(`${name}-index.json`, {
        settings: { number_of_shards: 3, number_of_replicas: 1 },
        aliases: { [alias]: {} },
      });
      await ws.ok();
      // Through another node than the runner's first: the alias moves to the new index.
      const rolled = await node(NODES[2], "POST", `/${alias}/_rollover/${next}`, {
        settings: { number_of_shards: 3, number_of_replicas: 1 },
      });
      assert.equal(rolled.status, 200, JSON.stringify(rolled.body));
      await ws.ok("migrate", "--drift");
      const members = (await node(NODES[1], "GET", `/_alias/${alias}`)).body;
      assert.deepEqual(Object.keys(members), [next], JSON.stringify(members));
      const write = await node(NODES[0], "PUT", `/${alias}/_doc/1`, { a: 1 });
      assert.equal(write.status, 201, JSON.stringify(write.body));
    } finally {
      await node(NODES[0], "DELETE", `/${ws.id}_*,${ws.recordsIndex}`);
    }
  });
});
