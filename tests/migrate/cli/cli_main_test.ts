import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { propertyOptions } from "../../property.ts";
import { COMMAND_LINE_NAMES } from "../../../src/migrate/option_names.ts";
import { scriptCommand } from "../../runtime.ts";
import { jsonRun } from "../report_shape.ts";
import { runCaptured } from "../run_cli.ts";
import { os, recording, type Sent, Workspace } from "../search/cluster.ts";
import { KINDS, workspaces } from "../sql/databases.ts";
import {
  runtimeTransport,
  type TransportFactory,
} from "../../../src/migrate/search/http/transport.ts";
import { jsonRequested, parseCommandLine } from "../../../src/migrate/cli/command_line.ts";
import { completeReport } from "../../../src/migrate/connection_outcomes.ts";
import { selectEnabled } from "../../../src/migrate/select_connections.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

// Every outcome of the CLI with --json: one report of one shape on stdout, and its exit code.
// SQL cases run on the quickest database this runtime has (SQLite, else PostgreSQL); search
// cases on the real OpenSearch node.

const root = fileURLToPath(new URL("../../../", import.meta.url));

async function emptyDir(): Promise<string> {
  return await suiteDir("thaw-report-");
}

describe("--json usage and config errors", () => {
  it("prints a usage report wherever --json stands, even when parsing fails", async () => {
    for (
      const args of [
        ["--json", "--bogus"],
        ["--bogus", "--json"],
        ["-m", "elastic", "--json"],
        ["status", "--dry-run", "--json"],
        ["--json", "--lock-timeout", "soon"],
      ]
    ) {
      const run = await runCaptured(args);
      const report = jsonRun(run);
      assert.equal(report.error?.kind, "usage", args.join(" "));
      assert.deepEqual(report.connections, []);
    }
    const bogus = jsonRun(await runCaptured(["--json", "--bogus"]));
    assert.match(bogus.error!.message, /--bogus/);
    assert.equal(bogus.command, "migrate");
    assert.equal(jsonRun(await runCaptured(["-m", "elastic", "--json"])).command, "migrate");
    assert.equal(jsonRun(await runCaptured(["status", "--json", "-m", "x"])).command, "status");
    // An unknown command is no command at all.
    assert.equal(jsonRun(await runCaptured(["rollback", "--json"])).command, null);
  });

  it("prints a config report in the same shape", async () => {
    const dir = await emptyDir();
    for (const mode of ["sql", "search"]) {
      const report = jsonRun(await runCaptured(["-m", mode, "-c", dir, "status", "--json"]));
      assert.equal(report.error?.kind, "config");
      assert.equal(report.command, "status");
      assert.match(report.error!.message, new RegExp(dir.replaceAll("\\", "\\\\")));
    }
  });

  it("prints a report for any command line with --json that the config folder cannot serve", async () => {
    const dir = await emptyDir();
    const token = fc.constantFrom(
      "migrate",
      "status",
      "validate",
      "unlock",
      "rollback",
      "-m",
      "search",
      "sql",
      "elastic",
      "--bogus",
      "--dry-run",
      "--lock-timeout",
      "5",
      "-1",
      "--connection",
      "main",
      "--sqlPath",
      "",
      "--json=1",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(token, { maxLength: 6 }),
        fc.nat(),
        fc.nat(),
        async (tokens, at, cAt) => {
          const args: string[] = [...tokens];
          args.splice(cAt % (args.length + 1), 0, "-c", dir);
          args.splice(at % (args.length + 1), 0, "--json");
          const run = await runCaptured(args);
          const report = jsonRun(run);
          assert.ok(
            report.error?.kind === "usage" || report.error?.kind === "config",
            JSON.stringify(report.error),
          );
        },
      ),
      propertyOptions(60),
    );
  });

  it("prints the JSON on the stdout of a real process", async () => {
    const [command, argv] = scriptCommand(join(root, "cli.ts"), ["--json", "--bogus"]);
    const child = await new Promise<{ code: number; stdout: string; stderr: string }>(
      (resolve) => {
        execFile(command, argv, { cwd: root, env: { ...process.env, NO_COLOR: "1" } }, (
          error,
          stdout,
          stderr,
        ) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      },
    );
    const report = jsonRun({ code: child.code, out: child.stdout, err: child.stderr });
    assert.equal(report.error?.kind, "usage");
    assert.match(report.error!.message, /--bogus/);
  });
});

