// A reindex on the real node whose step fails, and one against hostile states and faults.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import { startCli } from "../../cli_process.ts";
import { runCaptured } from "../../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type Fault, startFaultServer } from "../fault_server.ts";
import {
  assertMoved,
  file,
  isSwap,
  moving,
  REFUSED,
  seed,
  SWALLOWED_TIMEOUT,
  takeOver,
} from "./reindex_fixtures.ts";

describe("a reindex step that fails", () => {
  it("leaves the alias on the source, never blocked, names the step, and a fixed file starts over", async () => {
    await using ws = await Workspace.create();
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    await seed(v1, alias, 2_000);
    // One price the script cannot read: the copy fails on it.
    await os("PUT", `/${v1}/_doc/bad?refresh=true`, { seq: -1, price: "n/a" });
    await file(ws, alias, v2);
    const failed = await ws.run("--json");
    assert.equal(failed.code, 1, failed.out);
    const error = failed.report!.error!;
    assert.equal(error.kind, "failure");
    assert.equal(error.file, "2-products-reindex.json");
    assert.match(error.message, /GET \/_tasks\/.*reindex step copy: script_exception: .*"n\/a"/);
    // The copy runs before the block: writes never stopped.
    assert.match(error.message, /stays on .*-p-v1; writes to it were not blocked/);
    assert.ok((await os("GET", `/_alias/${alias}`)).body[v1]);
    const write = await os("PUT", `/${alias}/_doc/after?refresh=true`, { seq: -2, price: "2.5" });
    assert.equal(write.status, 201, "the source takes writes again");

    // The fixed file is another version: its new index is made again from scratch.
    await file(ws, alias, v2, {
      script: {
        source: "try { ctx._source.price = Double.parseDouble(ctx._source.price) } " +
          "catch (NumberFormatException e) { ctx._source.price = null }",
      },
    });
    const fixed = await ws.ok("--json");
    assert.equal(fixed.report!.connections[0].files[0].reindex!.resumed, false);
    await assertMoved(alias, v1, v2, 2_002);
  });

  it("moves the alias once although the answer to the swap was lost", async () => {
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => (isSwap(r) ? "swallow" : "forward"),
    );
    try {
      await using fixture = await moving(1_000, {
        hosts: [fault.url],
        settings: SWALLOWED_TIMEOUT,
      });
      const { ws, alias, v1, v2 } = fixture;
      const run = await ws.ok("--json");
      assert.equal(run.report!.connections[0].files[0].result, "reindexed");
      await assertMoved(alias, v1, v2, 1_000);
    } finally {
      await fault.close();
    }
  });

  it("refused (4xx) at the swap, leaves the alias and the source as they were; the next run catches up with what changed", async () => {
    let refuse = true;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => refuse && isSwap(r) ? REFUSED : "forward",
    );
    try {
      await using fixture = await moving(1_000, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const failed = await ws.run("--json");
      assert.equal(failed.code, 1);
      assert.match(
        failed.report!.error!.message,
        /POST \/_aliases, HTTP 400: reindex step swap: illegal_argument: not now/,
      );
      assert.equal(failed.report!.error!.status, 400);
      assert.ok((await os("GET", `/_alias/${alias}`)).body[v1]);
      // The source takes writes again, as promised: a new document, an update and a delete,
      // none of which the copy made so far holds (and the counts alone would not show two).
      const write = await os("PUT", `/${alias}/_doc/x?refresh=true`, { seq: -3, price: "1" });
      assert.equal(write.status, 201);
      const update = await os("PUT", `/${alias}/_doc/s5?refresh=true`, { seq: 5, price: "777.25" });
      assert.equal(update.status, 200);
      assert.equal((await os("DELETE", `/${alias}/_doc/s6?refresh=true`)).status, 200);
      refuse = false;
      const rerun = await ws.ok("--json");
      assert.equal(rerun.report!.connections[0].files[0].reindex!.resumed, true);
      await assertMoved(alias, v1, v2, 1_000);
      assert.equal((await os("GET", `/${v2}/_doc/s5`)).body._source.price, 777.25, "lost update");
      assert.equal((await os("GET", `/${v2}/_doc/s6`)).status, 404, "a deleted document is back");
    } finally {
      await fault.close();
    }
  });

  // The count check cannot see an update: a block lifted during the copy (by hand, or by a late
  // request re-sent to another host) let an update through that the copy never saw.
  it("does not swap when the block was lifted and the source written during the catch-up; the next run catches up", async () => {
    let v1 = "", alias = "";
    let lifted: Promise<unknown> | undefined;
    const fault = await startFaultServer(OPENSEARCH_URL, (r): Fault => {
      // The verify step's first count, once the copy is done: lift the block, update a document.
      if (lifted === undefined && r.method === "GET" && r.path.startsWith(`/${v1}/_count`)) {
        lifted = (async () => {
          await os("PUT", `/${v1}/_settings`, { "index.blocks.write": null });
          const update = await os("PUT", `/${alias}/_doc/s5?refresh=true`, {
            seq: 5,
            price: "777.25",
          });
          assert.equal(update.status, 200, JSON.stringify(update.body));
        })();
        return { after: lifted };
      }
      return "forward";
    });
    try {
      await using moved = await moving(1_000, { hosts: [fault.url] });
      [v1, alias] = [moved.v1, moved.alias];
      const failed = await moved.ws.run("--json");
      assert.equal(failed.code, 1, failed.out);
      assert.match(
        failed.report!.error!.message,
        /reindex step swap: the write block on .*-p-v1 was lifted during the catch-up/,
      );
      assert.ok((await os("GET", `/_alias/${alias}`)).body[v1], "the alias did not move");
      const rerun = await moved.ws.ok("--json");
      assert.equal(rerun.report!.connections[0].files[0].result, "reindexed");
      await assertMoved(alias, v1, moved.v2, 1_000);
      assert.equal(
        (await os("GET", `/${moved.v2}/_doc/s5`)).body._source.price,
        777.25,
        "lost update",
      );
    } finally {
      await fault.close();
    }
  });

  it("killed as a catch-up starts, the next run catches up with the updates and deletes made meanwhile", async () => {
    let mode: "refuse-swap" | "hold-copy" | "forward" = "refuse-swap";
    const fault = await startFaultServer(OPENSEARCH_URL, (r): Fault => {
      if (mode === "refuse-swap" && isSwap(r)) return REFUSED;
      if (mode === "hold-copy" && r.method === "POST" && r.path.startsWith("/_reindex")) {
        return "hang";
      }
      return "forward";
    });
    try {
      await using fixture = await moving(1_000, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      assert.equal((await ws.run("--json")).code, 1, "the swap is refused: rolled back");
      // The source takes an update and a delete, which the copy in v2 lacks.
      const update = await os("PUT", `/${alias}/_doc/s7?refresh=true`, { seq: 7, price: "55.5" });
      assert.equal(update.status, 200);
      assert.equal((await os("DELETE", `/${alias}/_doc/s8?refresh=true`)).status, 200);
      // The next run is killed as it starts its catch-up, the request sent but unanswered.
      mode = "hold-copy";
      const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root]);
      await Promise.race([
        fault.waitFor((r) => r.method === "POST" && r.path.startsWith("/_reindex")),
        runner.closed.then(() => assert.fail(`cli.ts ended first:\n${runner.stderr()}`)),
      ]);
      runner.signal("SIGKILL");
      await runner.closed;
      mode = "forward";
      const rerun = await runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
        takeOver,
      );
      assert.equal(rerun.code, 0, rerun.out);
      assert.equal(JSON.parse(rerun.out).connections[0].files[0].reindex.resumed, true);
      await assertMoved(alias, v1, v2, 999);
      assert.equal((await os("GET", `/${v2}/_doc/s7`)).body._source.price, 55.5, "lost update");
      assert.equal((await os("GET", `/${v2}/_doc/s8`)).status, 404, "a deleted document is back");
    } finally {
      await fault.close();
    }
  });

  it("copies everything again when the new index was deleted by hand after a run stopped", async () => {
    let refusing = true;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => (refusing && isSwap(r) ? REFUSED : "forward"),
    );
    try {
      await using fixture = await moving(1_000, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      assert.equal((await ws.run("--json")).code, 1, "the swap is refused: rolled back");
      // The progress notes what was copied; the index it was copied into goes.
      assert.equal((await os("DELETE", `/${v2}`)).status, 200);
      refusing = false;
      const rerun = await ws.ok("--json");
      assert.equal(rerun.report!.connections[0].files[0].reindex!.resumed, true);
      await assertMoved(alias, v1, v2, 1_000);
    } finally {
      await fault.close();
    }
  });

  it("does not start when GET / is refused, answers an error or is cut: the swap's parameters depend on it", async () => {
    const cases: [Fault, RegExp][] = [
      [
        { status: 403, body: { error: { type: "security_exception", reason: "no" } } },
        /GET \/, HTTP 403: reindex not started: the connection's user may not read it: grant it cluster:monitor\/main/,
      ],
      [
        { status: 503, text: "<html>busy</html>" },
        /GET \/, HTTP 503: reindex not started: the cluster answered no version; the runner reads GET \//,
      ],
      ["reset", /, GET \/: reindex not started: .*GET \//],
    ];
    for (const [answer, message] of cases) {
      const fault = await startFaultServer(
        OPENSEARCH_URL,
        (r): Fault => r.method === "GET" && r.path === "/" ? answer : "forward",
      );
      try {
        await using fixture = await moving(10, { hosts: [fault.url] });
        const { ws, alias, v1, v2 } = fixture;
        const run = await ws.run("--json");
        assert.equal(run.code, 1, run.out);
        assert.equal(run.report!.error!.file, "2-products-reindex.json");
        assert.match(run.report!.error!.message, message);
        assert.equal((await os("HEAD", `/${v2}`)).status, 404, "no new index");
        await assertMoved(alias, v1, v1, 10);
        const writes = fault.received.filter((r) =>
          r.method !== "GET" && r.method !== "HEAD" && !r.path.includes(ws.recordsIndex) &&
          !r.path.endsWith("/_search")
        );
        assert.deepEqual(writes, []);
      } finally {
        await fault.close();
      }
    }
  });

  it("does not start when the new index exists already, and changes nothing", async () => {
    await using ws = await Workspace.create();
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    await seed(v1, alias, 10);
    await os("PUT", `/${v2}`, { settings: { number_of_replicas: 0 } });
    await file(ws, alias, v2);
    const run = await ws.run("--json");
    assert.equal(run.code, 1);
    assert.match(
      run.report!.error!.message,
      /reindex not started: the index ".*-p-v2" exists already/,
    );
    const writes = run.sent.filter((s) => s.method !== "GET" && s.method !== "HEAD");
    assert.ok(
      writes.every((s) => s.path.startsWith(`/${ws.recordsIndex}`) || s.path.endsWith("/_search")),
      JSON.stringify(writes),
    );
  });
});

