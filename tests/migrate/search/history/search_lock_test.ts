// The search lock against the real node (OPENSEARCH_URL), some of it through loopback fault
// servers in front of it. Requests always take real time; the lock's own time (its lease, its
// renewals, the wait for it) does not always:
//
// - In virtual time, on a FakeClock (tests/fake_clock.ts) that moves only when the test
//   moves it, never waiting in real time for a lease or a poll: every test of "the search lock's
//   lease, in virtual time" (a lease run out and taken over, its holder stopped by its next
//   renewal; renewals keeping a lock through a second runner's whole wait; renewals failing until
//   three quarters of the lease; a wait up to its timeout; Ctrl-C during a wait), and every CLI run
//   of "the search lock against a real node" that renews a lease or waits for a lock (a second
//   runner kept out by renewals, a renewal finding the lock taken, a malformed lock taken over,
//   renewals that hang or lose their answer, a release racing a renewal, a busy cluster waited
//   for).
// - In real time, the rest, which waits for no lease: a runner as a process stopped by SIGTERM
//   (it runs on the system clock), a refused takeover, a dead or live process of this host, and a
//   _create whose answer never comes (the request's own timeout).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { processGone } from "../../../../src/migrate/local_process.ts";
import { LOCK_POLL_MS } from "../../../../src/migrate/lock_poll.ts";
import { MIGRATE_API_NAMES, type OptionNames } from "../../../../src/migrate/option_names.ts";
import {
  isMigrationError,
  type MigrationFailure,
} from "../../../../src/migrate/migration_error.ts";
import type { RunnerIdentity } from "../../../../src/migrate/runner_identity.ts";
import { type LockHolder, SearchLock } from "../../../../src/migrate/search/history/search_lock.ts";
import { SearchClient } from "../../../../src/migrate/search/http/search_client.ts";
import type { Transport } from "../../../../src/migrate/search/http/transport.ts";
import { startCli } from "../../cli_process.ts";
import { FakeClock } from "../../../fake_clock.ts";
import { runCaptured } from "../../run_cli.ts";
import { OPENSEARCH_URL, os, recording, type Sent, Workspace } from "../cluster.ts";
import { type FaultServer, SHARDS_NOT_STARTED, startFaultServer } from "../fault_server.ts";
import { suiteTempDirs } from "../../../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

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
  const dir = await suiteDir("thaw-config-");
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

/**
 * A second runner on the same records, straight to the node, waiting up to `lockTimeout` s (on
 * `clock` when given).
 */
async function secondRunner(ws: Workspace, lockTimeout: number, clock?: FakeClock) {
  const config = await configWith(ws, OPENSEARCH_URL);
  const args = ["-m", "search", "-c", config, "--sqlPath", ws.root, "--json"];
  return await runCaptured(
    [...args, "--lock-timeout", String(lockTimeout)],
    clock === undefined ? {} : { clock },
  );
}

