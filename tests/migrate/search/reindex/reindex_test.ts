// A reindex on the real node: the move of an alias to a new index, while an application writes,
// killed at a step, while the copy runs, and what it says it did. A step that fails, and hostile
// states and faults, are in reindex_failures_test.ts.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import { taskFailure } from "../../../../src/migrate/search/reindex/reindex.ts";
import { startCli } from "../../cli_process.ts";
import { runCaptured } from "../../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type Fault, type Received, startFaultServer } from "../fault_server.ts";
import { copyThenBlock, startAliasWriter, whileWriting } from "../alias_writer.ts";
import { assertMoved, file, isSwap, moving, REFUSED, seed, takeOver } from "./reindex_fixtures.ts";

describe("a reindex file on the real node", () => {
  it("moves 50,000 documents while a writer keeps writing, losing none and copying none twice", async () => {
    await using ws = await Workspace.create();
    const [alias, v1, v2] = [`${ws.id}-products`, `${ws.id}-products-v1`, `${ws.id}-products-v2`];
    await seed(v1, alias, 50_000);
    await file(ws, alias, v2);
    const writer = startAliasWriter(os, alias, 50_000);
    const started = Date.now();
    const run = await whileWriting(writer, () => ws.run("--json"));
    const wall = Date.now() - started;
    assert.equal(run.code, 0, run.out);
    const reindex = run.report!.connections[0].files[0].reindex!;
    assert.equal(run.report!.connections[0].files[0].result, "reindexed");
    assert.equal(reindex.source, v1);
    await assertMoved(alias, v1, v2, 50_000, writer);
    // The source's count when blocked: what the new index held then.
    assert.equal((await os("GET", `/${v1}/_count`)).body.count, reindex.documents);
    const price = await os("GET", `/${v2}/_mapping/field/price`);
    assert.equal(price.body[v2].mappings.price.mapping.price.type, "double");
    const all = (await os("GET", `/${v2}/_count`)).body.count;
    const range = await os("POST", `/${v2}/_count`, { query: { range: { price: { gte: 0 } } } });
    assert.equal(range.body.count, all, "every price is a number now");
    // The figures the README and the issue quote.
    console.log(
      `reindex of 50,000 documents: ${wall} ms wall, copy ${reindex.copyMs} ms, ` +
        `${reindex.documentsPerSecond} documents/s, writes blocked ${reindex.writeBlockedMs} ms; ` +
        `writer: ${JSON.stringify(writer.counts)}, ${writer.refused} refused by the block and ` +
        `retried, ${writer.failed} failed otherwise`,
    );
    assert.equal(writer.failed, 0);
    // Run again: recorded, nothing sent but reads.
    const again = await ws.ok("--json");
    assert.equal(again.report!.connections[0].files[0].action, "skip");
  });
});

describe("a reindex while an application creates, updates and deletes through the alias", () => {
  it("takes writes during the copy, blocks them only for the catch-up, and loses none of them", async () => {
    let writer: ReturnType<typeof startAliasWriter> | undefined;
    const order = copyThenBlock(() => writer!.writes);
    const fault = await startFaultServer(OPENSEARCH_URL, (r) => order.see(r));
    try {
      await using fixture = await moving(50_000, { hosts: [fault.url] });
      const { ws, alias, v2 } = fixture;
      writer = startAliasWriter(os, alias, 50_000);
      const run = await whileWriting(writer, () => ws.run("--json"));
      assert.equal(run.code, 0, run.out);
      assert.equal(writer.failed, 0);
      const during = order.assertOrder();
      await writer.checkMoved(v2);
      const reindex = run.report!.connections[0].files[0].reindex!;
      console.log(
        `reindex of 50,000 documents with a writer: copy ${reindex.copyMs} ms, writes blocked ` +
          `${reindex.writeBlockedMs} ms; writer: ${JSON.stringify(writer.counts)}, ${during} ` +
          `during the copy, ${writer.refused} refused by the block and retried`,
      );
    } finally {
      await fault.close();
    }
  });
});