describe("SQL outcomes as one report", () => {
  const workspace = workspaces(KINDS[0]);

  it("reports success, a failure with its file and line, and the next run", async () => {
    const ws = await workspace();
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    const ok = jsonRun(await ws.run("--json"));
    assert.equal(ok.error, undefined);
    assert.equal(ok.command, "migrate");
    assert.deepEqual(ok.connections.map((c) => [c.name, c.state, c.applied]), [["main", "ran", 1]]);
    await ws.file("002.sql", "CREATE TABLE b (v INT);\nNOT SQL AT ALL;\n");
    const failed = jsonRun(await ws.run("--json"));
    assert.equal(failed.error?.kind, "failure");
    assert.equal(failed.error?.connection, "main");
    assert.equal(failed.error?.file, "002.sql");
    assert.equal(failed.error?.line, 2);
  });

  it("reports a file that cannot be planned, naming its connection", async () => {
    const ws = await workspace();
    await ws.file("001.sql", new Uint8Array([0x53, 0x45, 0xff, 0x3b]));
    const run = await ws.run("--json");
    const report = jsonRun(run);
    assert.equal(report.error?.kind, "plan");
    assert.equal(report.error?.connection, "main");
    assert.equal(report.error?.file, "001.sql");
    assert.match(report.error!.message, /main.*001\.sql: is not valid UTF-8/);
  });

  it("fails validate with an invalid error naming the changed file", async () => {
    const ws = await workspace();
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    await ws.ok();
    await ws.file("001.sql", "CREATE TABLE a (v INT, w INT);\n");
    const report = jsonRun(await ws.run("validate", "--json"));
    assert.equal(report.command, "validate");
    assert.equal(report.error?.kind, "invalid");
    assert.equal(report.error?.connection, "main");
    assert.equal(report.error?.file, "001.sql");
    assert.match(report.error!.message, /001\.sql/);
    const human = await ws.run("validate");
    assert.equal(human.code, 1);
    assert.match(human.err, /invalid: .*001\.sql/);
  });

  it("says what unlock removed: nothing on SQL, and why", async () => {
    const ws = await workspace();
    const report = jsonRun(await ws.run("unlock", "--json"));
    assert.equal(report.connections[0].unlocked, "nothing");
    assert.match(report.connections[0].note!, /SQL lock ends with/);
    const human = await ws.ok("unlock");
    assert.match(human.out, /main: nothing to remove/);
  });

  it("lists a datasource without migrations.enabled as skipped, with the reason", async () => {
    const ws = await workspace();
    // `main` has no migrations key at all: not enabled.
    await writeFile(join(ws.configDir, "application.yml"), `datasource:\n${ws.datasource("main")}`);
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    const report = jsonRun(await ws.run("--json"));
    assert.deepEqual(report.connections.map((c) => [c.name, c.state, c.reason]), [
      ["main", "disabled", "migrations.enabled is not true"],
    ]);
    const human = await ws.ok();
    assert.match(human.out, /main: skipped \(migrations\.enabled is not true\)/);
    assert.match(human.out, /nothing ran/);
    assert.equal(await ws.count("a"), undefined);
  });

  it("lists the datasources --connection left out, and the one without a folder", async () => {
    const ws = await workspace();
    const yml = join(ws.configDir, "application.yml");
    await writeFile(
      yml,
      (await readFile(yml, "utf8")) + ws.datasource("other") +
        `    migrations: { enabled: true, table: other_migrations }\n`,
    );
    await ws.file("001.sql", "CREATE TABLE a (v INT);\n");
    const only = jsonRun(await ws.run("--connection", "main", "--json"));
    assert.deepEqual(only.connections.map((c) => [c.name, c.state]), [
      ["main", "ran"],
      ["other", "not-selected"],
    ]);
    // `other` is enabled, but <root>/other does not exist.
    const all = jsonRun(await ws.run("status", "--json"));
    const other = all.connections.find((c) => c.name === "other")!;
    assert.equal(other.state, "no-folder");
    assert.equal(other.reason, `no folder ${join(ws.root, "other")}`);
    const human = await ws.ok("status");
    assert.ok(
      human.out.includes(`other: skipped (no folder ${join(ws.root, "other")})`),
      human.out,
    );
  });

  it("exits 2 naming a migrations root that does not exist, in both modes", async () => {
    const ws = await workspace();
    const missing = join(ws.root, "..", "nope");
    // Where this runtime has no SQLite the datasource is PostgreSQL, with its password from env.
    const env = (name: string) =>
      name === "THAW_TEST_DB_PASSWORD" ? ws.password : process.env[name];
    const sql = await runCaptured(["-c", ws.configDir, "--sqlPath", missing], { env });
    assert.equal(sql.code, 2);
    assert.ok(sql.err.includes(missing), sql.err);
    const report = jsonRun(
      await runCaptured(["-c", ws.configDir, "--sqlPath", missing, "--json"], { env }),
    );
    assert.equal(report.error?.kind, "config");
    assert.ok(report.error!.message.includes(missing), report.error!.message);

    await using search = await Workspace.create();
    const sent: Sent[] = [];
    const args = ["-m", "search", "-c", search.configDir, "--sqlPath", missing];
    const human = await runCaptured(args, { transport: recording(sent) });
    assert.equal(human.code, 2);
    assert.ok(human.err.includes(missing), human.err);
    const json = jsonRun(await runCaptured([...args, "--json"], { transport: recording(sent) }));
    assert.equal(json.error?.kind, "config");
    assert.deepEqual(sent, []);
  });
});

