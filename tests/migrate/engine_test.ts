// The engine through the driver interface, with a driver in memory: what it asks of a driver and
// in which order (connections, planning, opening), what it reports for each configured connection,
// and how each mistake becomes the report's error and exit code. No database, no cluster.
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ConfigError } from "../../src/config/config_error.ts";
import type { DriverConnection, MigrationDriver } from "../../src/migrate/driver.ts";
import { builtInDriver } from "../../src/migrate/drivers.ts";
import { runMigrations } from "../../src/migrate/engine.ts";
import { exitCodeOf } from "../../src/migrate/exit_code.ts";
import { MigrationFileError } from "../../src/migrate/migration_error.ts";
import type { PlannedFile } from "../../src/migrate/plan/planned_file.ts";
import { silentProgress } from "../../src/migrate/run_report.ts";
import type { RunRequest } from "../../src/migrate/run_request.ts";
import { MemoryTarget } from "./memory_target.ts";
import { propertyOptions } from "../property.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

/** A migrations root with `files` (connection to file names), each file's text its name. */
async function root(files: Record<string, string[]>): Promise<string> {
  const dir = await suiteDir("thaw-engine-");
  for (const [connection, names] of Object.entries(files)) {
    await mkdir(join(dir, connection), { recursive: true });
    for (const name of names) await writeFile(join(dir, connection, name), name);
  }
  return dir;
}

/** A driver whose connections, plans and targets live in memory, logging what it is asked. */
function memoryDriver(
  connections: readonly DriverConnection[] | Error,
  options: { refuse?: string } = {},
) {
  const calls: string[] = [];
  const targets = new Map<string, MemoryTarget>();
  const driver: MigrationDriver<DriverConnection, PlannedFile> = {
    mode: "sql",
    noun: "datasource",
    extension: ".mem",
    capabilities: { drift: false, reindex: false, repeatable: true, code: false, callbacks: false },
    connections: () => {
      calls.push("connections");
      return connections instanceof Error
        ? Promise.reject(connections)
        : Promise.resolve(connections);
    },
    plan: (file, connection) => {
      calls.push(`plan ${connection.name}/${file.path}`);
      if (file.path === options.refuse) {
        return Promise.reject(new MigrationFileError(file.path, "is malformed"));
      }
      return Promise.resolve({ path: file.path, hash: file.hash, runOnce: true });
    },
    open: (opened, where) => {
      calls.push(`open ${opened.map((c) => c.name).join(",")}`);
      return Promise.resolve(opened.map((c) => {
        const target = new MemoryTarget(c.name, where.requests);
        targets.set(c.name, target);
        return target;
      }));
    },
  };
  return { driver, calls, targets };
}

function request(migrationsRoot: string, extra: Partial<RunRequest> = {}): RunRequest {
  return {
    mode: "sql",
    command: "migrate",
    configDir: migrationsRoot,
    migrations: migrationsRoot,
    dryRun: false,
    force: false,
    lockTimeoutMs: 1000,
    ...extra,
  };
}

const context = {
  env: () => undefined,
  identity: { host: "test", pid: 1 },
  progress: silentProgress,
};
const off = { strictOrder: false, validateOnMigrate: false };
const enabled = (name: string): DriverConnection => ({ name, migrationsEnabled: true, ...off });