/** A lock renewal: a PUT of the lock document guarded by the sequence numbers it was read with. */
const renewal = (r: { method: string; path: string }) =>
  r.method === "PUT" && r.path.includes("/_doc/lock-") && r.path.includes("if_seq_no");

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
    await using ws = await Workspace.create({ hosts: [refusing.url] });
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
    await using ws = await slowFileWorkspace(slow.url);
    slowGate = gate();
    const clock = new FakeClock();
    const first = ws.runWith({ clock }, "--json");
    await slow.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
    // Twice the lease, in virtual time: without renewal, the lock would have expired and been
    // taken over. The clock moves on each time the second runner waits and no renewal runs.
    const second = await clock.drive(secondRunner(ws, 4, clock));
    assert.equal(second.code, 3, second.out);
    slowGate.open();
    const done = await first;
    assert.equal(done.code, 0, done.out);
    assert.deepEqual(await records(ws), ["001-doc.json"]);
    assert.equal((await os("GET", `/${ws.id}-slow/_doc/1`)).body._version, 1);
  });

  it("stops at once, without recording, when a renewal finds the lock taken", async () => {
    await using ws = await slowFileWorkspace(slow.url);
    slowGate = gate();
    const clock = new FakeClock();
    const first = ws.runWith({ clock }, "--json");
    await slow.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
    // As "unlock" by hand, or a runner that took an expired lock over, would do.
    assert.equal((await os("DELETE", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 200);
    // The next renewal, a third of the 2 s lease on, finds it gone.
    await clock.advance(700);
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
    await using ws = await Workspace.create({ migrations: "      lock_lease: 1\n" });
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.plantLock({ host: "elsewhere", pid: 1 });
    const clock = new FakeClock();
    const run = await clock.drive(ws.runWith({ clock }, "--json", "--lock-timeout", "10"));
    assert.equal(run.code, 0, run.out);
    assert.equal(clock.due.length, 0, "no timer left: the lock was released");
    assert.deepEqual(await records(ws), ["a-template.json"]);
  });

  it("takes over at once the lock of a runner of this host whose process is gone", async () => {
    await using ws = await Workspace.create();
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
      await using ws = await Workspace.create();
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
    await using ws = await Workspace.create({ hosts: [slow.url] });
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
      const hanging = await startFaultServer(
        OPENSEARCH_URL,
        (r) =>
          renewal(r) ? "hang" : r.path.includes("-slow") ? { after: fileGate.promise } : "forward",
      );
      try {
        await using ws = await slowFileWorkspace(hanging.url, "    timeout: 30\n");
        const clock = new FakeClock();
        const first = ws.runWith({ clock }, "--json");
        await hanging.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
        // A second runner on a host that works waits for the lock, then applies the file. The
        // clock moves each time it waits, whatever the first runner's hung renewal is doing.
        const second = await clock.drive(secondRunner(ws, 20, clock), { tasks: false });
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
    // The renewal reaches the cluster and its answer is lost; the file waits until it landed.
    const racing = await startFaultServer(
      OPENSEARCH_URL,
      (r) =>
        renewal(r) ? "swallow" : r.path.includes("-slow") ? { after: fileGate.promise } : "forward",
    );
    try {
      void racing.waitForUpstream(renewal).then(() => fileGate.open());
      await using ws = await slowFileWorkspace(racing.url);
      const clock = new FakeClock();
      const running = ws.runWith({ clock }, "--json");
      await racing.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
      // The renewal, a third of the 2 s lease on, while the file waits.
      await clock.advance(700);
      const run = await running;
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
      await using ws = await Workspace.create({
        hosts: [swallowing.url],
        settings: "    timeout: 10\n",
      });
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
      await using ws = await Workspace.create({ hosts: [busy.url] });
      await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
      await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: future() });
      const clock = new FakeClock();
      const run = await clock.drive(ws.runWith({ clock }, "--json", "--lock-timeout", "0.5"));
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
    const answerLost = gate();
    const racing = await startFaultServer(OPENSEARCH_URL, (r) => {
      if (renewal(r)) {
        renewals++;
        if (renewals === 1) return { resetAfter: answerLost.promise };
        return renewals === 2 ? "forward" : "hang";
      }
      return r.path.includes("-slow") ? { after: fileGate.promise } : "forward";
    });
    try {
      await using ws = await slowFileWorkspace(racing.url, "", 4);
      const clock = new FakeClock();
      const running = ws.runWith({ clock }, "--json");
      await racing.waitFor((r) => r.path.startsWith(`/${ws.id}-slow/_doc/1`));
      // Lease 4 s: renewal 1 (at 1.33 s) loses its answer 1 s later, so renewal 2 (a twelfth
      // of the lease after that) reads a document written more than a quarter lease before;
      // counting from that read would run past the document's expiry.
      await clock.advance(4_000 / 3);
      await racing.waitForUpstream(renewal);
      await clock.advance(1_000);
      // The client sends renewal 1 again on a fresh connection: that is renewal 2.
      answerLost.open();
      await clock.settled();
      // Every later renewal hangs: the lock is given up at its deadline, which cancels the timers.
      while (clock.due.length > 0) clock.next();
      const stopped = clock.now();
      const run = await running;
      assert.equal(run.code, 1, run.out);
      assert.match(run.report!.error!.message, /could not renew the lock/);
      assert.ok(renewals >= 2, `renewals: ${renewals}`);
      // The document renewal 1 wrote is still there: the runner gave up before it expired.
      const lock = await lockDoc(ws);
      assert.ok(stopped < Date.parse(lock.body._source.expires_at), JSON.stringify(lock.body));
      assert.deepEqual(await records(ws), []);
    } finally {
      fileGate.open();
      answerLost.open();
      await racing.close();
    }
  });
});

