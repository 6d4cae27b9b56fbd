// Three replicas of one app, three real processes of the runtime running the suite, each running
// a `@Scheduled` job every second behind `@SchedulerLock` on real PostgreSQL and MariaDB (a fresh
// database each, its tables created here as migrations would): no tick runs twice, and the lock
// of a replica killed mid-run is taken over once its lockAtMostFor has passed on the database's
// clock, never before. The app is tests/fixtures/scheduling/replica.ts.
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { SqlLockProvider } from "../../lock-sql.ts";
import {
  createDatabase,
  DB_PASSWORD,
  DB_USER,
  type TestDatabase,
} from "../migrate/sql/databases.ts";
import { scriptCommand } from "../runtime.ts";
import { tempDir } from "../temp_dir.ts";

const REPLICA = fileURLToPath(new URL("../fixtures/scheduling/replica.ts", import.meta.url));
// Long enough that, on a loaded machine, every normal run ends well within it and the held run is
// found and killed before its lock runs out (else another replica would take the lock from a live
// holder); the takeover waits for it once.
const LOCK_AT_MOST_FOR = 15_000;
// At least a second: two takings of the lock can never fall in one second of the database's
// clock, so that the second a lock was taken at names the tick its run is.
const LOCK_AT_LEAST_FOR = 1_000;

interface Replica {
  readonly name: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout has the line; rejects if the process ends first. */
  printed(line: string): Promise<void>;
}

function startReplica(name: string, env: Record<string, string>): Replica {
  const [command, args] = scriptCommand(REPLICA);
  const child = spawn(command, args, {
    env: { ...process.env, NO_COLOR: "1", ...env, REPLICA_NAME: name },
  });
  let out = "", err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => out += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => err += chunk);
  return {
    name,
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    printed: (line) =>
      new Promise<void>((resolve, reject) => {
        const seen = () => out.split("\n").includes(line);
        if (seen()) return resolve();
        const check = () => {
          if (!seen()) return;
          child.stdout.off("data", check);
          resolve();
        };
        child.stdout.on("data", check);
        exited.then((code) =>
          reject(new Error(`${name} exited (${code}) before printing "${line}":\n${out}\n${err}`))
        );
      }),
  };
}

/** Whether the process still runs (it has neither exited nor been ended by a signal). */
const running = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

/**
 * Polls a condition of the database (there is no event to wait on) until it holds. Fails after
 * 2 minutes: a give-up paid only when the state never comes, so that the suite names this wait
 * instead of hanging.
 */
