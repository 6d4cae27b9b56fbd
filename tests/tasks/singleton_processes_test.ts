// A `@Daemon({ singleton: true })` on three replicas (processes of the runtime running the suite,
// tests/fixtures/tasks/singleton_replica.ts) over a SqlLockManager on SQLite (a file), PostgreSQL
// and MariaDB. Its runs write rows in the order the database took them: the tokens in that order
// never go down, so two runs never wrote at once. The holder is killed with SIGKILL: another
// replica takes over once its lease ended, with a greater token; the next holder's close hands
// the lock to the last one at once.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { bootstrap } from "../../mod.ts";
import { data, SqlClient } from "../../data.ts";
import { SqlLockManager } from "../../tasks.ts";
import { watchChild, type WatchedChild } from "../child_output.ts";
import { scriptCommand } from "../runtime.ts";
import { datasourceEntries, KINDS } from "../sql/pools.ts";
import { waitFor } from "../jobs/job_support.ts";

const databases = datasourceEntries();
const REPLICA = fileURLToPath(new URL("../fixtures/tasks/singleton_replica.ts", import.meta.url));
const LEASE_MS = 3000;

interface Tick {
  readonly token: number;
  readonly replica: string;
  readonly at: number;
}

for (const kind of KINDS) {
  describe(`@Daemon({ singleton: true }) on ${kind}, three replicas`, () => {
    it("runs on one replica at a time, through a SIGKILL of the holder and a close", async () => {
      const { entry } = await databases(kind, "main");
      const app = await bootstrap({ config: { datasource: [entry] }, data: data() });
      const replicas = new Map<string, WatchedChild>();
      try {
        const sql = app.getBean(SqlClient);
        await sql.unsafe(SqlLockManager.createTable(sql.kind));
        await sql.unsafe(ticksTable(sql.kind));
        for (const name of ["r1", "r2", "r3"]) {
          const [command, args] = scriptCommand(REPLICA);
          replicas.set(
            name,
            watchChild(command, args, {
              REPLICA_DATASOURCE: JSON.stringify(entry),
              REPLICA_NAME: name,
              REPLICA_LEASE: String(LEASE_MS),
              NO_COLOR: "1",
            }),
          );
        }
        await Promise.all([...replicas.values()].map((child) => child.line(/^started$/)));
        const ticks = async (): Promise<Tick[]> =>
          (await sql.unsafe("SELECT token, replica, at FROM ticks ORDER BY id")).rows.map((r) => ({
            token: Number(r.token),
            replica: String(r.replica),
            at: Number(r.at),
          }));
        const holders = async () => [...new Set((await ticks()).map((t) => t.replica))];
        // A replica closed ends by itself: nothing of the app (a timer, a connection) holds it.
        const closed = async (name: string) => {
          const child = replicas.get(name)!;
          // Its stdin ended, nothing but the app could hold it.
          child.child.stdin!.end();
          await bounded(child.line(/^closed$/), `${name} to close`);
          assert.equal(await bounded(child.exited, `${name} to end`), 0, child.stderr());
          replicas.delete(name);
        };

        await waitFor("a holder's ticks", async () => (await ticks()).length >= 10);
        const [first] = await holders();
        const killed = replicas.get(first)!;
        killed.child.kill("SIGKILL");
        await killed.exited;
        replicas.delete(first);
        await waitFor("another holder", async () => (await holders()).length === 2);
        const [, second] = await holders();
        // Ticks of the second holder, then its close hands the lock to the last replica.
        const count = async (replica: string) =>
          (await ticks()).filter((t) => t.replica === replica).length;
        await waitFor("the second holder's ticks", async () => await count(second) >= 10);
        await closed(second);
        const [third] = [...replicas.keys()];
        await waitFor("the third holder's ticks", async () => await count(third) >= 10);
        await closed(third);

        const all = await ticks();
        // Never two at once: in the database's order, each holder's rows in one run, the tokens
        // growing from one holder to the next.
        const runs: Tick[][] = [];
        for (const tick of all) {
          const last = runs.at(-1);
          if (last !== undefined && last[0].token === tick.token) last.push(tick);
          else runs.push([tick]);
        }
        assert.deepEqual(runs.map((run) => run[0].replica), [first, second, third]);
        for (const run of runs) {
          assert.ok(run.every((t) => t.replica === run[0].replica), "one token, one replica");
        }
        for (let i = 1; i < runs.length; i++) {
          assert.ok(
            runs[i][0].token > runs[i - 1][0].token,
            `tokens ${runs.map((r) => r[0].token)}`,
          );
        }
        // The takeover after the SIGKILL waited for the lease, and not much more; the one after
        // the close came at once.
        const gap = (i: number) => runs[i][0].at - runs[i - 1].at(-1)!.at;
        assert.ok(gap(1) <= LEASE_MS + 2000, `takeover after SIGKILL: ${gap(1)} ms`);
        assert.ok(gap(2) < LEASE_MS, `takeover after close: ${gap(2)} ms`);
        console.log(
          `${kind}: ${all.length} ticks by ${runs.length} holders in turn (tokens ` +
            `${runs.map((r) => r[0].token).join(" < ")}); takeover ${gap(1)} ms after the ` +
            `SIGKILLed holder's last tick (lease ${LEASE_MS} ms), ${gap(2)} ms after a close`,
        );
      } catch (error) {
        const said = [...replicas].map(([name, c]) => `${name}: ${c.stderr().slice(-3000)}`)
          .join("\n");
        throw new Error(`${(error as Error).message}\n${said}`, { cause: error });
      } finally {
        for (const child of replicas.values()) {
          if (child.child.exitCode === null && child.child.signalCode === null) {
            child.child.kill("SIGKILL");
          }
          await child.exited;
        }
        await app.close();
      }
    });
  });
}

// A table whose ids the database gives in the order it takes the rows.
function ticksTable(kind: string): string {
  const id = kind === "sqlite"
    ? "INTEGER PRIMARY KEY AUTOINCREMENT"
    : kind === "mysql"
    ? "BIGINT AUTO_INCREMENT PRIMARY KEY"
    : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY";
  return `CREATE TABLE ticks (id ${id}, token BIGINT, replica VARCHAR(10), at BIGINT)`;
}

// `promise`, or a failure naming `what` after two minutes: a replica that never ends fails the
// test, rather than hanging the suite.
async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), 120_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
