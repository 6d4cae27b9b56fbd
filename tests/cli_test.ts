import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { cp, mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { OPENSEARCH_URL, os } from "./migrate/search/cluster.ts";
import { scriptCommand } from "./runtime.ts";
import { SQLITE } from "./sqlite.ts";
import { tempDir } from "./temp_dir.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Runs `cli.ts ...` as a user of this runtime would, and returns its exit code and output. */
function cli(args: string[], env: Record<string, string> = {}, cwd = root) {
  const [command, argv] = scriptCommand(join(root, "cli.ts"), args);
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, argv, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...env },
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (error as { code?: number }).code ?? 1 : 0, stdout, stderr });
    });
  });
}

describe("cli.ts as a process", () => {
  it("prints the usage with every flag and exit code on --help, and exits 2 on a bad flag", async () => {
    const help = await cli(["--help"]);
    assert.equal(help.code, 0);
    for (
      const flag of [
        "-m",
        "-c",
        "--migrations",
        "--sqlPath",
        "--dry-run",
        "--json",
        "--connection",
        "--lock-timeout",
        "status",
        "unlock",
      ]
    ) {
      assert.ok(help.stdout.includes(flag), flag);
    }
    assert.match(
      help.stdout,
      /0 success, 1 a migration failed, 2 usage or configuration error, 3 lock not acquired/,
    );
    // Named as the command a user types (the npm package's bin), not as a source file.
    assert.match(help.stdout, /^Usage: thaw \[migrate\|/);
    assert.ok(!help.stdout.includes("cli.ts"), help.stdout);
    const manifestHelp = await cli(["manifest", "--help"]);
    assert.match(manifestHelp.stdout, /^Usage: thaw manifest <dir>/);
    const bad = await cli(["-m", "search", "--nope"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown option '--nope'/);
    assert.equal((await cli(["-m", "elastic"])).code, 2);
  });

  it("takes the migrations root as --migrations, or as --sqlPath, its old name: the same run", async () => {
    await using cwd = await tempDir("thaw-sql-alias-");
    const config = ["-c", join(root, "examples/migrations/config")];
    const files = join(root, "examples/migrations/files");
    const named = await cli(["status", "--json", ...config, "--migrations", files], {}, cwd.path);
    const old = await cli(["status", "--json", ...config, "--sqlPath", files], {}, cwd.path);
    const report = (out: string) => JSON.stringify(JSON.parse(out), (k, v) => k === "ms" ? 0 : v);
    assert.equal(old.code, named.code, old.stderr);
    assert.equal(report(old.stdout), report(named.stdout));
    // Node before 22.13 has no built-in SQLite: there, both say so alike.
    if (SQLITE !== undefined) {
      assert.equal(named.code, 0, named.stderr);
      assert.deepEqual(
        JSON.parse(named.stdout).connections[0].files.map((f: { action: string }) => f.action),
        ["apply", "apply"],
      );
    }
    const help = await cli(["--help"]);
    assert.match(help.stdout, /--sqlPath <dir>\s+an alias of --migrations/);
  });

  it("runs the SQL worked example on SQLite with one command, then skips it all", async () => {
    // SQLite paths are relative to the working directory: the database lands in a temp folder.
    await using cwd = await tempDir("thaw-sql-example-");
    const args = [
      "-c",
      join(root, "examples/migrations/config"),
      "--sqlPath",
      join(root, "examples/migrations/files"),
    ];
    const first = await cli(args, {}, cwd.path);
    if (SQLITE === undefined) {
      // Node before 22.13 has no built-in SQLite: the runner says so and changes nothing.
      assert.equal(first.code, 1, first.stderr);
      assert.match(first.stderr, /SQLite needs a runtime with node:sqlite/);
      await assert.rejects(stat(join(cwd.path, "data")));
      return;
    }
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /app: 2 applied, 0 unchanged/);
    const second = await cli([...args, "--json"], {}, cwd.path);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).connections[0].skipped, 2);
    const db = new SQLITE.DatabaseSync(join(cwd.path, "data/example.db"));
    try {
      assert.deepEqual(
        db.prepare("SELECT name, created_at FROM users").all().map((r) => ({ ...r })),
        [{ name: "Ada Lovelace", created_at: null }],
      );
    } finally {
      db.close();
    }
  });

  it("runs the worked example against the test node, then skips it all on a second run", async () => {
    // A copy, so the example's own folder stays untouched; the index names are the example's.
    await using dir = await tempDir("thaw-example-");
    await cp(join(root, "examples/migrations"), dir.path, { recursive: true });
    await os("DELETE", "/users,users-v2,framework_migrations?ignore_unavailable=true");
    await os("DELETE", "/_index_template/logs");
    const args = [
      "-m",
      "search",
      "-c",
      join(dir.path, "config"),
      "--sqlPath",
      join(dir.path, "files"),
    ];
    const first = await cli(args, { OPENSEARCH_PASSWORD: "not-used-by-the-node" });
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      /main \[3\/4\] apply release-1\.1\/users-add-created-at\.json -> PUT \/users\/_mapping/,
    );
    assert.match(
      first.stderr,
      /main \[4\/4\] apply release-1\.2\/people-reindex\.json -> POST \/_reindex \(alias people: users -> users-v2, 0 document\(s\)/,
    );
    assert.match(first.stdout, /main: 4 applied, 0 unchanged/);
    assert.ok(!(first.stdout + first.stderr).includes("not-used-by-the-node"));
    const mapping = await os("GET", "/users/_mapping");
    assert.equal(mapping.body.users.mappings.properties.created_at.type, "date");
    const people = await os("GET", "/_alias/people");
    assert.deepEqual(people.body, {
      "users-v2": { aliases: { people: { is_write_index: true } } },
    });
    const second = await cli([...args, "--json"]);
    assert.equal(second.code, 0);
    const report = JSON.parse(second.stdout);
    assert.equal(report.connections[0].skipped, 4);
    assert.equal(report.connections[0].requests, 1);
  });

  it("writes the bean manifest with the manifest sub-command, and exits 2 on a bad one", async () => {
    const run = await cli(["manifest", "examples/users/src"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /import \{ UserController \} from "\.\/examples\/users\/src\/user_controller\.ts";/,
    );
    assert.match(run.stdout, /export const controllers = \[\n {2}UserController,\n\];/);
    const bad = await cli(["manifest", "--out", "x.ts"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no directory given[\s\S]*Usage: thaw manifest/);
  });

  it("exits 2 with the file, line and key of a config error", async () => {
    await using dir = await tempDir("thaw-badconfig-");
    await writeFile(
      join(dir.path, "search-config.yml"),
      'search:\n  - name: main\n    hosts: ["not a url"]\n',
    );
    const run = await cli(["-m", "opensearch", "-c", dir.path, "--sqlPath", dir.path]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /search-config\.yml:3: search\[0\]\.hosts\[0\] must be an http/);
  });

  it("stops after the current file on Ctrl-C, exits 1 and releases the lock", async () => {
    await using dir = await tempDir("thaw-sigint-");
    const name = `sig${crypto.randomUUID().slice(0, 6)}`;
    await mkdir(join(dir.path, "files", name), { recursive: true });
    await writeFile(
      join(dir.path, "application.yml"),
      `search:\n  - name: ${name}\n    hosts: ["${OPENSEARCH_URL}"]\n    migrations: {enabled: true, index: fm_${name}}\n`,
    );
    for (let i = 0; i < 40; i++) {
      await writeFile(
        join(dir.path, "files", name, `${String(i).padStart(3, "0")}.json`),
        JSON.stringify({ method: "PUT", path: `/${name}/_doc/${i}`, body: { i } }),
      );
    }
    const child = spawn(
      ...scriptCommand("cli.ts", [
        "-m",
        "search",
        "-c",
        dir.path,
        "--sqlPath",
        join(dir.path, "files"),
      ]),
      {
        cwd: root,
        env: { ...process.env, NO_COLOR: "1" },
      },
    );
    let stderr = "";
    const interrupted = new Promise<void>((resolve) => {
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
        if (stderr.includes("[2/40]")) resolve();
      });
    });
    const exited = new Promise<number>((resolve) =>
      child.once("exit", (code) => resolve(code ?? -1))
    );
    await interrupted;
    // process.kill, not child.kill: Deno's child_process then reports the signal, not the exit code.
    process.kill(child.pid!, "SIGINT");
    const code = await exited;
    assert.equal(code, 1, `exit ${code}: ${stderr}`);
    assert.match(stderr, /interrupted before \S+\.json; it and later files did not run/);
    assert.equal((await os("GET", `/fm_${name}/_doc/lock-${name}`)).status, 404, "lock released");
    const count = (await os("GET", `/fm_${name}/_count`)).body.count;
    assert.ok(count >= 2 && count < 40, `records: ${count}`);
    await os("DELETE", `/${name},fm_${name}`);
  });
});
