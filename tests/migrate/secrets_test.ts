import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCaptured } from "./run_cli.ts";
import { DB_USER, type SqlWorkspace, workspaces } from "./sql/databases.ts";
import { Workspace } from "./search/cluster.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

// Issue 17, point 4: whatever the shape of the URL, no output, error or --json report shows a
// password. Each password here is distinct, so a leak names the case it came from.

/** Runs the CLI on a config folder holding `yaml` as application.yml, with and without --json. */
async function runBoth(mode: "sql" | "search", yaml: string) {
  const dir = await suiteDir("thaw-secrets-");
  await mkdir(join(dir, "migrations", "main"), { recursive: true });
  await writeFile(join(dir, "application.yml"), yaml);
  const args = ["-m", mode, "-c", dir, "--sqlPath", join(dir, "migrations")];
  return [await runCaptured(args), await runCaptured([...args, "--json"])];
}

function assertHidden(
  runs: readonly { out: string; err: string }[],
  secret: string,
  says: RegExp,
): void {
  for (const run of runs) {
    const printed = `${run.out}\n${run.err}`;
    for (const form of [secret, encodeURIComponent(secret)]) {
      assert.ok(!printed.includes(form), `${form} printed:\n${printed}`);
    }
    assert.match(printed, says);
  }
}

describe("no password is printed, whatever the shape of the URL", () => {
  // Found by a review after the first fix: shapes where the value is not one URL string.
  it("a URL YAML reads as a mapping, an @ written %40, a URL given as a name or an index", async () => {
    const host = (hosts: string, extra = "") =>
      `search:\n  - name: main\n    hosts: ${hosts}\n    migrations: { enabled: true${extra} }\n`;
    const cases: [string, string, RegExp][] = [
      [host("[{'https://admin:Hid20-key@h:9200': 1}]"), "Hid20-key", /hosts\[0\] must be/],
      [host("\n      - https://admin: Hid21-space@h:9200"), "Hid21-space", /hosts\[0\] must be/],
      [host("['htp://admin:Hid22-enc%40h:9200']"), "Hid22-enc", /hosts\[0\] must be/],
      [
        host("[http://127.0.0.1:9200]", ", index: 'https://admin:Hid23-index@h'"),
        "Hid23-index",
        /migrations\.index must be/,
      ],
      // A placeholder's value may be a secret (a password in CREATE USER): never shown.
      [
        host("[http://127.0.0.1:9200]", ", placeholders: { pw: [Hid25-placeholder] }"),
        "Hid25-placeholder",
        /migrations\.placeholders\.pw must be a string, a number or true\/false, got a list/,
      ],
      [
        "search:\n  - name: 'admin:Hid24-name@h'\n    hosts: [http://127.0.0.1:9200]\n",
        "Hid24-name",
        /name must be a folder name/,
      ],
    ];
    for (const [yaml, secret, says] of cases) {
      const runs = await runBoth("search", yaml);
      assert.deepEqual(runs.map((r) => r.code), [2, 2]);
      assertHidden(runs, secret, says);
    }
  });

  it("a search host admin:pw@host:9200 without a scheme", async () => {
    const runs = await runBoth(
      "search",
      "search:\n  - name: main\n    hosts: ['admin:Hid3-noscheme@127.0.0.1:9200']\n" +
        "    migrations: { enabled: true }\n",
    );
    assert.deepEqual(runs.map((r) => r.code), [2, 2]);
    assertHidden(runs, "Hid3-noscheme", /:3: search\[0\]\.hosts\[0\] must be an http/);
  });

  it("a malformed search host htp://admin:pw/x@host", async () => {
    const runs = await runBoth(
      "search",
      "search:\n  - name: main\n    hosts: ['htp://admin:Hid4-malformed/x@host']\n" +
        "    migrations: { enabled: true }\n",
    );
    assert.deepEqual(runs.map((r) => r.code), [2, 2]);
    assertHidden(runs, "Hid4-malformed", /search\[0\]\.hosts\[0\] must be an http/);
  });

  it("a search proxy with a malformed URL and credentials", async () => {
    const runs = await runBoth(
      "search",
      "search:\n  - name: main\n    hosts: [http://127.0.0.1:9200]\n" +
        "    proxy: 'htp://u:Hid6-proxy@proxy:3128'\n    migrations: { enabled: true }\n",
    );
    assert.deepEqual(runs.map((r) => r.code), [2, 2]);
    assertHidden(runs, "Hid6-proxy", /search\[0\]\.proxy must be an http/);
  });

  it("a datasource postgres:thaw:pw@host/db without //", async () => {
    const runs = await runBoth(
      "sql",
      "datasource:\n  - name: main\n    url: 'postgres:thaw:Hid5-datasource@host/db'\n" +
        "    migrations: { enabled: true }\n",
    );
    assert.deepEqual(runs.map((r) => r.code), [2, 2]);
    assertHidden(runs, "Hid5-datasource", /:3: datasource\[0\]\.url must be sqlite:/);
  });
});

// A ?password= in a server URL is the password: used to connect, never printed.
for (const kind of ["postgres", "mysql"] as const) {
  describe(`?password= in a ${kind} URL`, () => {
    const workspace = workspaces(kind);

    async function configure(ws: SqlWorkspace, password: string): Promise<void> {
      await writeFile(
        join(ws.configDir, "application.yml"),
        `datasource:\n  - name: main\n    url: ${ws.db.url}?user=${DB_USER}&password=${password}\n` +
          "    migrations:\n      enabled: true\n",
      );
    }

    it("connects with it and applies the files", async () => {
      const ws = await workspace();
      // Through ${VAR}, so the suite's check that no run printed the password applies.
      await configure(ws, "${THAW_TEST_DB_PASSWORD}");
      await ws.file("001.sql", "CREATE TABLE secrets_probe (v INT);\n");
      const first = await ws.ok("--json");
      assert.equal(first.report!.connections[0].applied, 1);
      assert.equal((await ws.ok()).code, 0);
      assert.equal(await ws.count("secrets_probe"), 0);
    });

    it("does not print a wrong one in the connection error", async () => {
      const ws = await workspace();
      const wrong = `Hid-${kind}-q@:/#?%é`;
      await configure(ws, encodeURIComponent(wrong));
      await ws.file("001.sql", "CREATE TABLE never (v INT);\n");
      const runs = [await ws.run(), await ws.run("--json")];
      assert.deepEqual(runs.map((r) => r.code), [1, 1]);
      const location = ws.db.url.replace(/[/.?]/g, "\\$&");
      assertHidden(runs, wrong, new RegExp(`cannot connect to ${location}: `));
    });
  });
}

describe("a placeholder's value is not printed in the cluster's answers", () => {
  it("a refused request whose error quotes the value shows its ${name}", async () => {
    const secret = "s3cr3t-shards-value";
    await using ws = await Workspace.create({
      migrations: `      placeholders:\n        shards: ${secret}\n`,
    });
    await ws.file("1-x.json", {
      method: "PUT",
      path: `/${ws.id}-x`,
      body: { settings: { "index.number_of_shards": "${shards}" } },
    });
    const runs = [await ws.run(), await ws.run("--json")];
    for (const run of runs) assert.equal(run.code, 1, run.out);
    assertHidden(runs, secret, /Failed to parse value \[\$\{shards\}\]/);
  });
});