describe("the search lock's lease, in virtual time", () => {
  const transports: Transport[] = [];
  after(() => {
    for (const t of transports.splice(0)) t.close();
  });

  const identity: RunnerIdentity = { host: "test", pid: process.pid };

  /**
   * A lock of the workspace's connection on `clock`, reached through `host` (the node by
   * default), its requests recorded in `sent` when given.
   */
  async function lockOf(
    ws: Workspace,
    clock: FakeClock,
    options: { leaseMs: number; host?: string; sent?: Sent[]; optionNames?: OptionNames },
  ): Promise<SearchLock> {
    const connection = ws.connection(options.host);
    const transport = await recording(options.sent ?? [])(connection);
    transports.push(transport);
    const client = new SearchClient(connection, transport);
    return new SearchLock(
      client,
      ws.recordsIndex,
      ws.id,
      identity,
      options.leaseMs,
      clock,
      options.optionNames,
    );
  }

  /** A workspace whose records index exists, as the runner makes it before taking the lock. */
  async function workspace(): Promise<Workspace> {
    const ws = await Workspace.create();
    await os("PUT", `/${ws.recordsIndex}`, { settings: { number_of_replicas: 0 } });
    return ws;
  }

  /** Resolves once `lock` is lost. */
  const lost = (lock: SearchLock) =>
    new Promise<void>((resolve) => lock.lost.addEventListener("abort", () => resolve()));

  const reasonOf = (lock: SearchLock) => (lock.lost.reason as MigrationFailure).detail.reason;

  it("waits up to its timeout, one look per poll, then fails naming the holder", async () => {
    await using ws = await workspace();
    const expires = future();
    await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: expires });
    const clock = new FakeClock();
    const start = clock.now();
    const sent: Sent[] = [];
    const lock = await lockOf(ws, clock, { leaseMs: 120_000, sent });
    const told: LockHolder[] = [];
    await assert.rejects(clock.drive(lock.acquire(10_000, (h) => told.push(h))), (e) => {
      assert.ok(isMigrationError(e, "lock"), String(e));
      assert.equal(
        e.message,
        `connection "${ws.id}" is locked by elsewhere pid 1 (owner other), expiring ${expires}; ` +
          `waited 10 s (--lock-timeout). If that runner is gone, run "unlock --force".`,
      );
      return true;
    });
    assert.equal(clock.now() - start, 10_000);
    // One look at once, then one each poll up to the timeout; the holder is told once.
    const looks = sent.filter((s) => s.method === "PUT" && s.path.includes("/_create/lock-"));
    assert.equal(looks.length, 10_000 / LOCK_POLL_MS + 1);
    assert.deepEqual(told.map((h) => h.host), ["elsewhere"]);
    assert.equal((await lockDoc(ws)).body._source.host, "elsewhere");
    assert.equal(clock.due.length, 0, "no timer left behind");
  });

  it("names the lock wait and the unlock as migrate() spells them, when migrate() runs it", async () => {
    await using ws = await workspace();
    await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: future() });
    const clock = new FakeClock();
    const lock = await lockOf(ws, clock, { leaseMs: 120_000, optionNames: MIGRATE_API_NAMES });
    await assert.rejects(clock.drive(lock.acquire(1_000, () => {})), (e) => {
      assert.ok(isMigrationError(e, "lock"), String(e));
      assert.match(
        e.message,
        /waited 1 s \(lockTimeoutMs\)\. If that runner is gone, run migrate\(\{ command: "unlock", force: true \}\)\.$/,
      );
      return true;
    });
  });

  it("takes over a lock whose lease ran out; its holder, waking up, is stopped by its next renewal", async () => {
    await using ws = await workspace();
    const leaseMs = 10_000;
    const start = Date.now();
    // The first runner's time stands still: a process paused (or gone) that renews nothing.
    const paused = new FakeClock(start);
    const first = await lockOf(ws, paused, { leaseMs });
    await first.acquire(0);
    const held = (await lockDoc(ws)).body._source;
    assert.equal(held.expires_at, new Date(start + leaseMs).toISOString());

    const clock = new FakeClock(start);
    const second = await lockOf(ws, clock, { leaseMs });
    const told: LockHolder[] = [];
    await clock.drive(second.acquire(2 * leaseMs, (h) => told.push(h)));
    // At the first look after the lease ran out (it runs out after its last millisecond).
    assert.equal(clock.now() - start, leaseMs + LOCK_POLL_MS);
    assert.deepEqual(told.map((h) => h.owner), [held.owner]);
    const taken = (await lockDoc(ws)).body._source;
    assert.notEqual(taken.owner, held.owner);

    // The first runner resumes: its renewal, a third of the lease on, finds the lock taken over.
    await paused.advance(leaseMs / 3);
    await paused.settled();
    assert.ok(first.lost.aborted, "the first runner knows it lost the lock");
    assert.equal(
      reasonOf(first),
      `lost the lock: it was taken over by test pid ${process.pid} (owner ${taken.owner}), ` +
        `expiring ${taken.expires_at}`,
    );
    assert.equal(paused.due.length, 0, "it renews no more");
    assert.equal((await lockDoc(ws)).body._source.owner, taken.owner, "the new holder keeps it");
    await first.release();
    assert.equal((await lockDoc(ws)).body._source.owner, taken.owner, "release leaves it alone");
    assert.equal(second.lost.aborted, false);
    await second.release();
    assert.equal((await lockDoc(ws)).status, 404);
  });

  it("keeps the lock through renewals: a second runner waits its whole timeout, thrice the lease", async () => {
    await using ws = await workspace();
    const leaseMs = 12_000;
    const clock = new FakeClock();
    const start = clock.now();
    const sent: Sent[] = [];
    const first = await lockOf(ws, clock, { leaseMs, sent });
    await first.acquire(0);
    const second = await lockOf(ws, clock, { leaseMs });
    await assert.rejects(
      clock.drive(second.acquire(3 * leaseMs)),
      (e) => isMigrationError(e, "lock") && /waited 36 s \(--lock-timeout\)/.test(e.message),
    );
    assert.equal(first.lost.aborted, false);
    // One renewal every third of the lease, the last at the second runner's last look.
    assert.equal(sent.filter(renewal).length, 9);
    const doc = (await lockDoc(ws)).body._source;
    assert.equal(doc.expires_at, new Date(start + 3 * leaseMs + leaseMs).toISOString());
    await first.release();
    assert.equal((await lockDoc(ws)).status, 404);
    assert.equal(clock.due.length, 0, "release stops the renewals");
  });

  it("gives the lock up at three quarters of its lease when every renewal fails, before it runs out", async () => {
    // Renewals answer 503; everything else goes to the node.
    const failing = await startFaultServer(
      OPENSEARCH_URL,
      (r) => renewal(r) ? { status: 503, body: SHARDS_NOT_STARTED } : "forward",
    );
    try {
      await using ws = await workspace();
      const leaseMs = 12_000;
      const clock = new FakeClock();
      const start = clock.now();
      const lock = await lockOf(ws, clock, { leaseMs, host: failing.url });
      await lock.acquire(0);
      // Nothing runs in the foreground: the clock moves whenever no renewal is in flight.
      await clock.drive(lost(lock), { sleeps: 0 });
      assert.equal(clock.now() - start, 9_000);
      assert.equal(
        reasonOf(lock),
        "could not renew the lock within 9 s (3/4 of migrations.lock_lease); another runner " +
          "may take it over",
      );
      // A third of the lease on, then every twelfth until the deadline: at 4, 5, 6, 7 and 8 s.
      assert.equal(failing.received.filter(renewal).length, 5);
      const doc = (await lockDoc(ws)).body._source;
      assert.ok(clock.now() < Date.parse(doc.expires_at), "stopped before its lease ran out");
      assert.equal(clock.due.length, 0, "it renews no more");
      await lock.release();
    } finally {
      await failing.close();
    }
  });

  it("ends the wait at once on Ctrl-C, leaving the other runner's lock alone", async () => {
    await using ws = await workspace();
    await ws.plantLock({ host: "elsewhere", pid: 1, expires_at: future() });
    const clock = new FakeClock();
    const start = clock.now();
    const lock = await lockOf(ws, clock, { leaseMs: 120_000 });
    const controller = new AbortController();
    const waiting = lock.acquire(600_000, undefined, controller.signal);
    // Between two looks: the runner waits on the clock.
    await clock.whenSleeping();
    controller.abort();
    await assert.rejects(waiting, (e) => {
      assert.ok(isMigrationError(e, "interrupted"), String(e));
      assert.equal(e.message, "interrupted while waiting for the lock");
      return true;
    });
    assert.equal(clock.now(), start, "no time passed");
    assert.equal(clock.due.length, 0, "the wait is gone");
    assert.equal((await lockDoc(ws)).body._source.host, "elsewhere");
  });
});