describe("a reindex runner killed with SIGKILL at a step", () => {
  // Each makes the test for the request the runner is killed waiting on.
  const steps: [string, () => (r: Received) => boolean][] = [
    ["while the copy task runs", () => (r) => r.method === "GET" && r.path.startsWith("/_tasks/")],
    [
      "while it reads the new index's ids to find deletes",
      () => (r) => r.method === "POST" && /-p-v2\/_search\?preference=/.test(r.path),
    ],
    [
      "as it blocks writes",
      () => (r) => r.method === "PUT" && r.path.endsWith("/_block/write"),
    ],
    ["while the last catch-up copies, under the block", () => {
      let blocked = false;
      return (r) => {
        if (r.method === "PUT" && r.path.endsWith("/_block/write")) blocked = true;
        return blocked && r.method === "POST" && r.path.startsWith("/_reindex");
      };
    }],
    ["before the swap", () => isSwap],
  ];
  for (const [when, test] of steps) {
    it(`is finished by the next run, no document lost or copied twice (killed ${when})`, async () => {
      let holding = true;
      const held = test();
      const fault = await startFaultServer(
        OPENSEARCH_URL,
        (r): Fault => (holding && held(r) ? "hang" : "forward"),
      );
      try {
        await using fixture = await moving(5_000, { hosts: [fault.url] });
        const { ws, alias, v1, v2 } = fixture;
        const writer = startAliasWriter(os, alias, 5_000);
        const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root]);
        // The runner sent the request and waits for its answer, which never comes.
        await Promise.race([
          fault.waitFor(held),
          runner.closed.then(() => assert.fail(`cli.ts ended first:\n${runner.stderr()}`)),
        ]);
        runner.signal("SIGKILL");
        await runner.closed;
        assert.equal((await os("HEAD", `/${v2}`)).status, 200, "the new index was created");
        assert.ok(
          (await os("GET", `/_alias/${alias}`)).body[v1],
          "the alias is still on the source",
        );
        const id = await recordId(ws.id, "2-products-reindex.json");
        const noted = await os("GET", `/${ws.recordsIndex}/_doc/reindex-${id}`);
        assert.equal(noted.body._source.source, v1, "the progress names the source");
        holding = false;
        const rerun = await runCaptured(
          [
            "-m",
            "search",
            "-c",
            ws.configDir,
            "--sqlPath",
            ws.root,
            "--json",
            "--lock-timeout",
            "0",
          ],
          takeOver,
        );
        assert.equal(rerun.code, 0, rerun.out);
        const reindex = JSON.parse(rerun.out).connections[0].files[0].reindex;
        assert.equal(reindex.resumed, true);
        // Writes land on the new index after the move.
        const moved = writer.writes;
        while (writer.writes < moved + 5) await new Promise((r) => setTimeout(r, 10));
        await writer.stop();
        await assertMoved(alias, v1, v2, 5_000, writer);
        assert.equal(writer.failed, 0);
        const progress = await os("GET", `/${ws.recordsIndex}/_doc/reindex-${id}`);
        assert.equal(progress.status, 404, "the progress document is gone");
      } finally {
        await fault.close();
      }
    });
  }
});

describe("a reindex while the copy runs", () => {
  it("shows the task's progress, read from _tasks", async () => {
    let slow = 1;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault =>
        r.path.includes("wait_for_completion=true") && slow-- > 0
          ? { status: 500, body: { error: { type: "timeout_exception", reason: "Timed out" } } }
          : "forward",
    );
    try {
      await using fixture = await moving(1_000, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const run = await ws.ok();
      assert.match(run.err, new RegExp(`reindex ${v1} -> ${v2}: \\d+ of \\d+ document\\(s\\)`));
      assert.match(
        run.err,
        new RegExp(`alias ${alias} moved to ${v2}, writes through it blocked \\d+\\.\\d s`),
      );
      assert.match(run.err, new RegExp(`writes to ${v1} stay blocked`));
      assert.match(run.err, new RegExp(`alias ${alias}: ${v1} -> ${v2}, 1000 document\\(s\\)`));
    } finally {
      await fault.close();
    }
  });

  it("stopped by Ctrl-C, cancels the copy, which never blocked writes; the next run resumes", async () => {
    // The copy must still run when Ctrl-C comes: Elasticsearch copies 2,000 documents before the
    // first task read. At one document a second, the second batch waits long past the test.
    // Only the run's wait for the copy hangs: the reads after the cancel that prove the copy
    // stopped reach the node (hung too, each would wait out the client's timeout).
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault =>
        r.method === "GET" && r.path.startsWith("/_tasks/") &&
          r.path.includes("wait_for_completion=true")
          ? "hang"
          : r.method === "POST" && r.path.startsWith("/_reindex?")
          ? { forwardAs: `${r.path}&requests_per_second=1` }
          : "forward",
    );
    try {
      await using fixture = await moving(2_000, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const interrupt = new AbortController();
      const running = runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json"],
        { signal: interrupt.signal },
      );
      const waiting = await Promise.race([
        fault.waitFor((r) => r.path.startsWith("/_tasks/")),
        running.then((r) => assert.fail(`the run ended first:\n${r.out}`)),
      ]);
      interrupt.abort();
      const run = await running;
      assert.equal(run.code, 1, run.out);
      const error = JSON.parse(run.out).error;
      assert.equal(error.kind, "interrupted");
      assert.match(
        error.message,
        /reindex step copy: interrupted; .* writes to it were not blocked/,
      );
      // The node answered the reads after the cancel: the copy is proven stopped.
      assert.doesNotMatch(error.message, /not proven stopped/);
      const task = waiting.path.split("?")[0];
      await fault.waitFor((r) => r.method === "POST" && r.path.startsWith(`${task}/_cancel`));
      const write = await os("PUT", `/${alias}/_doc/late?refresh=true`, { seq: -4, price: "3" });
      assert.equal(write.status, 201, "the source takes writes again");
      await fault.close();
      // The next run, straight to the node: it copies again, the late write with the rest.
      await writeFile(
        join(ws.configDir, "application.yml"),
        (await readFile(join(ws.configDir, "application.yml"), "utf8")).replace(
          fault.url,
          OPENSEARCH_URL,
        ),
      );
      const rerun = await ws.ok("--json");
      assert.equal(rerun.report!.connections[0].files[0].reindex!.resumed, true);
      await assertMoved(alias, v1, v2, 2_001);
    } finally {
      await fault.close();
    }
  });
});

