// Files, records and the cluster drifting apart over years, end to end: the search runner on the
// real OpenSearch node and the SQL runner on SQLite, PostgreSQL and MariaDB. Checksums of content,
// run-once requests, renamed and missing files, two files of one resource, baseline and repair.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { rawContentHash } from "../../src/migrate/files/content_hash.ts";
import { os, Workspace, writes } from "./search/cluster.ts";
import { KINDS, workspaces } from "./sql/databases.ts";

/** The records of a search workspace, path to hash, read beside the runner. */
async function records(ws: Workspace): Promise<Map<string, string>> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { exists: { field: "migration_path" } },
  });
  const hits = (found.body as { hits: { hits: { _source: Record<string, string> }[] } }).hits.hits;
  return new Map(hits.map((h) => [h._source.migration_path, h._source.content_hash]));
}

async function count(index: string): Promise<number> {
  await os("POST", `/${index}/_refresh`);
  return (await os("GET", `/${index}/_count`)).body.count as number;
}

// Writes that reached anything but the records index: what the runner sent to the cluster itself.
const resourceWrites = (ws: Workspace, sent: { method: string; path: string }[]) =>
  writes(sent).filter((s) => !s.path.startsWith(`/${ws.recordsIndex}`));

describe("drift on the search runner (real node)", () => {
  const template = (ws: Workspace, n: string, priority = 0) => ({
    index_patterns: [`${ws.id}_${n}_*`],
    priority,
  });

  it("takes formatting for no change: CRLF, indentation, a BOM and key order send nothing", async () => {
    await using ws = await Workspace.create();
    await ws.file(`1/${ws.id}-a-template.json`, JSON.stringify(template(ws, "a", 5)));
    await ws.ok();
    await ws.file(
      `1/${ws.id}-a-template.json`,
      `\ufeff{\r\n\t"priority": 5,\r\n\t"index_patterns": [ "${ws.id}_a_*" ]\r\n}\r\n`,
    );
    const again = await ws.ok("--json");
    assert.deepEqual(again.report!.connections[0].files.map((f) => f.action), ["skip"]);
    assert.deepEqual(writes(again.sent), [], "no write on a run with nothing to do");
    // A value change is a change.
    await ws.file(`1/${ws.id}-a-template.json`, template(ws, "a", 6));
    const changed = await ws.ok("--json");
    assert.deepEqual(changed.report!.connections[0].files.map((f) => f.action), ["reapply"]);
  });

  it("still matches a record of an earlier version (raw-bytes hash); repair moves it to the new checksum", async () => {
    await using ws = await Workspace.create();
    const text = `{ "index_patterns": ["${ws.id}_l_*"] }\n`;
    await ws.file(`${ws.id}-l-template.json`, text);
    await ws.ok();
    // What the previous version recorded: the SHA-256 of the raw bytes.
    const [id] = (await os("POST", `/${ws.recordsIndex}/_search`, {})).body.hits.hits
      .filter((h: { _id: string }) => !h._id.startsWith("lock-")).map((h: { _id: string }) =>
        h._id
      );
    const raw = await rawContentHash(new TextEncoder().encode(text));
    await os("POST", `/${ws.recordsIndex}/_update/${id}?refresh=true`, {
      doc: { content_hash: raw },
    });
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].files[0].action, "skip");
    assert.deepEqual(writes(run.sent), []);
    const repair = await ws.ok("repair", "--json");
    assert.equal(repair.report!.connections[0].files[0].action, "record");
    assert.deepEqual(resourceWrites(ws, repair.sent), [], "repair sends nothing to the templates");
    assert.notEqual((await records(ws)).get(`${ws.id}-l-template.json`), raw);
    // Now the file may be reformatted without counting as a change.
    await ws.file(
      `${ws.id}-l-template.json`,
      `{\n  "index_patterns": [\n    "${ws.id}_l_*"\n  ]\n}`,
    );
    assert.equal((await ws.ok("--json")).report!.connections[0].files[0].action, "skip");
  });

  it("runs a POST envelope once: a change is reported, not sent, and fails validate; repeatable re-sends", async () => {
    await using ws = await Workspace.create();
    const index = `${ws.id}-seed`;
    const seed = (name: string, extra = {}) => ({
      method: "POST",
      path: `/${index}/_doc`,
      body: { name },
      ...extra,
    });
    await ws.file("1/seed.json", seed("admin"));
    await ws.ok();
    assert.equal(await count(index), 1);

    await ws.file("1/seed.json", seed("root"));
    const status = await ws.ok("status");
    assert.match(status.out, /changed +1\/seed\.json/);
    const migrate = await ws.ok();
    assert.match(migrate.err, /1\/seed\.json changed after it was applied; it runs once/);
    assert.deepEqual(resourceWrites(ws, migrate.sent), []);
    assert.equal(await count(index), 1, "not sent again");
    const validate = await ws.run("validate", "--json");
    assert.equal(validate.code, 1);
    assert.equal(validate.report!.error!.kind, "invalid");
    assert.equal(validate.report!.error!.file, "1/seed.json");

    await ws.file("1/seed.json", seed("root", { repeatable: true }));
    const repeated = await ws.ok("--json");
    assert.equal(repeated.report!.connections[0].files[0].action, "reapply");
    assert.equal(await count(index), 2, "a repeatable request is sent on every change");
  });

  it("moves the record of a renamed file instead of seeding twice; lists a deleted one as missing", async () => {
    await using ws = await Workspace.create();
    const index = `${ws.id}-docs`;
    await ws.file("1/seed.json", { method: "POST", path: `/${index}/_doc`, body: { n: 1 } });
    await ws.file(`1/${ws.id}-x-template.json`, template(ws, "x"));
    await ws.ok();
    await rename(
      join(ws.root, ws.id, "1", "seed.json"),
      join(ws.root, ws.id, "1", "seed-users.json"),
    );
    await rm(join(ws.root, ws.id, "1", `${ws.id}-x-template.json`));

    const status = await ws.ok("status");
    assert.match(status.out, /renamed +1\/seed-users\.json \(renamed from 1\/seed\.json\)/);
    assert.match(status.out, new RegExp(`missing +1/${ws.id}-x-template\\.json`));
    const migrate = await ws.ok("--json");
    const files = migrate.report!.connections[0].files;
    assert.deepEqual(files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`), [
      "1/seed-users.json:rename:moved",
      `1/${ws.id}-x-template.json:missing:`,
    ]);
    assert.deepEqual(resourceWrites(ws, migrate.sent), []);
    assert.equal(await count(index), 1, "seeded once");
    assert.deepEqual(
      [...(await records(ws)).keys()].sort(),
      ["1/seed-users.json", `1/${ws.id}-x-template.json`],
    );
    assert.match((await ws.ok()).err, /is recorded as applied, but its file is gone/);

    // It sorts after every file left: it could be a newer checkout's, so only --force drops it.
    const careful = await ws.ok("repair");
    assert.match(careful.out, new RegExp(`missing +1/${ws.id}-x-template\\.json`));
    assert.equal((await records(ws)).size, 2);
    const repair = await ws.ok("repair", "--force");
    assert.match(repair.out, new RegExp(`drop +1/${ws.id}-x-template\\.json`));
    assert.deepEqual([...(await records(ws)).keys()], ["1/seed-users.json"]);
    assert.doesNotMatch((await ws.ok("status")).out, /missing/);
    // The template itself is not touched: repair only drops the record.
    assert.equal((await os("GET", `/_index_template/${ws.id}-x`)).status, 200);
  });

  it("names two files of one template; --strict-order refuses them before sending anything", async () => {
    await using ws = await Workspace.create();
    await ws.file(`1/${ws.id}-t-template.json`, template(ws, "t", 1));
    await ws.file(`2/${ws.id}-t-template.json`, template(ws, "t", 2));
    const strict = await ws.run("--strict-order", "--json");
    assert.equal(strict.code, 1);
    assert.equal(strict.report!.error!.kind, "plan");
    assert.equal(strict.report!.error!.file, `2/${ws.id}-t-template.json`);
    assert.match(strict.report!.error!.message, /both define template t/);
    assert.deepEqual(writes(strict.sent), []);

    const run = await ws.ok();
    assert.match(
      run.err,
      new RegExp(
        `2/${ws.id}-t-template\\.json and 1/${ws.id}-t-template\\.json both define template ${ws.id}-t`,
      ),
    );
    const validate = await ws.run("validate", "--strict-order", "--json");
    assert.equal(validate.code, 1);
    assert.equal(validate.report!.error!.kind, "invalid");
    assert.equal((await ws.ok("validate")).code, 0, "only a warning without strict order");
  });

  it("baseline adopts a cluster built by hand: records every file, sends nothing else", async () => {
    await using ws = await Workspace.create();
    await ws.file(`${ws.id}-h-template.json`, template(ws, "h"));
    await ws.file("seed.json", { method: "POST", path: `/${ws.id}-hand/_doc`, body: { n: 1 } });
    const dry = await ws.ok("baseline", "--dry-run", "--json");
    assert.equal(dry.report!.command, "baseline");
    assert.equal(dry.report!.dryRun, true);
    assert.deepEqual(dry.report!.connections[0].files.map((f) => f.action), ["record", "record"]);
    assert.deepEqual(writes(dry.sent), []);

    const baseline = await ws.ok("baseline", "--json");
    assert.deepEqual(baseline.report!.connections[0].files.map((f) => f.result), [
      "recorded",
      "recorded",
    ]);
    assert.deepEqual(resourceWrites(ws, baseline.sent), []);
    assert.equal((await os("GET", `/_index_template/${ws.id}-h`)).status, 404, "nothing applied");
    const migrate = await ws.ok("--json");
    assert.deepEqual(migrate.report!.connections[0].files.map((f) => f.action), ["skip", "skip"]);

    const refused = await ws.run("baseline", "--json");
    assert.equal(refused.code, 1);
    assert.equal(refused.report!.error!.kind, "plan");
    assert.match(refused.report!.error!.message, /has 2 record\(s\) already.*--force/);
    await ws.file(`${ws.id}-h-template.json`, template(ws, "h", 3));
    const forced = await ws.ok("baseline", "--force", "--json");
    assert.deepEqual(
      forced.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
      ["seed.json:skip", `${ws.id}-h-template.json:record`],
    );
  });

  it("replaces ${name} from migrations.placeholders after hashing; an unknown one names file and line", async () => {
    await using ws = await Workspace.create({
      migrations: `      placeholders:\n        prefix: \${THAW_TEST_PREFIX:dev-}\n`,
    });
    await ws.file(`${ws.id}-p-template.json`, {
      index_patterns: ["${prefix}" + `${ws.id}_p_*`],
      _meta: { note: "costs $${prefix}" },
    });
    await ws.ok();
    const stored = (await os("GET", `/_index_template/${ws.id}-p`)).body.index_templates[0];
    assert.deepEqual(stored.index_template.index_patterns, [`dev-${ws.id}_p_*`]);
    assert.equal(stored.index_template._meta.note, "costs ${prefix}");

    await ws.file("z-bad-template.json", `{\n  "index_patterns": ["\${nope}x"]\n}`);
    const bad = await ws.run("--json");
    assert.equal(bad.code, 1);
    assert.equal(bad.report!.error!.kind, "plan");
    assert.equal(bad.report!.error!.file, "z-bad-template.json");
    assert.match(bad.report!.error!.message, /line 2: unknown placeholder \$\{nope\}/);
    assert.deepEqual(writes(bad.sent), []);
  });
});

for (const kind of KINDS) {
  describe(`drift on the SQL runner (${kind})`, () => {
    const workspace = workspaces(kind);

    it("takes CRLF line endings for no change, and moves the record of a renamed file", async () => {
      const ws = await workspace();
      await ws.file("V1__a.sql", "CREATE TABLE d1 (id INT);\nINSERT INTO d1 VALUES (1);\n");
      await ws.ok();
      await ws.file("V1__a.sql", "CREATE TABLE d1 (id INT);\r\nINSERT INTO d1 VALUES (1);\r\n");
      const again = await ws.ok("validate", "--json");
      assert.equal(again.report!.connections[0].files[0].action, "skip");

      await rename(join(ws.root, "main", "V1__a.sql"), join(ws.root, "main", "V1__create_d1.sql"));
      const status = await ws.ok("status");
      assert.match(status.out, /renamed +V1__create_d1\.sql \(renamed from V1__a\.sql\)/);
      // Running it again would fail: the table exists.
      const moved = await ws.ok("--json");
      assert.equal(moved.report!.connections[0].files[0].result, "moved");
      assert.equal(await ws.count("d1"), 1);
      const rows = await ws.query("SELECT migration_path FROM framework_migrations");
      assert.deepEqual(rows.map((r) => r.migration_path), ["V1__create_d1.sql"]);
    });

    it("baseline records files of a database built by hand without running them; repair fixes drift", async () => {
      const ws = await workspace();
      await ws.query("CREATE TABLE hand (id INT)");
      await ws.file("V1__hand.sql", "CREATE TABLE hand (id INT);\n");
      await ws.file("V2__gone.sql", "CREATE TABLE gone (id INT);\n");
      await ws.ok("baseline");
      assert.equal(await ws.count("gone"), undefined, "baseline runs nothing");
      assert.equal((await ws.ok("--json")).report!.connections[0].applied, 0);

      await ws.file("V1__hand.sql", "CREATE TABLE hand (id INT); -- reviewed\n");
      await rm(join(ws.root, "main", "V2__gone.sql"));
      await ws.file("V3__new.sql", "CREATE TABLE fresh (id INT);\n");
      const invalid = await ws.run("validate", "--json");
      assert.equal(invalid.code, 1);
      assert.deepEqual(
        invalid.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
        ["V1__hand.sql:changed", "V2__gone.sql:missing", "V3__new.sql:apply"],
      );
      const repair = await ws.ok("repair", "--json");
      assert.deepEqual(
        repair.report!.connections[0].files.map((f) => `${f.path}:${f.action}:${f.result ?? ""}`),
        ["V1__hand.sql:record:recorded", "V2__gone.sql:drop:dropped", "V3__new.sql:apply:"],
      );
      assert.equal(await ws.count("fresh"), undefined, "repair runs no file");
      const rows = await ws.query("SELECT migration_path FROM framework_migrations ORDER BY 1");
      // The baseline's marker stays, as Flyway's repair keeps its baseline row.
      assert.deepEqual(rows.map((r) => r.migration_path), ["<< baseline 2 >>", "V1__hand.sql"]);
      await ws.ok("validate");
      await ws.ok();
      assert.equal(await ws.count("fresh"), 0);
    });

    it("follows the links of a ConfigMap-shaped folder inside the root, by their names", async () => {
      const ws = await workspace();
      const main = join(ws.root, "main");
      const real = join(main, "..2026_11_22_10_00_00.1");
      await mkdir(real, { recursive: true });
      await writeFile(join(real, "V1__links.sql"), "CREATE TABLE linked (id INT);\n");
      await symlink("..2026_11_22_10_00_00.1", join(main, "..data"));
      await symlink("..data/V1__links.sql", join(main, "V1__links.sql"));
      const run = await ws.ok("--json");
      assert.deepEqual(run.report!.connections[0].files.map((f) => f.path), ["V1__links.sql"]);
      assert.equal(await ws.count("linked"), 0);
      // A link leaving the root is refused, naming it; nothing runs.
      await symlink("/etc/hostname", join(main, "V2__out.sql"));
      const refused = await ws.run("--json");
      assert.equal(refused.code, 1);
      assert.equal(refused.report!.error!.kind, "plan");
      assert.match(
        refused.report!.error!.message,
        /V2__out\.sql: is a symbolic link to .*outside the migrations root/,
      );
    });

    it("never prints a placeholder's value: a failing statement shows ${name} instead", async () => {
      const ws = await workspace();
      await appendFile(
        join(ws.configDir, "application.yml"),
        "      placeholders:\n        app_password: hunter2-s3cret\n",
      );
      await ws.file(
        "V1__user.sql",
        "CREATE TABLE IF NOT EXISTS pw (p VARCHAR(40));\nINSERT INTO pw VALUES ('${app_password}') oops;\n",
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      assert.equal(run.report!.error!.kind, "failure");
      assert.doesNotMatch(run.out + run.err, /hunter2-s3cret/);
      const human = await ws.run();
      assert.doesNotMatch(human.out + human.err, /hunter2-s3cret/);
      assert.match(human.err, /\$\{app_password\}/);
    });

    it("replaces placeholders in SQL text; $${ stays literal", async () => {
      const ws = await workspace();
      await appendFile(
        join(ws.configDir, "application.yml"),
        "      placeholders:\n        table: ph_items\n",
      );
      await ws.file(
        "V1__p.sql",
        "CREATE TABLE ${table} (note VARCHAR(40));\nINSERT INTO ${table} VALUES ('$${x}');\n",
      );
      await ws.ok();
      const rows = await ws.query("SELECT note FROM ph_items");
      assert.deepEqual(rows.map((r) => r.note), ["${x}"]);
      const text = await readFile(join(ws.root, "main", "V1__p.sql"), "utf8");
      await writeFile(join(ws.root, "main", "V1__p.sql"), text.replaceAll("\n", "\r\n"));
      await ws.ok("validate");
    });
  });
}
