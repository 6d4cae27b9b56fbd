// Flyway's undo on a search connection, through the command line against the real node: U files
// (JSON requests, code) beside their V files, the plan checked whole before anything is sent,
// undone versions kept as history and applied again, the undo callbacks around them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OPENSEARCH_URL, os, type Run, type Sent, Workspace, writes } from "./cluster.ts";
import { type Fault, type Received, startFaultServer } from "./fault_server.ts";
import { hostname } from "node:os";
import process from "node:process";
import { processGone } from "../../../src/migrate/local_process.ts";
import type { RunReport } from "../../../src/migrate/run_report.ts";
import { startCli } from "../cli_process.ts";
import { runCaptured } from "../run_cli.ts";
import { FakeClock } from "../../fake_clock.ts";
import { deferred } from "../../deferred.ts";

// What `status` says of each file: `path:action`.
async function actions(ws: Workspace): Promise<string[]> {
  const status = await ws.ok("status", "--json");
  return status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`);
}

async function records(ws: Workspace): Promise<Map<string, string>> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { exists: { field: "migration_path" } },
  });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  const hits = found.body.hits.hits as {
    _source: { migration_path: string; content_hash: string };
  }[];
  return new Map(
    hits.map((h) => [h._source.migration_path, h._source.content_hash] as const).sort(),
  );
}

async function exists(path: string): Promise<boolean> {
  return (await os("HEAD", path)).status === 200;
}

// The writes a run sent, outside the records index (records, lock): what it did to the cluster.
function changes(ws: Workspace, sent: readonly Sent[]): string[] {
  return writes(sent).filter((s) => !s.path.startsWith(`/${ws.recordsIndex}`)).map((s) =>
    `${s.method} ${s.path}`
  );
}

// V1 creates an index; V2 a second index, undone by deleting it; V3 a template, undone by
// deleting it; V4 (code) a document, undone by its `down`. The callbacks log every undo event.
async function fourVersions(ws: Workspace): Promise<void> {
  const log = `${ws.id}-log`;
  await ws.file("V1__a.json", { method: "PUT", path: `/${ws.id}-a`, body: NO_REPLICAS });
  await ws.file("V2__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
  await ws.file("U2__b.json", { method: "DELETE", path: `/${ws.id}-b` });
  await ws.file("V3__tpl.json", {
    method: "PUT",
    path: `/_index_template/${ws.id}-tpl`,
    body: { index_patterns: [`${ws.id}-tpl-*`], template: NO_REPLICAS },
  });
  await ws.file("U3__tpl.json", { method: "DELETE", path: `/_index_template/${ws.id}-tpl` });
  await ws.file(
    "V4__doc.js",
    `export default async (ctx) => {\n` +
      `  await ctx.request("PUT", "/${ws.id}-a/_doc/one?refresh=true", { v: 1 });\n};\n` +
      `export async function down(ctx) {\n` +
      `  await ctx.request("DELETE", "/${ws.id}-a/_doc/one?refresh=true");\n}\n`,
  );
  for (const event of ["beforeUndo", "beforeEachUndo", "afterEachUndo", "afterUndo"]) {
    await ws.file(`${event}.json`, {
      method: "POST",
      path: `/${log}/_doc?refresh=true`,
      body: { event },
    });
  }
}

const NO_REPLICAS = { settings: { number_of_replicas: 0 } };

async function events(ws: Workspace): Promise<string[]> {
  const found = await os("POST", `/${ws.id}-log/_search`, { size: 100 });
  return (found.body.hits?.hits ?? []).map((h: { _source: { event: string } }) => h._source.event)
    .sort();
}

describe("undo on a search connection", () => {
  it("undoes above a target newest first, keeps history, and migrate applies them again", async () => {
    await using ws = await Workspace.create();
    try {
      await fourVersions(ws);
      await ws.ok();
      const straight = await records(ws);
      assert.deepEqual([...straight.keys()], [
        "V1__a.json",
        "V2__b.json",
        "V3__tpl.json",
        "V4__doc.js",
      ]);
      assert.equal(await exists(`/${ws.id}-a/_doc/one`), true);

      // A dry run plans the undo and sends nothing to the cluster.
      const dry = await ws.ok("undo", "--target", "1", "--dry-run");
      assert.deepEqual(changes(ws, dry.sent), []);
      assert.match(dry.out, /V4__doc\.js/);

      const undone = await ws.ok("undo", "--target", "1", "--json");
      assert.deepEqual(
        undone.report!.connections[0].files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`),
        [
          "V1__a.json:skip:",
          "V2__b.json:undo:undone",
          "V3__tpl.json:undo:undone",
          "V4__doc.js:undo:undone",
        ],
      );
      // Each undo row shows what the undo sends: its undo file's request (a down, none).
      assert.deepEqual(
        undone.report!.connections[0].files.map((f) => f.request ?? "-"),
        [
          `PUT /${ws.id}-a`,
          `DELETE /${ws.id}-b`,
          `DELETE /_index_template/${ws.id}-tpl`,
          "-",
        ],
      );
      // Newest first, each between its callbacks.
      assert.deepEqual(changes(ws, undone.sent).filter((c) => !c.includes("-log/")), [
        `DELETE /${ws.id}-a/_doc/one?refresh=true`,
        `DELETE /_index_template/${ws.id}-tpl`,
        `DELETE /${ws.id}-b`,
      ]);
      assert.deepEqual(await events(ws), [
        "afterEachUndo",
        "afterEachUndo",
        "afterEachUndo",
        "afterUndo",
        "beforeEachUndo",
        "beforeEachUndo",
        "beforeEachUndo",
        "beforeUndo",
      ]);
      assert.equal(await exists(`/${ws.id}-b`), false);
      assert.equal(await exists(`/_index_template/${ws.id}-tpl`), false);
      assert.equal(await exists(`/${ws.id}-a/_doc/one`), false);
      // The versions' records stay, beside the undo records (a down's under its V made a U).
      assert.deepEqual([...(await records(ws)).keys()], [
        "U2__b.json",
        "U3__tpl.json",
        "U4__doc.js",
        "V1__a.json",
        "V2__b.json",
        "V3__tpl.json",
        "V4__doc.js",
      ]);
      assert.deepEqual(await actions(ws), [
        "V1__a.json:skip",
        "V2__b.json:undone",
        "V3__tpl.json:undone",
        "V4__doc.js:undone",
      ]);

      // Applied again: the same records as a straight migrate, the undo records gone.
      const again = await ws.ok("--json");
      assert.deepEqual(
        again.report!.connections[0].files.filter((f) => f.action === "apply").map((f) => f.path),
        ["V2__b.json", "V3__tpl.json", "V4__doc.js"],
      );
      assert.deepEqual(await records(ws), straight);
      assert.equal(await exists(`/${ws.id}-b`), true);
      assert.equal(await exists(`/${ws.id}-a/_doc/one`), true);

      // Without a target, the newest version alone.
      const one = await ws.ok("undo", "--json");
      assert.deepEqual(
        one.report!.connections[0].files.filter((f) => f.action === "undo").map((f) => f.path),
        ["V4__doc.js"],
      );
      // Down to 0 needs V1's undo, which there is none of: refused before anything is sent.
      const refused = await ws.run("undo", "--target", "0");
      assert.equal(refused.code, 1, refused.out + refused.err);
      assert.match(refused.err, /V1__a\.json/);
      assert.deepEqual(changes(ws, refused.sent), []);
      assert.equal(await exists(`/${ws.id}-b`), true);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-log`, `${ws.id}-a`, `${ws.id}-b`]) {
        await os("DELETE", `/${index}`);
      }
      await os("DELETE", `/_index_template/${ws.id}-tpl`);
    }
  });

  it("takes a DELETE that finds nothing as undone; any other failure is not undone", async () => {
    await using ws = await Workspace.create();
    try {
      await ws.file("V1__a.json", { method: "PUT", path: `/${ws.id}-a`, body: NO_REPLICAS });
      await ws.file("U1__a.json", { method: "POST", path: `/${ws.id}-gone/_close` });
      await ws.file("V2__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
      await ws.file("U2__b.json", { method: "DELETE", path: `/${ws.id}-b` });
      await ws.ok();
      // Deleted already, as by a runner killed before it recorded its undo.
      await os("DELETE", `/${ws.id}-b`);
      const undone = await ws.ok("undo", "--json");
      const b = undone.report!.connections[0].files.find((f) => f.path === "V2__b.json")!;
      assert.equal(b.result, "undone");
      assert.match(b.notice ?? "", /found nothing to delete \(404\): taken as undone/);
      const failed = await ws.run("undo", "--json");
      assert.equal(failed.code, 1, failed.out + failed.err);
      const a = failed.report!.connections[0].files.find((f) => f.path === "V1__a.json")!;
      assert.equal(a.result, "failed");
      assert.deepEqual(await actions(ws), ["V1__a.json:skip", "V2__b.json:undone"]);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-a`, `${ws.id}-b`]) {
        await os("DELETE", `/${index}`);
      }
    }
  });

  it("fails a DELETE that finds nothing where its V file created something else", async () => {
    await using ws = await Workspace.create();
    try {
      await ws.file("V1__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
      // A typo: not the index V1 made.
      await ws.file("U1__b.json", { method: "DELETE", path: `/${ws.id}-bb` });
      await ws.ok();
      const run = await ws.run("undo", "--json");
      assert.equal(run.code, 1, run.out + run.err);
      assert.equal(run.report!.connections[0].files[0].result, "failed");
      assert.match(run.out, /index_not_found_exception/);
      assert.match(run.out, new RegExp(`not the path V1__b\\.json sent \\(/${ws.id}-b\\)`));
      assert.deepEqual(await actions(ws), ["V1__b.json:skip"]);
      assert.equal(await exists(`/${ws.id}-b`), true);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-b`]) await os("DELETE", `/${index}`);
    }
  });

  it("moves a reindex back by its undo file, and migrate moves it forward again", async () => {
    await using ws = await Workspace.create();
    const [users, usersV2, people] = [`${ws.id}-users`, `${ws.id}-users-v2`, `${ws.id}-people`];
    const writeIndex = async () => {
      const found = await os("GET", `/_alias/${people}`);
      return Object.entries(found.body as Record<string, { aliases: Record<string, unknown> }>)
        .map(([index]) => index);
    };
    try {
      await ws.file("V1__users.json", {
        method: "PUT",
        path: `/${users}`,
        body: { ...NO_REPLICAS, aliases: { [people]: { is_write_index: true } } },
      });
      await ws.file("V2__people-reindex.json", {
        alias: people,
        index: usersV2,
        settings: { number_of_replicas: 0 },
        mappings: { properties: { email: { type: "keyword" } } },
      });
      await ws.file("U2__people-reindex.json", { alias: people, index: users });
      await ws.ok("--target", "1");
      await os("PUT", `/${people}/_doc/kept?refresh=true`, { email: "a@x" });
      await os("PUT", `/${people}/_doc/gone?refresh=true`, { email: "b@x" });
      await ws.ok();
      assert.deepEqual(await writeIndex(), [usersV2]);
      // Written through the alias after the reindex: in the previous index after the undo.
      await os("PUT", `/${people}/_doc/late?refresh=true`, { email: "c@x" });
      await os("PUT", `/${people}/_doc/kept?refresh=true`, { email: "a2@x" });
      await os("DELETE", `/${people}/_doc/gone?refresh=true`);

      const undone = await ws.ok("undo", "--json");
      const file = undone.report!.connections[0].files.find((f) =>
        f.path === "V2__people-reindex.json"
      )!;
      assert.equal(file.result, "undone");
      assert.equal(file.reindex?.index, users);
      assert.deepEqual(await writeIndex(), [users]);
      assert.equal(await exists(`/${usersV2}`), false);
      await os("POST", `/${users}/_refresh`);
      const docs = await os("POST", `/${users}/_search`, { size: 10, sort: ["_id"] });
      assert.deepEqual(
        docs.body.hits.hits.map((h: { _id: string; _source: { email: string } }) =>
          `${h._id}:${h._source.email}`
        ),
        ["kept:a2@x", "late:c@x"],
      );
      assert.deepEqual(await actions(ws), [
        "V1__users.json:skip",
        "V2__people-reindex.json:undone",
      ]);

      await ws.ok();
      assert.deepEqual(await writeIndex(), [usersV2]);
      assert.deepEqual([...(await records(ws)).keys()], [
        "V1__users.json",
        "V2__people-reindex.json",
      ]);
    } finally {
      for (const index of [ws.recordsIndex, users, usersV2]) await os("DELETE", `/${index}`);
    }
  });

  it("takes a 404 for undone only when the cluster says it: a proxy's 404 is a failure", async () => {
    let target = "";
    // A proxy in front of the node answers the undo's DELETE itself, as one that does not route
    // the path would: the index is never deleted.
    const answers = [
      { status: 404, text: "<html><body><h1>404 Not Found</h1>nginx</body></html>" },
      { status: 404, body: { message: "Not Found" } },
    ];
    let answer = answers[0];
    const proxy = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.method === "DELETE" && r.path === target ? answer : "forward",
    );
    await using ws = await Workspace.create({ hosts: [proxy.url] });
    target = `/${ws.id}-b`;
    try {
      await ws.file("V1__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
      await ws.file("U1__b.json", { method: "DELETE", path: `/${ws.id}-b` });
      await ws.ok();
      for (answer of answers) {
        const run = await ws.run("undo", "--json");
        assert.equal(run.code, 1, run.out + run.err);
        const b = run.report!.connections[0].files.find((f) => f.path === "V1__b.json")!;
        assert.equal(b.result, "failed");
        assert.equal(await exists(`/${ws.id}-b`), true);
        assert.deepEqual(await actions(ws), ["V1__b.json:skip"]);
      }
    } finally {
      await proxy.close();
      for (const index of [ws.recordsIndex, `${ws.id}-b`]) await os("DELETE", `/${index}`);
    }
  });

  it("says what a lost lock left of an undo: not recorded undone, sent again by the next undo", async () => {
    let held = "";
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // Holds the undo's DELETE until the test opens the gate: the lock is lost with it in flight.
    const slow = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.method === "DELETE" && r.path === held ? { after: gate } : "forward",
    );
    await using ws = await Workspace.create({
      hosts: [slow.url],
      migrations: "      lock_lease: 2\n",
    });
    held = `/${ws.id}-b`;
    try {
      await ws.file("V1__b.json", { method: "PUT", path: held, body: NO_REPLICAS });
      await ws.file("U1__b.json", { method: "DELETE", path: held });
      await ws.ok();
      const clock = new FakeClock();
      const first = ws.runWith({ clock }, "undo", "--json");
      await slow.waitFor((r) => r.method === "DELETE" && r.path === held);
      // As "unlock" by hand, or a runner that took an expired lock over, would do.
      assert.equal((await os("DELETE", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 200);
      await clock.advance(700);
      const run = await first;
      assert.equal(run.code, 1, run.out);
      const message = run.report!.error!.message;
      assert.match(message, /lost the lock/);
      // Not "applies it again": the next migrate sends nothing for a version still applied.
      assert.doesNotMatch(message, /applies it again/);
      assert.match(message, /U1__b\.json may or may not have been sent/);
      assert.match(message, /not recorded undone \(the next undo sends it again\)/);
      open();
      assert.deepEqual(await actions(ws), ["V1__b.json:skip"]);
    } finally {
      open();
      await slow.close();
      for (const index of [ws.recordsIndex, `${ws.id}-b`]) await os("DELETE", `/${index}`);
    }
  });

  it("two runners racing on undo undo each version once; one that waited undoes no more than it planned", async () => {
    let held = "";
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow = await startFaultServer(
      OPENSEARCH_URL,
      (r) => r.method === "DELETE" && r.path === held ? { after: gate } : "forward",
    );
    await using ws = await Workspace.create({ hosts: [slow.url] });
    const index = (v: number) => `${ws.id}-v${v}`;
    try {
      await ws.file("V1__a.json", { method: "PUT", path: `/${index(1)}`, body: NO_REPLICAS });
      for (const v of [2, 3]) {
        await ws.file(`V${v}__x.json`, { method: "PUT", path: `/${index(v)}`, body: NO_REPLICAS });
        await ws.file(`U${v}__x.json`, { method: "DELETE", path: `/${index(v)}` });
      }
      await ws.ok();
      const deletes = (runs: Run[]) =>
        runs.flatMap((r) => r.sent).filter((s) => s.method === "DELETE" && s.path.includes("-v"))
          .map((s) => s.path).sort();
      const undone = (runs: Run[]) =>
        runs.flatMap((r) =>
          r.report!.connections[0].files.filter((f) => f.result === "undone").map((f) => f.path)
        ).sort();

      // A plain undo each: the second plans V3 while the first holds the lock with U3 in flight.
      held = `/${index(3)}`;
      const creates = () =>
        slow.received.filter((r) => r.path.includes(`/_create/lock-${ws.id}`)).length;
      const before = creates();
      const first = ws.run("undo", "--json");
      await slow.waitFor((r) => r.method === "DELETE" && r.path === held);
      const second = ws.run("undo", "--json");
      // Its _create refused: it waits for the lock, having planned V3.
      await slow.waitFor(() => creates() >= before + 2);
      open();
      const plain = [await first, await second];
      for (const run of plain) assert.equal(run.code, 0, run.out + run.err);
      assert.deepEqual(deletes(plain), [`/${index(3)}`]);
      assert.deepEqual(undone(plain), ["V3__x.json"]);
      assert.equal(await exists(`/${index(2)}`), true);

      await ws.ok();
      const raced = await Promise.all([
        ws.run("undo", "--target", "1", "--json"),
        ws.run("undo", "--target", "1", "--json"),
      ]);
      for (const run of raced) assert.equal(run.code, 0, run.out + run.err);
      assert.deepEqual(deletes(raced), [`/${index(2)}`, `/${index(3)}`]);
      assert.deepEqual(undone(raced), ["V2__x.json", "V3__x.json"]);
      assert.deepEqual(await actions(ws), [
        "V1__a.json:skip",
        "V2__x.json:undone",
        "V3__x.json:undone",
      ]);
    } finally {
      open();
      await slow.close();
      for (const i of [ws.recordsIndex, index(1), index(2), index(3)]) await os("DELETE", `/${i}`);
    }
  });

  it("a runner killed after an undo's DELETE, or before it drops an undo record: the next run finishes it once", async () => {
    // The first request the rule picks is held (`swallow`: the node applies it; `hang`: it never
    // reaches the node) and never answered: the runner is killed with it in flight.
    let pick: (r: Received) => Fault | undefined = () => undefined;
    let held: number | undefined;
    let fault: Fault = "forward";
    // Resolved by the rule: it runs after the server noted the request, which a waitFor on `held`
    // would never see held (the runner then ended alone, at its timeout, and was not killed).
    let taken = deferred();
    const host = await startFaultServer(OPENSEARCH_URL, (r) => {
      const f = held === undefined ? pick(r) : undefined;
      if (f !== undefined) {
        [held, fault] = [r.n, f];
        taken.resolve();
      }
      return r.n === held ? fault : "forward";
    });
    await using ws = await Workspace.create({ hosts: [host.url] });
    // A template: applied again, it is sent again, which a template is safe to be.
    const a = `/_index_template/${ws.id}-tpl`;
    const cli = ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root];
    const rerun = async (...args: string[]) => {
      const run = await runCaptured([...cli, "--json", "--lock-timeout", "0", ...args], {
        identity: { host: hostname(), pid: process.pid, processGone },
      });
      assert.equal(run.code, 0, run.out + run.err);
      return JSON.parse(run.out) as RunReport;
    };
    const killedAt = async (args: string[]) => {
      taken = deferred();
      const runner = startCli([...cli, ...args]);
      try {
        await Promise.race([taken.promise, runner.closed]);
        assert.notEqual(held, undefined, `ended first:\n${runner.stderr()}`);
        if (fault === "swallow") await host.waitForUpstream((r) => r.n === held);
        assert.equal(
          runner.child.exitCode,
          null,
          `ended before it was killed:\n${runner.stderr()}`,
        );
      } finally {
        // A runner left running by a failed assertion must not outlive the test.
        if (runner.child.exitCode === null && runner.child.signalCode === null) {
          runner.signal("SIGKILL");
        }
        await runner.closed;
      }
      held = undefined;
      pick = () => undefined;
    };
    const states = async () =>
      (await ws.ok("status", "--json")).report!.connections[0].files.map((f) => f.action);
    try {
      await ws.file("V1__a.json", {
        method: "PUT",
        path: a,
        body: { index_patterns: [`${ws.id}-tpl-*`], template: NO_REPLICAS },
      });
      await ws.file("U1__a.json", { method: "DELETE", path: a });
      await ws.ok();

      // Killed once the node deleted the template, before the undo was recorded: still applied.
      pick = (r) => r.method === "DELETE" && r.path === a ? "swallow" : undefined;
      await killedAt(["undo"]);
      assert.equal(await exists(a), false);
      assert.deepEqual(await states(), ["skip"]);
      const undone = await rerun("undo");
      assert.equal(undone.connections[0].files[0].result, "undone");
      assert.match(undone.connections[0].files[0].notice ?? "", /found nothing to delete/);
      assert.deepEqual(await states(), ["undone"]);

      // Applied again, killed before its undo record was dropped: undone still, sent again.
      pick = (r) =>
        r.method === "DELETE" && r.path.startsWith(`/${ws.recordsIndex}/_doc/`)
          ? "hang"
          : undefined;
      await killedAt([]);
      assert.equal(await exists(a), true);
      assert.deepEqual(await states(), ["undone"]);
      const again = await rerun();
      assert.deepEqual(again.connections[0].files.map((f) => `${f.action}:${f.result}`), [
        "apply:sent",
      ]);
      assert.deepEqual([...(await records(ws)).keys()], ["V1__a.json"]);
      assert.deepEqual(await states(), ["skip"]);
    } finally {
      await host.close();
      await os("DELETE", `/${ws.recordsIndex}`);
      await os("DELETE", a);
    }
  });

  it("a runner killed while it records a version applied again leaves it applied, not undone", async () => {
    // Once the index is created again, the second write of a record (not the lock's) never
    // reaches the node: the runner is killed between its two record writes, whichever they are.
    let index = "";
    let recordsIndex = "";
    let armed = false;
    let sentV = false;
    let writes = 0;
    let held: number | undefined;
    // Resolved by the rule, which runs after the server noted the request (see above).
    const taken = deferred();
    const host = await startFaultServer(OPENSEARCH_URL, (r) => {
      if (armed && r.method === "PUT" && r.path === index) sentV = true;
      const record = r.method !== "GET" && r.path.startsWith(`/${recordsIndex}/_doc/`) &&
        !r.path.includes("/lock-");
      if (sentV && record && ++writes === 2) {
        held = r.n;
        taken.resolve();
      }
      return r.n === held ? "hang" : "forward";
    });
    await using ws = await Workspace.create({ hosts: [host.url] });
    index = `/${ws.id}-a`;
    recordsIndex = ws.recordsIndex;
    const cli = ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root];
    try {
      // An envelope creating an index: sent twice, the second is refused as existing.
      await ws.file("V1__a.json", { method: "PUT", path: index, body: NO_REPLICAS });
      await ws.file("U1__a.json", { method: "DELETE", path: index });
      await ws.ok();
      await ws.ok("undo");
      armed = true;
      const runner = startCli(cli);
      try {
        await Promise.race([taken.promise, runner.closed]);
        assert.notEqual(held, undefined, `ended first:\n${runner.stderr()}`);
        assert.equal(
          runner.child.exitCode,
          null,
          `ended before it was killed:\n${runner.stderr()}`,
        );
      } finally {
        if (runner.child.exitCode === null && runner.child.signalCode === null) {
          runner.signal("SIGKILL");
        }
        await runner.closed;
      }
      assert.equal(await exists(index), true);
      // Its request was sent: the version is applied, and the next run sends it no more.
      const rerun = await runCaptured([...cli, "--json", "--lock-timeout", "0"], {
        identity: { host: hostname(), pid: process.pid, processGone },
      });
      assert.equal(rerun.code, 0, rerun.out + rerun.err);
      const report = JSON.parse(rerun.out) as RunReport;
      assert.deepEqual(report.connections[0].files.map((f) => f.action), ["skip"]);
      assert.deepEqual([...(await records(ws)).keys()], ["V1__a.json"]);
    } finally {
      await host.close();
      for (const i of [ws.recordsIndex, `${ws.id}-a`]) await os("DELETE", `/${i}`);
    }
  });

  it("a failing undo callback says what it left, and afterUndoError runs", async () => {
    await using ws = await Workspace.create({
      migrations: "      placeholders:\n        secret: hunter2-x\n",
    });
    const log = `${ws.id}-log`;
    try {
      await ws.file("V1__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
      await ws.file("U1__b.json", { method: "DELETE", path: `/${ws.id}-b` });
      // Refused by the cluster, its path quoting a placeholder's value.
      await ws.file("afterEachUndo.json", {
        method: "POST",
        path: `/${ws.id}-\${secret}/_close`,
      });
      await ws.file("afterUndoError.json", {
        method: "POST",
        path: `/${log}/_doc?refresh=true`,
        body: { event: "afterUndoError" },
      });
      await ws.ok();
      const run = await ws.run("undo", "--json");
      assert.equal(run.code, 1, run.out + run.err);
      const message = run.report!.error!.message;
      assert.match(message, /afterEachUndo/);
      assert.match(message, /V1__b\.json was undone, and is recorded so/);
      assert.doesNotMatch(run.out + run.err, /hunter2-x/);
      assert.equal(run.report!.connections[0].files[0].result, "undone");
      assert.equal(await exists(`/${ws.id}-b`), false);
      assert.deepEqual(await events(ws), ["afterUndoError"]);
      const status = await ws.ok("status", "--json");
      assert.deepEqual(status.report!.connections[0].files.map((f) => f.action), ["undone"]);
    } finally {
      for (const index of [ws.recordsIndex, log, `${ws.id}-b`]) await os("DELETE", `/${index}`);
    }
  });

  it("sends an undo file in code, recorded under its own path; its failure names it", async () => {
    await using ws = await Workspace.create();
    const a = `/${ws.id}-a`;
    try {
      await ws.file("V1__a.json", { method: "PUT", path: a, body: NO_REPLICAS });
      await ws.file("V2__doc.json", {
        method: "PUT",
        path: `${a}/_doc/one?refresh=true`,
        body: {},
      });
      await ws.file(
        "U2__doc.js",
        `export default async (ctx) => {\n` +
          `  await ctx.request("DELETE", "${a}/_doc/one?refresh=true");\n` +
          `  await ctx.request("DELETE", "${a}/_doc/one?refresh=true");\n};\n`,
      );
      await ws.ok();
      // Its second DELETE finds nothing: a code file's 404 is its own to handle, a failure here.
      const failed = await ws.run("undo", "--json");
      assert.equal(failed.code, 1, failed.out + failed.err);
      assert.equal(failed.report!.error!.file, "U2__doc.js");
      assert.equal(failed.report!.error!.line, 3, failed.report!.error!.message);
      assert.deepEqual([...(await records(ws)).keys()], ["V1__a.json", "V2__doc.json"]);
      await ws.file(
        "U2__doc.js",
        `export default async (ctx) => {\n` +
          `  await ctx.request("POST", "${a}/_delete_by_query?refresh=true", ` +
          `{ query: { ids: { values: ["one"] } } });\n};\n`,
      );
      const undone = await ws.ok("undo", "--json");
      assert.equal(undone.report!.connections[0].files[1].result, "undone");
      assert.equal(await exists(`${a}/_doc/one`), false);
      assert.deepEqual([...(await records(ws)).keys()], [
        "U2__doc.js",
        "V1__a.json",
        "V2__doc.json",
      ]);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-a`]) await os("DELETE", `/${index}`);
    }
  });

  it("refuses a reindex undo whose reindex deleted the index to go back into", async () => {
    await using ws = await Workspace.create();
    try {
      await ws.file("V1__users.json", {
        method: "PUT",
        path: `/${ws.id}-users`,
        body: { ...NO_REPLICAS, aliases: { [`${ws.id}-people`]: { is_write_index: true } } },
      });
      await ws.file("V2__people-reindex.json", {
        alias: `${ws.id}-people`,
        index: `${ws.id}-users-v2`,
        settings: { number_of_replicas: 0 },
        delete_source: true,
      });
      await ws.ok();
      await ws.file("U2__people-reindex.json", {
        alias: `${ws.id}-people`,
        index: `${ws.id}-users`,
      });
      for (const args of [["undo", "--dry-run"], ["undo"]]) {
        const run = await ws.run(...args);
        assert.equal(run.code, 1, run.out + run.err);
        assert.match(run.err, /U2__people-reindex\.json/);
        assert.match(run.err, /delete_source/);
        assert.deepEqual(changes(ws, run.sent), []);
      }
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-users`, `${ws.id}-users-v2`]) {
        await os("DELETE", `/${index}`);
      }
    }
  });
});