describe("a reindex from an index outside any alias", () => {
  it("creates the alias on the new index, and deletes the source when asked", async () => {
    await using ws = await Workspace.create();
    const [alias, legacy, v2] = [`${ws.id}-p`, `${ws.id}-legacy`, `${ws.id}-p-v2`];
    await seed(legacy, `${ws.id}-unrelated`, 300);
    await os("POST", "/_aliases", {
      actions: [{ remove: { index: legacy, alias: `${ws.id}-unrelated` } }],
    });
    await file(ws, alias, v2, { source: legacy, delete_source: true });
    const run = await ws.ok("--json");
    const reindex = run.report!.connections[0].files[0].reindex!;
    assert.deepEqual(
      { ...reindex, copyMs: 0, documentsPerSecond: 0, writeBlockedMs: 0 },
      {
        source: legacy,
        index: v2,
        alias,
        resumed: false,
        documents: 300,
        copyMs: 0,
        documentsPerSecond: 0,
        writeBlockedMs: 0,
        deletedSource: true,
      },
    );
    assert.equal((await os("HEAD", `/${legacy}`)).status, 404, "the source is deleted");
    await assertMoved(alias, legacy, v2, 300);
  });
});

describe("the source of a reindex once the alias moved", () => {
  it("stays write-blocked; validate, drift, a later reindex of the alias and deleting it work", async () => {
    await using fixture = await moving(100);
    const { ws, alias, v1, v2 } = fixture;
    await ws.ok();
    // A writer that names the index, bypassing the alias, is refused, not lost.
    const direct = await os("PUT", `/${v1}/_doc/direct`, { seq: -9, price: "1" });
    assert.equal(direct.status, 403, JSON.stringify(direct.body));
    assert.match(JSON.stringify(direct.body), /cluster_block_exception/);
    await ws.ok("validate");
    const drift = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(drift.report!.connections[0].files.map((f) => f.action), ["skip"]);
    // A later reindex moves the alias on, and deletes its own (blocked) source when asked.
    const v3 = `${ws.id}-p-v3`;
    await ws.file("3-products-reindex.json", { alias, index: v3, delete_source: true });
    const later = await ws.ok("--json");
    assert.deepEqual(
      later.report!.connections[0].files.map((f) => [f.action, f.result]),
      [["skip", undefined], ["apply", "reindexed"]],
    );
    assert.equal((await os("HEAD", `/${v2}`)).status, 404, "the blocked source was not deleted");
    await assertMoved(alias, v1, v3, 100);
    assert.equal((await os("DELETE", `/${v1}`)).status, 200);
  });

  it("takes writes again when the file says unblock_source", async () => {
    await using fixture = await moving(100);
    const { ws, alias, v1, v2 } = fixture;
    await file(ws, alias, v2, { unblock_source: true });
    const run = await ws.ok();
    assert.match(run.err, new RegExp(`writes to ${v1} unblocked, as the file asks`));
    const direct = await os("PUT", `/${v1}/_doc/direct`, { seq: -9, price: "1" });
    assert.equal(direct.status, 201, JSON.stringify(direct.body));
  });
});

