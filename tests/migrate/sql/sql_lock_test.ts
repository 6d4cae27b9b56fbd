import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { migrate, MigrationRunError } from "../../../migrate.ts";
import { startCli } from "../cli_process.ts";
import { type Kind, type SqlWorkspace, workspaces } from "./databases.ts";

/**
 * A gate a migration file waits on, held by the test's own connection: the file ends only when
 * the test opens it, so the runner holds its lock exactly as long as the test wants.
 */
function gate(kind: Exclude<Kind, "sqlite">, ws: SqlWorkspace, id: number) {
  return kind === "postgres"
    ? {
      file: `SELECT pg_advisory_xact_lock(${id});\n`,
      close: () => ws.query(`SELECT pg_advisory_lock(${id})`),
      open: () => ws.query(`SELECT pg_advisory_unlock(${id})`),
      // The runner's file waits on the gate: its lock request is not granted yet.
      reached: async () =>
        Number(
          (await ws.query(
            `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ${id}`,
          ))[0].n,
        ) > 0,
    }
    : {
      file: `SELECT GET_LOCK('gate${id}', 600);\n`,
      close: () => ws.query(`SELECT GET_LOCK('gate${id}', 0)`),
      open: () => ws.query(`SELECT RELEASE_LOCK('gate${id}')`),
      reached: async () =>
        Number(
          (await ws.query(
            `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(''gate${id}'', 600)%'`,
          ))[0].n,
        ) > 0,
    };
}

/** Polls a condition of the database (there is no event to wait on) until it holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!await condition()) await new Promise((r) => setTimeout(r, 20));
}

for (const kind of ["postgres", "mysql"] as const) {
  describe(`SQL lock on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("a second runner exits 3 at --lock-timeout 0 while the first holds the lock, naming it", async () => {
      const ws = await workspace();
      const held = gate(kind, ws, 4242);
      await held.close();
      await ws.file("001.sql", held.file);
      const first = ws.run();
      await until(held.reached);
      const second = await ws.run("--lock-timeout", "0");
      assert.equal(second.code, 3, second.err);
      assert.match(
        second.err,
        kind === "postgres" ? /locked by "thaw migrate test \d+"/ : /locked by connection \d+/,
      );
      assert.match(second.err, /waited 0 s \(--lock-timeout\)/);
      // migrate() names its own option.
      const api = await migrate({
        config: ws.configDir,
        migrations: ws.root,
        lockTimeoutMs: 0,
        env: { THAW_TEST_DB_PASSWORD: ws.password },
      }).then(() => undefined, (error: unknown) => error);
      assert.ok(api instanceof MigrationRunError && api.kind === "lock", String(api));
      assert.match(api.message, /waited 0 s \(lockTimeoutMs\)/);
      await held.open();
      assert.equal((await first).code, 0);
      assert.equal(await ws.count("framework_migrations"), 1);
    });

    it("stops waiting for the lock on SIGTERM", async () => {
      const ws = await workspace();
      const held = gate(kind, ws, 4343);
      await held.close();
      await ws.file("001.sql", held.file);
      const first = ws.run();
      await until(held.reached);
      const runner = startCli(
        ["-c", ws.configDir, "--sqlPath", ws.root, "--lock-timeout", "600"],
        { THAW_TEST_DB_PASSWORD: ws.password },
      );
      await runner.printed(/waiting for the lock/);
      runner.signal("SIGTERM");
      assert.equal(await runner.closed, 1, runner.stderr());
      assert.match(runner.stderr(), /interrupted while waiting for the lock/);
      await held.open();
      assert.equal((await first).code, 0);
      assert.equal(await ws.count("framework_migrations"), 1);
    });
  });
}
