import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { migrate, MigrationRunError } from "../../../migrate.ts";
import { startCli } from "../cli_process.ts";
import { type Kind, KINDS, type SqlWorkspace, workspaces } from "./databases.ts";

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
            `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ${id}
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          ))[0].n,
        ) > 0,
    }
    : mysqlGate(ws, `gate${id}_${crypto.randomUUID().slice(0, 8)}`);
}

// A name of MariaDB's GET_LOCK is the whole server's: another runtime's run of this file may be
// using the same server at once, so each gate's name is its own.
function mysqlGate(ws: SqlWorkspace, name: string) {
  return {
    file: `SELECT GET_LOCK('${name}', 600);\n`,
    close: async () => {
      const [{ held }] = await ws.query(`SELECT GET_LOCK('${name}', 0) AS held`);
      assert.equal(Number(held), 1, `the test could not take ${name}`);
    },
    open: () => ws.query(`SELECT RELEASE_LOCK('${name}')`),
    reached: async () =>
      Number(
        (await ws.query(
          `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(''${name}'', 600)%'`,
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
      // What to do when that runner is gone: end its session on the server.
      assert.match(
        second.err,
        kind === "postgres" ? /SELECT pg_terminate_backend\(\d+\)/ : /KILL \d+/,
      );
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

    if (kind === "postgres") {
      it("the lock holder an undo shows is named undo, not migrate", async () => {
        const ws = await workspace();
        await ws.file("V1__a.sql", "create table A (V int);\n");
        await ws.ok();
        const held = gate(kind, ws, 4243);
        await held.close();
        await ws.file("U1__a.sql", `${held.file}drop table A;\n`);
        const first = ws.run("undo");
        await until(held.reached);
        const second = await ws.run("undo", "--lock-timeout", "0");
        assert.equal(second.code, 3, second.err);
        assert.match(second.err, /locked by "thaw undo test \d+"/);
        await held.open();
        assert.equal((await first).code, 0);
      });
    }

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

describe("SQL lock on postgres, its runner killed in the middle of a statement", () => {
  const workspace = workspaces("postgres");

  it("names the holder in its own database, where another database's runner holds the same key", async () => {
    // Advisory locks are per database: the records table of each has the same key.
    const [other, ws] = [await workspace(), await workspace()];
    const held = [gate("postgres", other, 4444), gate("postgres", ws, 4545)];
    for (const g of held) await g.close();
    await other.file("001.sql", held[0].file);
    await ws.file("001.sql", held[1].file);
    const first = other.run();
    await until(held[0].reached);
    const second = ws.run();
    await until(held[1].reached);
    const [{ pid }] = await ws.query(
      `SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'thaw migrate %' AND datname = current_database()`,
    );
    const third = await ws.run("--lock-timeout", "0");
    assert.equal(third.code, 3, third.err);
    assert.match(third.err, new RegExp(`\\(server pid ${pid}\\b`));
    assert.match(third.err, new RegExp(`pg_terminate_backend\\(${pid}\\)`));
    for (const g of held) await g.open();
    assert.equal((await first).code, 0);
    assert.equal((await second).code, 0);
  });

  it("is released once the server sees the runner gone: the next run takes it", async () => {
    const ws = await workspace();
    await ws.file("001.sql", "SELECT pg_sleep(600);\n");
    const runner = startCli(
      ["-c", ws.configDir, "--sqlPath", ws.root],
      { THAW_TEST_DB_PASSWORD: ws.password },
    );
    // The runner's session, in the middle of the file's statement.
    const session = async () =>
      (await ws.query(
        `SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'thaw migrate %'
           AND query LIKE 'SELECT pg_sleep(600)%' AND datname = current_database()`,
      ))[0]?.pid as number | undefined;
    await until(async () => await session() !== undefined);
    const pid = (await session())!;
    try {
      runner.signal("SIGKILL");
      await runner.closed;
      // Never recorded, so run again: as a statement that ends.
      await ws.file("001.sql", "SELECT 1;\n");
      // A give-up: the lock is taken as soon as the dead runner's session ends.
      const next = await ws.run("--json", "--lock-timeout", "120");
      assert.equal(next.code, 0, next.out);
      assert.equal(next.report!.connections[0].applied, 1);
      assert.equal(await ws.count("framework_migrations"), 1);
    } finally {
      // A server that did not notice would hold the session for ten minutes.
      await ws.query(`SELECT pg_terminate_backend(${pid})`);
    }
  });
});

// An undo file in code that logs, then ends only when the test writes to its runner's stdin: the
// undo holds SQLite's write lock there, its plan made, its first version not yet undone.
const GATED_UNDO = `import process from "node:process";

type Ctx = { log(message: string): void; query(text: string): Promise<unknown[]> };
export default async (ctx: Ctx): Promise<void> => {
  ctx.log("U5 waits for the gate");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
  await ctx.query("drop table T5");
};
`;

for (const kind of KINDS.filter((k) => k === "sqlite")) {
  describe(`SQL lock on ${kind}, an undo racing a migrate`, () => {
    const workspace = workspaces(kind);

    // Three trials: each must leave no version applied above an undone one.
    for (const trial of [1, 2, 3]) {
      it(`undo --target 2 and migrate of V6 run one after the other, never V6 above undone versions (trial ${trial})`, async () => {
        const ws = await workspace();
        for (const n of [1, 2, 3, 4, 5]) {
          await ws.file(`V${n}__t${n}.sql`, `create table T${n} (V int);\n`);
          if (n >= 3 && n < 5) await ws.file(`U${n}__t${n}.sql`, `drop table T${n};\n`);
        }
        await ws.file("U5__t5.ts", `${GATED_UNDO}`);
        await ws.ok();
        await ws.file("V6__t6.sql", "create table T6 (V int);\n");
        const args = ["-c", ws.configDir, "--sqlPath", ws.root, "--lock-timeout", "600"];
        const undo = startCli([...args, "undo", "--target", "2"]);
        let migrating: ReturnType<typeof startCli> | undefined;
        try {
          // The undo planned V5, V4, V3, and runs U5: SQLite's write lock is its.
          await undo.printed(/U5 waits for the gate/);
          migrating = startCli(args);
          // The migrate read the records, V6 pending for it: it waits for the undo's lock, or,
          // with no lock over the undo's run, for the write lock of V6's own transaction.
          await migrating.printed(/waiting for the lock of |main: \d+ of \d+ file\(s\) to apply/);
          undo.child.stdin.end("go\n");
          assert.equal(await undo.closed, 0, undo.stderr());
        } finally {
          undo.child.stdin.end();
        }
        assert.equal(await migrating!.closed, 0, migrating!.stderr());
        // Whichever ran first, the other saw what it did: every version applied, in order.
        const status = await ws.ok("status", "--json");
        assert.deepEqual(
          status.report!.connections[0].files.map((f) =>
            `${f.path}:${f.outOfOrder === undefined ? f.action : "out of order"}`
          ),
          [
            "V1__t1.sql:skip",
            "V2__t2.sql:skip",
            "V3__t3.sql:skip",
            "V4__t4.sql:skip",
            "V5__t5.sql:skip",
            "V6__t6.sql:skip",
          ],
        );
      });
    }
  });
}