describe("what a reindex says it did", () => {
  // What a run says is on stderr, which --json leaves silent: these runs print it.
  it("says a document written again during the copy was copied again, not deleted", async () => {
    let v1 = "", alias = "";
    let changed: Promise<unknown> | undefined;
    const fault = await startFaultServer(OPENSEARCH_URL, (r): Fault => {
      // The prune's first read of the source, once the copy and a catch-up are done: one
      // document is written again, another deleted, both after the checkpoint it reads up to.
      if (
        changed === undefined && r.method === "POST" &&
        r.path.startsWith(`/${v1}/_search?preference=`)
      ) {
        changed = (async () => {
          const update = await os("PUT", `/${alias}/_doc/s5?refresh=true`, {
            seq: 5,
            price: "777.25",
          });
          assert.equal(update.status, 200, JSON.stringify(update.body));
          assert.equal((await os("DELETE", `/${alias}/_doc/s6?refresh=true`)).status, 200);
        })();
        return { after: changed };
      }
      return "forward";
    });
    try {
      await using moved = await moving(1_000, { hosts: [fault.url] });
      [v1, alias] = [moved.v1, moved.alias];
      const run = await moved.ws.ok();
      assert.ok(changed, "the prune read the source");
      assert.match(
        run.err,
        new RegExp(
          `reindex: deleted 1 document\\(s\\) from ${moved.v2} the source no longer holds`,
        ),
      );
      assert.match(
        run.err,
        new RegExp(`reindex: copied again 1 document\\(s\\) written to ${v1} during the copy`),
      );
      await assertMoved(alias, v1, moved.v2, 999);
      assert.equal((await os("GET", `/${moved.v2}/_doc/s5`)).body._source.price, 777.25);
    } finally {
      await fault.close();
    }
  });

  it("says it took over the new index a run that stopped created, and created one it made", async () => {
    let refusing = true;
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault => (refusing && isSwap(r) ? REFUSED : "forward"),
    );
    try {
      await using fixture = await moving(100, { hosts: [fault.url] });
      const { ws, alias, v1, v2 } = fixture;
      const first = await ws.run();
      assert.equal(first.code, 1, "the swap is refused: rolled back");
      assert.match(first.err, new RegExp(`reindex: created ${v2}\\n`));
      // Stopped twice: the next run finds the new index of the run before, and keeps it.
      const second = await ws.run();
      assert.equal(second.code, 1, "the swap is refused again");
      assert.match(
        second.err,
        new RegExp(`reindex: took over ${v2}, created by a run that stopped`),
      );
      assert.doesNotMatch(second.err, /reindex: created /);
      // Deleted by hand: the next run makes it again.
      assert.equal((await os("DELETE", `/${v2}`)).status, 200);
      refusing = false;
      const third = await ws.ok();
      assert.match(third.err, new RegExp(`reindex: created ${v2}\\n`));
      assert.doesNotMatch(third.err, /took over/);
      await assertMoved(alias, v1, v2, 100);
    } finally {
      await fault.close();
    }
  });
});

describe("taskFailure: why a finished copy did not copy everything", () => {
  const finished = (failures: unknown[]) => ({ completed: true, response: { failures } });

  it("names the shard and the reason of a search failure (a node lost mid-copy)", () => {
    assert.equal(
      taskFailure(finished([{
        index: "p-v1",
        shard: 0,
        node: "n1",
        reason: { type: "node_disconnected_exception", reason: "[n1] disconnected" },
      }])),
      'the copy could not read shard 0 of "p-v1" on node n1 (1 failure(s)): ' +
        "node_disconnected_exception: [n1] disconnected",
    );
  });

  it("names the document and the cause of a refused one, and says when none is given", () => {
    assert.equal(
      taskFailure(finished([{
        index: "p-v2",
        id: "s5",
        cause: { type: "mapper_parsing_exception", reason: "failed to parse field [price]" },
        status: 400,
      }])),
      "1 document(s) could not be copied (document s5): mapper_parsing_exception: failed to " +
        "parse field [price]",
    );
    assert.equal(
      taskFailure(finished([{ id: "s6" }, {}])),
      "2 document(s) could not be copied (document s6): no reason given",
    );
    assert.equal(taskFailure(finished([])), undefined);
  });
});