describe("a reindex against hostile states and faults", () => {
  it("keeps the alias's filter and routing on the new index", async () => {
    await using ws = await Workspace.create();
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    await seed(v1, `${ws.id}-other`, 100);
    const filter = { range: { seq: { lt: 50 } } };
    await os("POST", "/_aliases", {
      actions: [{ remove: { index: v1, alias: `${ws.id}-other` } }, {
        add: { index: v1, alias, filter, index_routing: "1", search_routing: "1,2" },
      }],
    });
    await file(ws, alias, v2);
    await ws.ok("--json");
    const after = await os("GET", `/_alias/${alias}`);
    assert.deepEqual(after.body, {
      [v2]: {
        aliases: {
          [alias]: { filter, index_routing: "1", search_routing: "1,2", is_write_index: true },
        },
      },
    });
  });

  // The timeout is the client's: the hung swap waits it out once; the node must beat it.
  const unknown: [string, Fault, number][] = [
    ["got no answer", "hang", 10],
    ["got a 502 from a proxy", { status: 502, body: { error: "bad gateway" } }, 30],
  ];
  for (const [what, swapFault, timeout] of unknown) {
    it(`leaves writes blocked when the swap ${what} and the alias did not move; the next run finishes`, async () => {
      let faulty = true;
      const fault = await startFaultServer(
        OPENSEARCH_URL,
        (r): Fault => (faulty && isSwap(r) ? swapFault : "forward"),
      );
      try {
        await using fixture = await moving(200, {
          hosts: [fault.url],
          settings: `    timeout: ${timeout}\n`,
        });
        const { ws, alias, v1, v2 } = fixture;
        const failed = await ws.run("--json");
        assert.equal(failed.code, 1, failed.out);
        assert.match(
          failed.report!.error!.message,
          /reindex step swap: .*whether the alias .* moved is unknown .*writes to .*-p-v1 are still blocked, \d+\.\d s since the block was set/,
        );
        // A swap still queued could land later: a write the source acknowledged now would be lost.
        const refused = await os("PUT", `/${alias}/_doc/late`, { seq: -5, price: "1" });
        assert.equal(refused.status, 403);
        faulty = false;
        await ws.ok("--json");
        await assertMoved(alias, v1, v2, 200);
      } finally {
        await fault.close();
      }
    });
  }

  it("does not move the alias while a node does not answer the task list", async () => {
    // Once the copy started, every node but one answers the list of copies: the silent one may
    // run a copy into the new index that nobody follows.
    let started = false, faulty = true;
    const fault = await startFaultServer(OPENSEARCH_URL, (r): Fault => {
      if (r.method === "POST" && r.path.startsWith("/_reindex")) started = true;
      if (faulty && started && r.method === "GET" && r.path.startsWith("/_tasks?")) {
        return {
          status: 200,
          body: {
            node_failures: [{
              type: "failed_node_exception",
              reason: "Failed node [n3]",
              node_id: "n3",
              caused_by: { type: "receive_timeout_transport_exception", reason: "timed out" },
            }],
            nodes: {},
          },
        };
      }
      return "forward";
    });
    try {
      await using fixture = await moving(200, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const failed = await ws.run("--json");
      assert.equal(failed.code, 1, failed.out);
      assert.match(
        failed.report!.error!.message,
        /reindex step copy: a copy into \S+-p-v2 is not proven stopped: node n3 did not answer the task list \(failed_node_exception: Failed node \[n3\] \(receive_timeout_transport_exception: timed out\)\)\. Run again once that node answers.*stays on \S+-p-v1; writes to it were not blocked/,
      );
      const members = await os("GET", `/_alias/${alias}`);
      assert.deepEqual(Object.keys(members.body), [v1]);
      faulty = false;
      await ws.ok();
      await assertMoved(alias, v1, v2, 200);
    } finally {
      await fault.close();
    }
  });

  // A start answered by a balancer's 504 may run on any node of the cluster. Node X is one, as
  // the cluster manager's state says, but the node that coordinates the list of copies does not
  // count it (a node leaving or joining is applied node by node): the list has no failure, yet X
  // was never asked.
  const views: [string, boolean][] = [
    ["dropped by the coordinating node after the start", true],
    ["not known yet to the coordinating node", false],
  ];
  for (const [view, listedBeforeStart] of views) {
    it(`does not take a node the task list did not reach for one that runs no copy (${view})`, async () => {
      const local = await os("GET", "/_nodes/_local?filter_path=nodes.*.name");
      const real = Object.keys(local.body.nodes)[0];
      const gone = "x-other-node";
      const listed = (id: string) => ({
        name: id,
        tasks: { [`${id}:1`]: { action: "cluster:monitor/tasks/lists[n]", description: "" } },
      });
      let started = false;
      const fault = await startFaultServer(OPENSEARCH_URL, (r): Fault => {
        if (r.method === "GET" && r.path.startsWith("/_cluster/state/nodes")) {
          return {
            status: 200,
            body: { nodes: { [real]: { name: "real" }, [gone]: { name: gone } } },
          };
        }
        if (listedBeforeStart && !started && r.method === "GET" && r.path.startsWith("/_tasks?")) {
          return { status: 200, body: { nodes: { [real]: listed(real), [gone]: listed(gone) } } };
        }
        if (r.method === "POST" && r.path.startsWith("/_reindex")) {
          started = true;
          return { status: 504, text: "<html><title>504 Gateway Time-out</title></html>" };
        }
        return "forward";
      });
      try {
        await using fixture = await moving(200, { hosts: [fault.url] });
        const { ws, alias, v1, v2 } = fixture;
        for (const run of [1, 2]) {
          const failed = await ws.run("--json");
          assert.equal(failed.code, 1, failed.out);
          assert.match(
            failed.report!.error!.message,
            new RegExp(
              `whose start got no answer is not proven stopped: it may run on node ${gone}\\b`,
            ),
            `run ${run}`,
          );
          const members = await os("GET", `/_alias/${alias}`);
          assert.deepEqual(Object.keys(members.body), [v1], `run ${run}`);
        }
        // A run refused for another reason says what the copy it cannot prove means for v2.
        assert.equal((await os("DELETE", `/${v1}`)).status, 200);
        const refused = await ws.run("--json");
        assert.equal(refused.code, 1, refused.out);
        assert.match(
          refused.report!.error!.message,
          new RegExp(
            `reindex not started: .*is gone.*it may run on node ${gone}\\b.*: put ${v2} to no ` +
              "use until a run proves that copy ended",
          ),
        );
      } finally {
        await fault.close();
      }
    });
  }

  it("lifts the block when the answer to the block itself was lost", async () => {
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => (r.path.endsWith("/_block/write") ? "swallow" : "forward"),
    );
    try {
      await using fixture = await moving(50, {
        hosts: [fault.url],
        settings: SWALLOWED_TIMEOUT,
      });
      const { ws, alias } = fixture;
      const failed = await ws.run("--json");
      assert.equal(failed.code, 1, failed.out);
      assert.match(
        failed.report!.error!.message,
        /reindex step block: .*writes to .* were blocked \d+\.\d s, until the block was lifted/,
      );
      const write = await os("PUT", `/${alias}/_doc/after?refresh=true`, { seq: -6, price: "1" });
      assert.equal(write.status, 201, "the source takes writes again");
    } finally {
      await fault.close();
    }
  });

  it("reports an answer to the block nested 200,000 deep as a failed step, bounded, and lifts the block", async () => {
    const depth = 200_000;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault =>
        r.path.endsWith("/_block/write")
          ? { status: 200, text: `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` }
          : "forward",
    );
    try {
      await using fixture = await moving(50, { hosts: [fault.url] });
      const { ws, alias } = fixture;
      const failed = await ws.run("--json");
      assert.equal(failed.code, 1, failed.out);
      const message = failed.report!.error!.message;
      assert.match(message, /reindex step block: the block was not acknowledged/);
      assert.ok(message.length < 2_000, `a message of ${message.length} characters`);
      const write = await os("PUT", `/${alias}/_doc/after?refresh=true`, { seq: -7, price: "1" });
      assert.equal(write.status, 201, "the source takes writes again");
    } finally {
      await fault.close();
    }
  });

  it("cancels a copy into the new index that nobody follows before copying", async () => {
    let holding = true;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => {
        const waiting = r.method === "GET" && r.path.startsWith("/_tasks/");
        return holding && waiting ? "hang" : "forward";
      },
    );
    try {
      await using fixture = await moving(500, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root]);
      await Promise.race([
        fault.waitFor((r) => r.path.startsWith("/_tasks/")),
        runner.closed.then(() => assert.fail(`cli.ts ended first:\n${runner.stderr()}`)),
      ]);
      runner.signal("SIGKILL");
      await runner.closed;
      // A copy of an earlier run that is still going, one document a second.
      const rogue = await os(
        "POST",
        "/_reindex?wait_for_completion=false&requests_per_second=1",
        {
          source: { index: v1, size: 1 },
          dest: { index: v2, op_type: "create" },
          conflicts: "proceed",
        },
      );
      holding = false;
      const rerun = await runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
        takeOver,
      );
      assert.equal(rerun.code, 0, rerun.out);
      const task = await os("GET", `/_tasks/${rogue.body.task}`);
      assert.equal(task.body.completed, true);
      assert.equal(task.body.response.canceled, "by user request", "the rogue copy was cancelled");
      await assertMoved(alias, v1, v2, 500);
    } finally {
      await fault.close();
    }
  });

  it("stops with a failure naming the step, not a crash, on a malformed progress document", async () => {
    await using fixture = await moving(10);
    const { ws } = fixture;
    await os("PUT", `/${ws.recordsIndex}`, { settings: { number_of_replicas: 0 } });
    const id = await recordId(ws.id, "2-products-reindex.json");
    await os("PUT", `/${ws.recordsIndex}/_doc/reindex-${id}?refresh=true`, { source: 1 });
    const run = await ws.run("--json");
    assert.equal(run.code, 1, run.out);
    assert.equal(run.report!.error!.kind, "failure");
    assert.match(
      run.report!.error!.message,
      /reindex step observe: the progress document .* is malformed/,
    );
  });

  it("refuses a source that is an alias, or that someone else blocked, and leaves that block", async () => {
    await using ws = await Workspace.create();
    const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
    await seed(v1, `${ws.id}-indirect`, 10);
    await file(ws, alias, v2, { source: `${ws.id}-indirect` });
    const viaAlias = await ws.run("--json");
    assert.match(
      viaAlias.report!.error!.message,
      /is an alias or a data stream: name the index behind it/,
    );
    await file(ws, alias, v2, { source: v1 });
    await os("PUT", `/${v1}/_block/write`);
    const blocked = await ws.run("--json");
    assert.match(blocked.report!.error!.message, /writes to ".*-p-v1" are blocked already/);
    const settings = await os("GET", `/${v1}/_settings/index.blocks.write`);
    assert.equal(
      settings.body[v1].settings.index.blocks.write,
      "true",
      "someone else's block stays",
    );
    assert.equal((await os("HEAD", `/${v2}`)).status, 404);
  });
});
