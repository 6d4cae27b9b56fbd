import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { processGone } from "../../../../src/migrate/local_process.ts";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import { taskFailure } from "../../../../src/migrate/search/reindex/reindex.ts";
import { startCli } from "../../cli_process.ts";
import { runCaptured } from "../../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type Fault, type Received, startFaultServer } from "../fault_server.ts";
import { copyThenBlock, startAliasWriter, whileWriting } from "../alias_writer.ts";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests read freely
type Json = any;

/** Creates `index` with `count` documents whose `price` is a string, and `alias` on it. */
async function seed(index: string, alias: string, count: number): Promise<void> {
  const created = await os("PUT", `/${index}`, {
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "1s" },
    mappings: { properties: { seq: { type: "long" }, price: { type: "keyword" } } },
    aliases: { [alias]: { is_write_index: true } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  for (let start = 0; start < count; start += 10_000) {
    const lines: string[] = [];
    for (let seq = start; seq < Math.min(count, start + 10_000); seq++) {
      lines.push(JSON.stringify({ create: { _id: `s${seq}` } }));
      lines.push(JSON.stringify({ seq, price: `${seq % 1000}.5` }));
    }
    const response = await fetch(
      `${OPENSEARCH_URL}/${index}/_bulk`,
      {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: lines.join("\n") + "\n",
      },
    );
    const body = await response.json();
    assert.equal(body.errors, false, JSON.stringify(body.items?.find((i: Json) => i.create.error)));
  }
  await os("POST", `/${index}/_refresh`);
}

/**
 * Checks the guarantees: the alias on `index` only, as its write index; every document once; the
 * source write-blocked once the alias left it (a node that has not seen the move yet writes
 * there), else taking writes.
 */
async function assertMoved(
  alias: string,
  source: string,
  index: string,
  seeded: number,
  writer?: ReturnType<typeof startAliasWriter>,
): Promise<void> {
  const members = await os("GET", `/_alias/${alias}`);
  assert.deepEqual(members.body, { [index]: { aliases: { [alias]: { is_write_index: true } } } });
  await os("POST", `/${index}/_refresh`);
  if (writer === undefined) {
    const total = await os("GET", `/${index}/_count`);
    assert.equal(total.body.count, seeded, "a document lost, or copied twice");
  } else await writer.checkMoved(index);
  const dup = await os("POST", `/${index}/_search`, {
    size: 0,
    aggs: { dup: { terms: { field: "seq", min_doc_count: 2, size: 1 } } },
  });
  assert.deepEqual(dup.body.aggregations.dup.buckets, [], "a document twice");
  const blocks = await os("GET", `/${source}/_settings/index.blocks.*`);
  if (blocks.status === 200) {
    const write = blocks.body[source]?.settings?.index?.blocks?.write;
    if (source === index) assert.equal(write, undefined, "still blocked");
    else assert.equal(write, "true", "the source takes writes after the swap");
  }
}

const file = (ws: Workspace, alias: string, index: string, extra: Record<string, unknown> = {}) =>
  ws.file("2-products-reindex.json", {
    alias,
    index,
    mappings: { properties: { seq: { type: "long" }, price: { type: "double" } } },
    // The field changes its type across the copy: keyword text becomes a number.
    script: { source: "ctx._source.price = Double.parseDouble(ctx._source.price)" },
    ...extra,
  });

/**
 * A workspace whose alias `<id>-p` is on `<id>-p-v1`, seeded with `count` documents, and a reindex
 * file moving it to `<id>-p-v2`.
 */
async function moving(count: number, options: Parameters<typeof Workspace.create>[0] = {}) {
  const ws = await Workspace.create(options);
  const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
  await seed(v1, alias, count);
  await file(ws, alias, v2);
  return { ws, alias, v1, v2 };
}

/** A 4xx refusal of a request, as a fault server answers it. */
const REFUSED: Fault = {
  status: 400,
  body: { error: { type: "illegal_argument", reason: "not now" } },
};

/**
 * The client's timeout in the tests whose only host swallows a request (forwards it, never
 * answers): it is waited out once there, and the node must beat it on every other request, an
 * index created on a loaded machine included.
 */
const SWALLOWED_TIMEOUT = "    timeout: 5\n";

/** The swap: `POST /_aliases?cluster_manager_timeout=...`. */
const isSwap = (r: Received) => r.method === "POST" && r.path.startsWith("/_aliases?");

const takeOver = { identity: { host: hostname(), pid: process.pid, processGone } };

describe("a reindex file on the real node", () => {
  it("moves 50,000 documents while a writer keeps writing, losing none and copying none twice", async () => {
    const ws = await Workspace.create();
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
      const { ws, alias, v2 } = await moving(50_000, { hosts: [fault.url] });
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
        const { ws, alias, v1, v2 } = await moving(5_000, { hosts: [fault.url] });
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

describe("a reindex step that fails", () => {
  it("leaves the alias on the source, never blocked, names the step, and a fixed file starts over", async () => {
    const ws = await Workspace.create();
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
      const { ws, alias, v1, v2 } = await moving(1_000, {
        hosts: [fault.url],
        settings: SWALLOWED_TIMEOUT,
      });
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
      const { ws, alias, v1, v2 } = await moving(1_000, { hosts: [fault.url] });
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
      const moved = await moving(1_000, { hosts: [fault.url] });
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
      const { ws, alias, v1, v2 } = await moving(1_000, { hosts: [fault.url] });
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
      const { ws, alias, v1, v2 } = await moving(1_000, { hosts: [fault.url] });
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
        const { ws, alias, v1, v2 } = await moving(10, { hosts: [fault.url] });
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
    const ws = await Workspace.create();
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
      const { ws, alias, v1, v2 } = await moving(1_000, { hosts: [fault.url] });
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
      const { ws, alias, v1, v2 } = await moving(2_000, { hosts: [fault.url] });
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
    const ws = await Workspace.create();
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
    const { ws, alias, v1, v2 } = await moving(100);
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
    const { ws, alias, v1, v2 } = await moving(100);
    await file(ws, alias, v2, { unblock_source: true });
    const run = await ws.ok();
    assert.match(run.err, new RegExp(`writes to ${v1} unblocked, as the file asks`));
    const direct = await os("PUT", `/${v1}/_doc/direct`, { seq: -9, price: "1" });
    assert.equal(direct.status, 201, JSON.stringify(direct.body));
  });
});

describe("a reindex against hostile states and faults", () => {
  it("keeps the alias's filter and routing on the new index", async () => {
    const ws = await Workspace.create();
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
        const { ws, alias, v1, v2 } = await moving(200, {
          hosts: [fault.url],
          settings: `    timeout: ${timeout}\n`,
        });
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
      const { ws, alias, v1, v2 } = await moving(200, { hosts: [fault.url] });
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
        const { ws, alias, v1, v2 } = await moving(200, { hosts: [fault.url] });
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
      const { ws, alias } = await moving(50, {
        hosts: [fault.url],
        settings: SWALLOWED_TIMEOUT,
      });
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
      const { ws, alias } = await moving(50, { hosts: [fault.url] });
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
      const { ws, alias, v1, v2 } = await moving(500, { hosts: [fault.url] });
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
    const { ws } = await moving(10);
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
    const ws = await Workspace.create();
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
      const moved = await moving(1_000, { hosts: [fault.url] });
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
      const { ws, alias, v1, v2 } = await moving(100, { hosts: [fault.url] });
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
