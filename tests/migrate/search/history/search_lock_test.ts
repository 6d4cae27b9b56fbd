import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { processGone } from "../../../../src/migrate/local_process.ts";
import { startCli } from "../../cli_process.ts";
import { runCaptured } from "../../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import {
  type FaultServer,
  type Received,
  SHARDS_NOT_STARTED,
  startFaultServer,
} from "../fault_server.ts";

const future = () => new Date(Date.now() + 3_600_000).toISOString();
const past = () => new Date(Date.now() - 60_000).toISOString();

async function records(ws: Workspace): Promise<string[]> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    query: { exists: { field: "migration_path" } },
  });
  return found.body.hits.hits.map((h: { _source: { migration_path: string } }) =>
    h._source.migration_path
  );
}

async function lockDoc(ws: Workspace): ReturnType<typeof os> {
  return await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`);
}

/** A process that has ended: its pid is free on this machine. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["--version"], { stdio: "ignore" });
  const pid = child.pid!;
  await new Promise((r) => child.once("exit", r));
  return pid;
}

/** A promise the test settles when it wants: a slow host's answers wait for it. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A copy of a workspace's config with other hosts: a second runner on the same records. */
async function configWith(ws: Workspace, hosts: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-config-"));
  const text = await readFile(join(ws.configDir, "application.yml"), "utf8");
  await writeFile(
    join(dir, "application.yml"),
    text.replace(/hosts: \[[^\]]*\]/, `hosts: ["${hosts}"]`),
  );
  return dir;
}

/**
 * A workspace on `host` with a `lease` (2 s) and one file, a PUT of a document into "<id>-slow",
 * which the fault servers here hold.
 */
async function slowFileWorkspace(host: string, settings = "", lease = 2): Promise<Workspace> {
  const ws = await Workspace.create({
    hosts: [host],
    settings,
    migrations: `      lock_lease: ${lease}\n`,
  });
  await os("PUT", `/${ws.id}-slow`, { settings: { number_of_replicas: 0 } });
  await ws.file("001-doc.json", { method: "PUT", path: `/${ws.id}-slow/_doc/1`, body: {} });
  return ws;
}

/** A second runner on the same records, straight to the node, waiting up to `lockTimeout` s. */
async function secondRunner(ws: Workspace, lockTimeout: number) {
  const config = await configWith(ws, OPENSEARCH_URL);
  const args = ["-m", "search", "-c", config, "--sqlPath", ws.root, "--json"];
  return await runCaptured([...args, "--lock-timeout", String(lockTimeout)]);
}

describe("the search lock against a real node", () => {
  let slowGate = gate();
  let slow: FaultServer;
  let refusing: FaultServer;
  before(async () => {
    // Holds every request to a "-slow" index until the test opens the gate.
    slow = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.path.includes("-slow") ? { after: slowGate.promise } : "forward",
    );
    // Refuses every DELETE, as for a user without the right to delete documents; after 200
    // requests it answers 500 to everything, so that a runner that floods it stops.
    refusing = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        r.n > 200
          ? { status: 500, body: { error: "flood" } }
          : r.method === "DELETE"
          ? { status: 403, body: { error: { type: "security_exception", reason: "no delete" } } }
          : "forward",
    );
  });
  after(async () => {
    slowGate.open();
    await Promise.all([slow.close(), refusing.close()]);
  });

  it("does not flood a cluster that refuses the takeover: one look per poll, a clear error", async () => {
    const ws = await Workspace.create({ hosts: [refusing.url] });
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: past() });
    const before = refusing.received.length;
    const run = await ws.run("--json", "--lock-timeout", "2");
    const sent = refusing.received.length - before;
    assert.equal(run.code, 1, run.out);
    assert.match(run.report!.error!.message, /HTTP 403/);
    assert.match(run.report!.error!.message, /removing it was refused/);
    assert.ok(sent < 20, `${sent} requests`);
    assert.equal((await lockDoc(ws)).status, 200, "the expired lock is still there");
  });

  it("renews the lease while a slow request runs: a second runner cannot take the lock over", async () => {
    const ws = await slowFileWorkspace(slow.url);
    slowGate = gate();
    const first = ws.run("--json");
    await slow.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
    // Twice the lease: without renewal, the lock would have expired and been taken over.
    const second = await secondRunner(ws, 4);
    assert.equal(second.code, 3, second.out);
    slowGate.open();
    const done = await first;
    assert.equal(done.code, 0, done.out);
    assert.deepEqual(await records(ws), ["001-doc.json"]);
    assert.equal((await os("GET", `/${ws.id}-slow/_doc/1`)).body._version, 1);
  });

  it("stops at once, without recording, when a renewal finds the lock taken", async () => {
    const ws = await slowFileWorkspace(slow.url);
    slowGate = gate();
    const first = ws.run("--json");
    await slow.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
    // As "unlock" by hand, or a runner that took an expired lock over, would do.
    assert.equal((await os("DELETE", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 200);
    // The held request never gets an answer: the runner must not wait for it.
    const run = await first;
    assert.equal(run.code, 1, run.out);
    assert.match(run.report!.error!.message, /lost the lock/);
    assert.match(
      run.report!.error!.message,
      /may or may not have been applied, and it is not recorded/,
    );
    assert.equal(run.report!.error!.file, "001-doc.json");
    assert.deepEqual(await records(ws), []);
    slowGate.open();
  });

  it("takes over a lock without expires_at once it stayed unchanged for a lease", async () => {
    const ws = await Workspace.create({ migrations: "      lock_lease: 1\n" });
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.plantLock({ host: "elsewhere", pid: 1 });
    const run = await ws.run("--json", "--lock-timeout", "10");
    assert.equal(run.code, 0, run.out);
    assert.deepEqual(await records(ws), ["a-template.json"]);
  });

  it("takes over at once the lock of a runner of this host whose process is gone", async () => {
    const ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.plantLock({ host: "test", pid: await deadPid(), expires_at: future() });
    const identity = { host: "test", pid: process.pid, processGone };
    const run = await runCaptured(
      ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
      { identity },
    );
    assert.equal(run.code, 0, run.out);
    assert.deepEqual(await records(ws), ["a-template.json"]);
  });

  it("waits for a runner of this host whose process lives, and for one of another host", async () => {
    for (const holder of [{ host: "test", pid: process.pid + 0 }, { host: "other", pid: 12345 }]) {
      const ws = await Workspace.create();
      await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
      // The test process itself is alive; pid 12345 may not exist here, but on another host.
      await ws.plantLock({ ...holder, expires_at: future() });
      const identity = { host: "test", pid: process.pid + 1, processGone };
      const run = await runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
        { identity },
      );
      assert.equal(run.code, 3, run.out);
    }
  });

  it("stops waiting for the lock on SIGTERM, and leaves the other runner's lock alone", async () => {
    const ws = await Workspace.create({ hosts: [slow.url] });
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: future() });
    const runner = startCli([
      "-m",
      "search",
      "-c",
      ws.configDir,
      "--sqlPath",
      ws.root,
      "--lock-timeout",
      "600",
      "--json",
    ]);
    // --json prints no progress: the host sees the runner read the lock it waits for.
    await slow.waitFor((r) => r.method === "GET" && r.path.endsWith(`/_doc/lock-${ws.id}`));
    runner.signal("SIGTERM");
    assert.equal(await runner.closed, 1, runner.stderr());
    const report = JSON.parse(runner.stdout());
    assert.equal(report.error.kind, "interrupted");
    assert.match(report.error.message, /interrupted while waiting for the lock/);
    assert.equal((await lockDoc(ws)).body._source.host, "elsewhere");
    assert.deepEqual(await records(ws), []);
  });

  it(
    "gives the lock up before its lease ends when renewals hang: a runner that takes it over applies the file once",
    {
      timeout: 60_000,
    },
    async () => {
      const fileGate = gate();
      const renewal = (r: Received) =>
        r.method === "PUT" && r.path.includes("/_doc/lock-") && r.path.includes("if_seq_no");
      const hanging = await startFaultServer(
        OPENSEARCH_URL,
        (r) =>
          renewal(r) ? "hang" : r.path.includes("-slow") ? { after: fileGate.promise } : "forward",
      );
      try {
        const ws = await slowFileWorkspace(hanging.url, "    timeout: 30\n");
        const first = ws.run("--json");
        await hanging.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
        // A second runner on a host that works waits for the lock, then applies the file.
        const second = await secondRunner(ws, 20);
        assert.equal(second.code, 0, second.out);
        // Only now may the first runner's request go on, if that runner still wants it sent.
        fileGate.open();
        const run = await first;
        assert.equal(run.code, 1, run.out);
        assert.match(run.report!.error!.message, /could not renew the lock within 1\.5 s/);
        assert.equal((await os("GET", `/${ws.id}-slow/_doc/1`)).body._version, 1);
        assert.deepEqual(await records(ws), ["001-doc.json"]);
      } finally {
        fileGate.open();
        await hanging.close();
      }
    },
  );

  it("removes its lock on release even when a renewal in flight landed first", async () => {
    const fileGate = gate();
    const renewal = (r: Received) =>
      r.method === "PUT" && r.path.includes("/_doc/lock-") && r.path.includes("if_seq_no");
    // The renewal reaches the cluster and its answer is lost; the file waits until it landed.
    const racing = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        renewal(r) ? "swallow" : r.path.includes("-slow") ? { after: fileGate.promise } : "forward",
    );
    try {
      void racing.waitForUpstream(renewal).then(() => fileGate.open());
      const ws = await slowFileWorkspace(racing.url);
      const run = await ws.run("--json");
      assert.equal(run.code, 0, run.out);
      assert.equal((await lockDoc(ws)).status, 404, "the lock is gone");
    } finally {
      fileGate.open();
      await racing.close();
    }
  });

  it("removes its own lock when the _create landed but its answer never came", async () => {
    // The only host forwards the _create and never answers it: the run fails, and the lock
    // that did land must not block the next runner for a lease.
    const swallowing = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.path.includes("/_create/lock-") ? "swallow" : "forward",
    );
    try {
      const ws = await Workspace.create({ hosts: [swallowing.url], settings: "    timeout: 1\n" });
      await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out);
      assert.equal((await lockDoc(ws)).status, 404, "no lock left behind");
    } finally {
      await swallowing.close();
    }
  });

  it("waits, as for any busy cluster, when reading the lock answers 503", async () => {
    const busy = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        r.method === "GET" && r.path.includes("/_doc/lock-")
          ? { status: 503, body: SHARDS_NOT_STARTED }
          : "forward",
    );
    try {
      const ws = await Workspace.create({ hosts: [busy.url] });
      await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
      await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: future() });
      const run = await ws.run("--json", "--lock-timeout", "0.5");
      assert.equal(run.code, 3, run.out);
      assert.match(run.report!.error!.message, /HTTP 503/);
      const reads = busy.received.filter((r) => r.method === "GET").length;
      assert.ok(reads >= 2, `looked again after the 503 (${reads} reads)`);
    } finally {
      await busy.close();
    }
  });

  it("counts the lease from its own document when a renewal landed unanswered: it stops before that lease ends", async () => {
    // Renewal 1 lands and its answer is lost; renewal 2 gets 409 and reads its own document
    // (written by renewal 1); every later renewal hangs. The file never ends.
    let renewals = 0;
    const fileGate = gate();
    const racing = await startFaultServer(OPENSEARCH_URL, (r) => {
      if (r.method === "PUT" && r.path.includes("/_doc/lock-") && r.path.includes("if_seq_no")) {
        renewals++;
        // Lease 4 s: renewal 1 (at 1.33 s) loses its answer 1 s later, so renewal 2 (a twelfth
        // of the lease after that) reads a document written more than a quarter lease before;
        // counting from that read would run past the document's expiry.
        if (renewals === 1) return { resetAfter: new Promise((r) => setTimeout(r, 1_000)) };
        return renewals === 2 ? "forward" : "hang";
      }
      return r.path.includes("-slow") ? { after: fileGate.promise } : "forward";
    });
    try {
      const ws = await slowFileWorkspace(racing.url, "", 4);
      const run = await ws.run("--json");
      const stopped = Date.now();
      assert.equal(run.code, 1, run.out);
      assert.match(run.report!.error!.message, /could not renew the lock/);
      assert.ok(renewals >= 2, `renewals: ${renewals}`);
      // The document renewal 1 wrote is still there: the runner gave up before it expired.
      const lock = await lockDoc(ws);
      assert.ok(stopped < Date.parse(lock.body._source.expires_at), JSON.stringify(lock.body));
      assert.deepEqual(await records(ws), []);
    } finally {
      fileGate.open();
      await racing.close();
    }
  });
});