describe("search outcomes as one report", () => {
  it("reports a lock not acquired, and what unlock removed", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.plantLiveLock();
    const locked = jsonRun(await ws.run("--lock-timeout", "0.2", "--json"));
    assert.equal(locked.error?.kind, "lock");
    assert.equal(locked.error?.connection, ws.id);
    const live = jsonRun(await ws.run("unlock", "--json"));
    assert.equal(live.error?.kind, "lock");
    const unlock = jsonRun(await ws.run("unlock", "--force", "--json"));
    assert.equal(unlock.command, "unlock");
    const removed = unlock.connections[0].unlocked as Record<string, unknown>;
    assert.equal(removed.host, "elsewhere");
    assert.equal(removed.pid, 42);
    assert.equal(removed.owner, "other");
    const again = jsonRun(await ws.run("unlock", "--json"));
    assert.equal(again.connections[0].unlocked, "nothing");
    const human = await ws.ok("unlock");
    assert.match(human.out, new RegExp(`${ws.id}: nothing to remove`));
  });

  it("reports an interrupted run: before the first connection, and between two files", async () => {
    await using ws = await Workspace.create();
    // Template names are cluster-wide: each carries the workspace's id.
    await ws.file(`${ws.id}-1-template.json`, { index_patterns: [`${ws.id}-1*`] });
    await ws.file(`${ws.id}-2-template.json`, { index_patterns: [`${ws.id}-2*`] });
    const args = ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json"];
    const sent: Sent[] = [];
    const before = jsonRun(
      await runCaptured(args, { transport: recording(sent), signal: AbortSignal.abort() }),
    );
    assert.equal(before.error?.kind, "interrupted");
    assert.deepEqual(before.connections.map((c) => [c.name, c.state]), [[ws.id, "not-reached"]]);
    assert.deepEqual(sent, []);

    // Ctrl-C while the first file's request is answered: the second file is not sent.
    const stop = new AbortController();
    const stopAfterFirst: TransportFactory = async (options) => {
      const inner = await runtimeTransport(options);
      return {
        fetch: async (url, init) => {
          const response = await inner.fetch(url, init);
          if (url.pathname === `/_index_template/${ws.id}-1`) stop.abort();
          return response;
        },
        close: () => inner.close(),
      };
    };
    const during = jsonRun(
      await runCaptured(args, {
        transport: stopAfterFirst,
        signal: stop.signal,
      }),
    );
    assert.equal(during.error?.kind, "interrupted");
    assert.equal(during.error?.connection, ws.id);
    assert.ok(during.error!.message.includes(`${ws.id}-2-template.json`), during.error!.message);
    assert.equal(during.connections[0].applied, 1);
    assert.equal((await os("GET", `/_index_template/${ws.id}-2`)).status, 404);
    const resumed = jsonRun(await ws.run("--json"));
    assert.equal(resumed.connections[0].applied, 1);
    await os("DELETE", `/_index_template/${ws.id}-1`);
    await os("DELETE", `/_index_template/${ws.id}-2`);
  });

  it("lists a disabled connection as skipped, and a run of nothing is not silent", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.disable();
    const report = jsonRun(await ws.run("--json"));
    assert.deepEqual(report.connections.map((c) => [c.name, c.state, c.reason]), [
      [ws.id, "disabled", "migrations.enabled is not true"],
    ]);
    const human = await ws.ok();
    assert.match(human.out, new RegExp(`${ws.id}: skipped \\(migrations\\.enabled is not true\\)`));
    assert.deepEqual(human.sent, []);
  });

  it("reports an enabled connection without a folder, sending nothing to it", async () => {
    await using ws = await Workspace.create();
    await mkdir(ws.root, { recursive: true });
    const run = await ws.run("--json");
    const report = jsonRun(run);
    assert.equal(report.connections[0].state, "no-folder");
    assert.equal(report.connections[0].reason, `no folder ${join(ws.root, ws.id)}`);
    assert.deepEqual(run.sent, []);
  });
});