async function until<T>(condition: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const found = await condition();
    if (found !== undefined) return found;
    if (Date.now() > deadline) assert.fail(`not within 2 minutes: ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// A time of the table as milliseconds since the epoch, computed by the database (the MariaDB
// DATETIMEs hold UTC; reading them through mysql2 would put them in the test process's zone).
const EPOCH_MS = {
  postgres: (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`,
  mysql: (column: string) => `TIMESTAMPDIFF(MICROSECOND, '1970-01-01', ${column}) DIV 1000`,
} as const;

const TABLES = {
  postgres: [
    "CREATE TABLE runs (tick VARCHAR(19) NOT NULL, replica VARCHAR(64) NOT NULL, " +
    "locked_by VARCHAR(255) NOT NULL, locked_at TIMESTAMP(3) WITH TIME ZONE NOT NULL, " +
    "lock_until TIMESTAMP(3) WITH TIME ZONE NOT NULL)",
    "CREATE TABLE hold (flag INT NOT NULL)",
    "CREATE TABLE waiting (replica VARCHAR(64) NOT NULL, locked_by VARCHAR(255) NOT NULL)",
  ],
  mysql: [
    "CREATE TABLE runs (tick VARCHAR(19) NOT NULL, replica VARCHAR(64) NOT NULL, " +
    "locked_by VARCHAR(255) NOT NULL, locked_at DATETIME(3) NOT NULL, " +
    "lock_until DATETIME(3) NOT NULL)",
    "CREATE TABLE hold (flag INT NOT NULL)",
    "CREATE TABLE waiting (replica VARCHAR(64) NOT NULL, locked_by VARCHAR(255) NOT NULL)",
  ],
} as const;

for (const kind of ["postgres", "mysql"] as const) {
  describe(`three replicas of a @SchedulerLock job on ${kind}`, () => {
    const replicas: Replica[] = [];
    let db: TestDatabase | undefined;
    after(async () => {
      // Whatever failed: no process outlives the test.
      for (const r of replicas) {
        if (running(r)) process.kill(r.child.pid!, "SIGKILL");
      }
      await Promise.all(replicas.map((r) => r.exited));
      await db?.close();
    });

    it("runs each tick once, and takes over a killed holder's lock after lockAtMostFor", async () => {
      await using dir = await tempDir("thaw-replicas-");
      db = await createDatabase(
        kind,
        dir.path,
        `r${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`,
      );
      await db.query(SqlLockProvider.createTable(kind)); // a migration's work
      for (const sql of TABLES[kind]) await db.query(sql);
      const url = new URL(db.url);
      url.username = DB_USER;
      url.password = DB_PASSWORD;
      const env = {
        REPLICA_DB_KIND: kind,
        REPLICA_DB_URL: url.href,
        REPLICA_LOCK_AT_MOST_FOR: String(LOCK_AT_MOST_FOR),
        REPLICA_LOCK_AT_LEAST_FOR: String(LOCK_AT_LEAST_FOR),
      };
      for (const name of ["replica-1", "replica-2", "replica-3"]) {
        replicas.push(startReplica(name, env));
      }
      await Promise.all(replicas.map((r) => r.printed(`started ${r.name}`)));
      const count = async () => Number((await db!.query("SELECT COUNT(*) AS n FROM runs"))[0].n);

      // Several ticks with all three running, none twice.
      const twice = () =>
        db!.query("SELECT tick, COUNT(*) AS n FROM runs GROUP BY tick HAVING COUNT(*) > 1");
      await until(async () => await count() >= 3 ? true : undefined);
      assert.deepEqual(await twice(), []);

      // The next run waits: its process holds the lock, and is killed mid-run.
      await db.query("INSERT INTO hold (flag) VALUES (1)");
      // The waiting run whose taking the lock's row shows: the process that holds the lock.
      const holder = await until(async () =>
        (await db!.query(
          `SELECT w.replica, s.locked_by, ${EPOCH_MS[kind]("s.locked_at")} AS locked_at, ` +
            `${EPOCH_MS[kind]("s.lock_until")} AS lock_until ` +
            "FROM waiting w JOIN shedlock s ON s.locked_by = w.locked_by WHERE s.name = 'tick'",
        ))[0]
      );
      assert.ok(String(holder.locked_by).startsWith(`${holder.replica} `));
      const killedAt = Number(holder.locked_at);
      const killedUntil = Number(holder.lock_until);
      assert.equal(killedUntil - killedAt, LOCK_AT_MOST_FOR);
      const killed = replicas.find((r) => r.name === holder.replica)!;
      process.kill(killed.child.pid!, "SIGKILL");
      await killed.exited;
      await db.query("DELETE FROM hold");

      // Taken over by another replica, not before the killed holder's lock_until.
      const run = (row: Record<string, unknown>) => ({
        replica: String(row.replica),
        lockedBy: String(row.locked_by),
        lockedAt: Number(row.locked_at),
      });
      const runs = async () =>
        (await db!.query(
          `SELECT replica, locked_by, ${EPOCH_MS[kind]("locked_at")} AS locked_at FROM runs`,
        )).map(run).sort((a, b) => a.lockedAt - b.lockedAt);
      const later = await until(async () => {
        const after = (await runs()).filter((r) => r.lockedAt > killedAt);
        return after.length >= 2 ? after : undefined;
      });
      assert.notEqual(later[0].replica, killed.name);
      assert.ok(
        later[0].lockedAt >= killedUntil,
        `taken over at ${later[0].lockedAt}, before the killed lock's end ${killedUntil}`,
      );

      // The others close as an app does.
      const survivors = replicas.filter((r) => r !== killed);
      for (const r of survivors) r.child.stdin.write("close\n");
      assert.deepEqual(await Promise.all(survivors.map((r) => r.exited)), [0, 0]);
      for (const r of survivors) {
        assert.match(r.stdout(), new RegExp(`^closed ${r.name}$`, "m"));
        assert.doesNotMatch(r.stderr(), /@Scheduled|failed|Error/, r.stderr());
      }

      // No tick ran twice, counted: each run recorded itself, and nothing made a second row fail.
      assert.deepEqual(await twice(), []);
      const all = await runs();
      assert.ok(all.length >= 5, `${all.length} runs`);
      assert.ok(all.some((r) => r.replica === killed.name));
      for (const r of all) assert.ok(r.lockedBy.startsWith(`${r.replica} `), r.lockedBy);
      // Every taking is its own: a holder id of one run is never another's.
      assert.equal(new Set(all.map((r) => r.lockedBy)).size, all.length);
    });
  });
}
