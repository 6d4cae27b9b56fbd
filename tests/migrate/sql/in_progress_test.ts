// A runner killed in the middle of a file on MariaDB, where nothing rolls a file back: the file is
// marked in progress, runs are refused until repair drops the mark.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startCli } from "../cli_process.ts";
import { type SqlWorkspace, workspaces } from "./databases.ts";

/**
 * A MariaDB named lock taken by the test, named `prefix` and a suffix of its own: a name is the
 * whole server's, which another runtime's run of this file may be using at once.
 */
async function heldGate(ws: SqlWorkspace, prefix: string): Promise<string> {
  const gate = `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
  const [{ held }] = await ws.query(`SELECT GET_LOCK('${gate}', 0) AS held`);
  assert.equal(Number(held), 1, `the test could not take ${gate}`);
  return gate;
}

/**
 * Runs the CLI with `args` until its file waits on the test's `gate` (a MariaDB named lock the test
 * holds), polled in the process list since there is no event to wait on, then kills it with
 * SIGKILL and releases the gate. A runner that ends before reaching the gate fails the test.
 */
async function killedAtGate(ws: SqlWorkspace, gate: string, args: string[]): Promise<void> {
  const runner = startCli(
    ["-c", ws.configDir, "--sqlPath", ws.root, ...args],
    { THAW_TEST_DB_PASSWORD: ws.password },
  );
  let ended = false;
  void runner.closed.then(() => ended = true);
  const waiting = async () =>
    Number(
      (await ws.query(
        `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
          WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND INFO LIKE '%${gate}'', 600)%'`,
      ))[0].n,
    ) > 0;
  while (!await waiting()) {
    assert.equal(ended, false, `the runner ended before it reached ${gate}:\n${runner.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  runner.signal("SIGKILL");
  await runner.closed;
  await ws.query(`SELECT RELEASE_LOCK('${gate}')`);
}

describe("a runner killed in the middle of an undo file on mysql", () => {
  const workspace = workspaces("mysql");

  it("leaves the version in progress: status shows it, every run but repair is refused, naming it", async () => {
    const ws = await workspace();
    await ws.file("V1__a.sql", "create table A (V int);\n");
    await ws.file("V2__b.sql", "create table B (V int);\n");
    await ws.ok();
    // The undo drops B, then waits on a gate the test holds: half of it is committed.
    const gate = await heldGate(ws, "gate81");
    await ws.file(
      "U2__b.sql",
      `drop table B;\nSELECT GET_LOCK('${gate}', 600);\ncreate table AFTER_GATE (V int);\n`,
    );
    await killedAtGate(ws, gate, ["undo"]);
    assert.equal(await ws.count("B"), undefined, "the undo's first statement is committed");

    const status = await ws.ok("status", "--json");
    assert.deepEqual(
      status.report!.connections[0].files.map((f) => `${f.path}:${f.inProgress ?? false}`),
      ["V1__a.sql:false", "V2__b.sql:true"],
    );
    assert.match((await ws.ok("status")).out, /in progress\s+V2__b\.sql/);
    const invalid = await ws.run("validate", "--json");
    assert.equal(invalid.code, 1, invalid.out);
    assert.equal(invalid.report!.error!.file, "V2__b.sql");
    for (const command of [[], ["undo"]]) {
      const refused = await ws.run(...command, "--json");
      assert.equal(refused.code, 1, refused.out);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.equal(refused.report!.error!.file, "V2__b.sql");
      assert.match(refused.report!.error!.message, /never ended.*U2__b\.sql.*"repair"/);
    }
    // Fixed by hand (B made again), then repaired: the mark is dropped, V2 is applied as recorded.
    await ws.query("create table B (V int)");
    // A give-up: the killed runner's session holds the run's lock until the server ends it.
    await ws.ok("repair", "--lock-timeout", "120");
    // That session has ended: the rest of the file, run on by it or not, is undone by hand too.
    await ws.query("drop table if exists AFTER_GATE");
    const after = await ws.ok("status", "--json");
    assert.deepEqual(
      after.report!.connections[0].files.map((f) =>
        `${f.path}:${f.action}:${f.inProgress ?? false}`
      ),
      ["V1__a.sql:skip:false", "V2__b.sql:skip:false"],
    );
    await ws.ok("undo");
    assert.equal(await ws.count("B"), undefined);
  });

  it("leaves a forward file in progress too, not pending: no run starts it again over what it committed", async () => {
    const ws = await workspace();
    await ws.file("V1__a.sql", "create table A (V int);\n");
    const gate = await heldGate(ws, "gate82");
    await ws.file(
      "V2__b.sql",
      `create table B (V int);\nSELECT GET_LOCK('${gate}', 600);\ncreate table C (V int);\n`,
    );
    await killedAtGate(ws, gate, []);
    const status = await ws.ok("status", "--json");
    assert.deepEqual(
      status.report!.connections[0].files.map((f) =>
        `${f.path}:${f.action}:${f.inProgress ?? false}`
      ),
      ["V1__a.sql:skip:false", "V2__b.sql:apply:true"],
    );
    // A give-up: the killed runner's session holds the run's lock until the server ends it.
    const refused = await ws.run("--json", "--lock-timeout", "120");
    assert.equal(refused.code, 1, refused.out);
    assert.equal(refused.report!.error!.file, "V2__b.sql");
    assert.equal(await ws.count("framework_migrations"), 2, "V1's record, and V2's mark");
  });
});