describe("report parts without I/O", () => {
  it("reads --json from the raw arguments exactly as the parser does, where it accepts them", () => {
    const token = fc.constantFrom(
      "--json",
      "--json=1",
      "--",
      "-c",
      "dir",
      "--connection",
      "--connection=--json",
      "status",
      "-m",
      "sql",
      "--dry-run",
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (args) => {
        let line;
        try {
          line = parseCommandLine(args);
        } catch {
          return; // refused: the raw reading is all there is
        }
        assert.equal(jsonRequested(args), line.json, args.join(" "));
      }),
      propertyOptions(300),
    );
  });

  it("lists every configured connection once, in order, with a reason unless it ran", () => {
    const configs = fc.uniqueArray(
      fc.record({ name: fc.stringMatching(/^[a-z]{1,6}$/), migrationsEnabled: fc.boolean() }),
      { selector: (c) => c.name, maxLength: 6 },
    );
    fc.assert(
      fc.property(configs, fc.option(fc.nat()), fc.nat(), (all, pick, ranCount) => {
        const enabled = all.filter((c) => c.migrationsEnabled);
        const name = pick === null || enabled.length === 0
          ? undefined
          : enabled[pick % enabled.length].name;
        const { selected, skipped } = selectEnabled(all, name, "connection", COMMAND_LINE_NAMES);
        assert.deepEqual(
          selected.map((c) => c.name),
          name === undefined ? enabled.map((c) => c.name) : [name],
        );
        // The engine ran a prefix of the selected connections, then stopped.
        const ran = selected.slice(0, ranCount % (selected.length + 1)).map((c) => ({
          name: c.name,
          state: "ran" as const,
          files: [],
          applied: 0,
          skipped: 0,
          requests: 0,
          ms: 0,
        }));
        const report = completeReport(
          { command: "migrate", connections: ran, ms: 0 },
          all.map((c) => c.name),
          skipped,
        );
        assert.deepEqual(report.connections.map((c) => c.name), all.map((c) => c.name));
        for (const c of report.connections) {
          const config = all.find((x) => x.name === c.name)!;
          const expected = ran.some((r) => r.name === c.name)
            ? "ran"
            : name !== undefined && c.name !== name
            ? "not-selected"
            : !config.migrationsEnabled
            ? "disabled"
            : "not-reached";
          assert.equal(c.state, expected, c.name);
          assert.equal(c.reason === undefined, c.state === "ran");
        }
      }),
      propertyOptions(),
    );
  });
});