describe("runMigrations with a driver in memory", () => {
  it("reads the connections, plans every file of every selected one, then opens them all at once", async () => {
    const dir = await root({ a: ["1.mem", "2.mem", "notes.txt"], b: ["1.mem"] });
    const { driver, calls, targets } = memoryDriver([enabled("a"), enabled("b")]);
    const report = await runMigrations(request(dir), driver, context);
    assert.equal(report.error, undefined);
    assert.deepEqual(calls, [
      "connections",
      "plan a/1.mem",
      "plan a/2.mem",
      "plan b/1.mem",
      "open a,b",
    ]);
    assert.deepEqual(report.connections.map((c) => [c.name, c.state, c.applied]), [
      ["a", "ran", 2],
      ["b", "ran", 1],
    ]);
    assert.deepEqual(targets.get("a")!.calls.filter((c) => c.startsWith("apply")), [
      "apply 1.mem",
      "apply 2.mem",
    ]);
    // Counted in the run's counter, which the driver's context hands to every target.
    assert.deepEqual(
      report.connections.map((c) => c.requests),
      ["a", "b"].map((name) => targets.get(name)!.requests),
    );
    assert.ok(report.connections.every((c) => c.requests > 0));
  });

  it("reports every configured connection: disabled, not selected, without a folder", async () => {
    const dir = await root({ a: ["1.mem"], c: ["1.mem"] });
    const { driver, calls } = memoryDriver([
      enabled("a"),
      { name: "b", migrationsEnabled: false, ...off },
      enabled("c"),
      enabled("d"),
    ]);
    const all = await runMigrations(request(dir), driver, context);
    assert.deepEqual(all.connections.map((c) => [c.name, c.state]), [
      ["a", "ran"],
      ["b", "disabled"],
      ["c", "ran"],
      ["d", "no-folder"],
    ]);
    assert.ok(calls.includes("open a,c"), "a connection without a folder is not opened");
    const one = await runMigrations(request(dir, { connection: "c" }), driver, context);
    assert.deepEqual(one.connections.map((c) => c.state), [
      "not-selected",
      "not-selected",
      "ran",
      "not-selected",
    ]);
  });

  it("opens nothing when one file cannot be planned, and names its connection and file", async () => {
    const dir = await root({ a: ["1.mem"], b: ["1.mem", "2.mem"] });
    const { driver, calls } = memoryDriver([enabled("a"), enabled("b")], { refuse: "2.mem" });
    const report = await runMigrations(request(dir), driver, context);
    assert.deepEqual(report.error, {
      kind: "plan",
      message: 'connection "b": 2.mem: is malformed (nothing was sent)',
      connection: "b",
      file: "2.mem",
    });
    assert.equal(exitCodeOf(report), 1);
    assert.ok(!calls.some((c) => c.startsWith("open")), "nothing was opened");
  });

  it("refuses two files of one version, and a name Flyway refuses, before planning any file", async () => {
    const cases: [string[], string, string][] = [
      [["V1__a.mem", "V1.0__b.mem"], "V1.0__b.mem", "has version 1, as V1__a.mem has"],
      [["V1__a.mem", "V1..2__b.mem"], "V1..2__b.mem", "1..2 is not a version"],
    ];
    for (const [names, file, says] of cases) {
      const dir = await root({ a: names });
      const { driver, calls } = memoryDriver([enabled("a")]);
      const report = await runMigrations(request(dir), driver, context);
      assert.equal(report.error?.kind, "plan");
      assert.equal(report.error?.file, file);
      assert.match(report.error!.message, new RegExp(`^connection "a": ${file}: .*${says}`));
      assert.equal(exitCodeOf(report), 1);
      assert.deepEqual(calls, ["connections"], "nothing planned, nothing opened");
    }
  });

  it("turns the user's mistakes into the report's error, with the exit code of its kind", async () => {
    const dir = await root({});
    const config = await runMigrations(
      request(dir),
      memoryDriver(new ConfigError("application.yml:3: url is missing")).driver,
      context,
    );
    assert.deepEqual(config.error, {
      kind: "config",
      message: "application.yml:3: url is missing",
    });
    assert.equal(exitCodeOf(config), 2);
    const noRoot = await runMigrations(
      request(join(dir, "nope")),
      memoryDriver([enabled("a")]).driver,
      context,
    );
    assert.equal(noRoot.error?.kind, "config");
    assert.match(noRoot.error!.message, /the migrations root .*nope does not exist/);
    const unknown = await runMigrations(
      request(dir, { connection: "x" }),
      memoryDriver([enabled("a")]).driver,
      context,
    );
    assert.equal(unknown.error?.message, "--connection x: no such datasource (configured: a)");
    // Anything else is a bug: it propagates.
    await assert.rejects(
      runMigrations(request(dir), memoryDriver(new TypeError("bug")).driver, context),
      TypeError,
    );
  });

  it("unlock reads no file and needs no migrations root", async () => {
    const { driver, calls, targets } = memoryDriver([enabled("a")]);
    const report = await runMigrations(
      request("/no/such/root", { command: "unlock" }),
      driver,
      context,
    );
    assert.equal(report.error, undefined);
    assert.deepEqual(calls, ["connections", "open a"]);
    assert.deepEqual(targets.get("a")!.calls, ["unlock", "close"]);
    assert.equal(report.connections[0].unlocked, "nothing");
  });

  it("fails validate on a changed run-once file, after every connection was read", async () => {
    const dir = await root({ a: ["1.mem"], b: ["1.mem"] });
    const { driver } = memoryDriver([enabled("a"), enabled("b")]);
    await runMigrations(request(dir), driver, context);
    await writeFile(join(dir, "a", "1.mem"), "changed");
    // A new driver reads the records the first one's targets wrote: none, so both are pending.
    const { driver: again, targets } = memoryDriver([enabled("a"), enabled("b")]);
    const originalOpen = again.open;
    again.open = async (opened, where) => {
      const made = await originalOpen(opened, where);
      for (const t of made) (t as MemoryTarget).records.set("1.mem", "recorded-before");
      return made;
    };
    const report = await runMigrations(request(dir, { command: "validate" }), again, context);
    assert.equal(report.error?.kind, "invalid");
    assert.equal(report.error?.connection, "a");
    assert.match(
      report.error!.message,
      /run-once files were changed after they ran \(a: 1\.mem, b: 1\.mem\)/,
    );
    assert.equal(report.connections.length, 2, "validate reads every connection");
    assert.ok(![...targets.values()].some((t) => t.calls.some((c) => c.startsWith("apply"))));
  });

  it("property: the report lists every configured connection once, in configuration order", async () => {
    const dir = await root({ a: ["1.mem"], b: ["1.mem"], c: ["1.mem"] });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e"), { minLength: 1 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        async (names, on) => {
          const connections = names.map((name, i) => ({ name, migrationsEnabled: on[i], ...off }));
          const report = await runMigrations(
            request(dir),
            memoryDriver(connections).driver,
            context,
          );
          assert.deepEqual(report.connections.map((c) => c.name), names);
          for (const [i, c] of report.connections.entries()) {
            const expected = !on[i] ? "disabled" : "abc".includes(c.name) ? "ran" : "no-folder";
            assert.equal(c.state, expected, c.name);
          }
        },
      ),
      propertyOptions(50),
    );
  });
});

describe("builtInDriver", () => {
  it("loads the driver of the mode asked for, each with its own files and connections", async () => {
    const sql = await builtInDriver("sql");
    const search = await builtInDriver("search");
    assert.deepEqual([sql.mode, sql.extension, sql.noun], ["sql", ".sql", "datasource"]);
    assert.deepEqual([search.mode, search.extension, search.noun], [
      "search",
      ".json",
      "connection",
    ]);
  });
});
