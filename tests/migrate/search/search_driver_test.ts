import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { jsonContentHash } from "../../../src/migrate/files/content_hash.ts";
import { recordId } from "../../../src/migrate/search/history/migration_record.ts";
import { RecordStore } from "../../../src/migrate/search/history/record_store.ts";
import { SearchClient } from "../../../src/migrate/search/http/search_client.ts";
import { runtimeTransport } from "../../../src/migrate/search/http/transport.ts";
import { OPENSEARCH_URL as OPENSEARCH, os, recording, Workspace, writes } from "./cluster.ts";

const mappings = (properties: Record<string, unknown>) => ({ mappings: { properties } });

describe("search runner against a real OpenSearch node", () => {
  it("applies templates, indices and envelopes, with the content of the files", async () => {
    await using ws = await Workspace.create();
    const id = ws.id;
    await ws.file(`r1/${id}-logs-template.json`, {
      settings: { number_of_shards: 1 },
      ...mappings({ level: { type: "keyword" } }),
    });
    await ws.file(`r1/${id}-full-template.json`, {
      index_patterns: [`${id}-full-a*`],
      priority: 7,
      template: mappings({ n: { type: "long" } }),
    });
    await ws.file(`r1/${id}-Users-index.json`, {
      settings: { number_of_replicas: 0 },
      ...mappings({ email: { type: "keyword" } }),
    });
    await ws.file(`r2/add-field.json`, {
      method: "PUT",
      path: `/${id}-users/_mapping`,
      body: { properties: { age: { type: "integer" } } },
    });
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].applied, 4);

    const logs =
      (await os("GET", `/_index_template/${id}-logs`)).body.index_templates[0].index_template;
    assert.deepEqual(logs.index_patterns, [`${id}-logs*`]);
    assert.equal(logs.template.mappings.properties.level.type, "keyword");
    const full =
      (await os("GET", `/_index_template/${id}-full`)).body.index_templates[0].index_template;
    assert.deepEqual(full.index_patterns, [`${id}-full-a*`]);
    assert.equal(full.priority, 7);
    const users = (await os("GET", `/${id}-users`)).body[`${id}-users`];
    assert.equal(users.mappings.properties.email.type, "keyword");
    assert.equal(
      users.mappings.properties.age.type,
      "integer",
      "the _mapping envelope added a field to the live index",
    );
    assert.equal(users.settings.index.number_of_replicas, "0");
  });

  it("stores one record per file with the documented fields, in an index of 1 shard and 0 replicas", async () => {
    await using ws = await Workspace.create();
    await ws.file("a/x-index.json", mappings({}));
    await ws.ok();
    const bytes = await readFile(join(ws.root, ws.id, "a/x-index.json"));
    const doc = await os(
      "GET",
      `/${ws.recordsIndex}/_doc/${await recordId(ws.id, "a/x-index.json")}`,
    );
    assert.equal(doc.status, 200);
    const r = doc.body._source;
    assert.equal(r.migration_path, "a/x-index.json");
    assert.equal(r.connection, ws.id);
    // The checksum of the canonical JSON, not of the bytes (README "Checksums").
    assert.equal(
      r.content_hash,
      await jsonContentHash(JSON.parse(new TextDecoder().decode(bytes))),
    );
    assert.ok(Date.parse(r.executed_at) > Date.now() - 60_000);
    assert.equal(typeof r.execution_ms, "number");
    assert.deepEqual(r.request, { method: "PUT", path: "/x" });
    assert.match(r.runner_version, /^\d+\.\d+\.\d+/);
    const settings =
      (await os("GET", `/${ws.recordsIndex}/_settings`)).body[ws.recordsIndex].settings.index;
    assert.equal(settings.number_of_shards, "1");
    assert.equal(settings.number_of_replicas, "0");
    await os("DELETE", "/x");
  });

  it("publishes its records with one refresh before it lets go of the lock, not a wait per record", async () => {
    await using ws = await Workspace.create();
    for (let i = 0; i < 3; i++) {
      await ws.file(`f${i}-template.json`, { index_patterns: [`${ws.id}-${i}*`] });
    }
    const run = await ws.ok();
    const sent = run.sent.map((s) => `${s.method} ${s.path}`);
    const records = `/${ws.recordsIndex}/_doc/`;
    const lastRecord = sent.findLastIndex((s) =>
      s.startsWith(`PUT ${records}`) && !s.includes("lock-")
    );
    const firstRecord = sent.findIndex((s) =>
      s.startsWith(`PUT ${records}`) && !s.includes("lock-")
    );
    const refreshes = sent.flatMap((s, i) => s === `POST /${ws.recordsIndex}/_refresh` ? [i] : []);
    const unlock = sent.findIndex((s) => s.startsWith(`DELETE ${records}lock-`));
    // One right after taking the lock (to read what a runner that died wrote), one after the
    // last record before letting go: none between records.
    assert.equal(refreshes.length, 2, sent.join("\n"));
    assert.ok(refreshes[0] < firstRecord, sent.join("\n"));
    assert.ok(lastRecord < refreshes[1] && refreshes[1] < unlock, sent.join("\n"));
    const found = await os("POST", `/${ws.recordsIndex}/_search`, {
      query: { exists: { field: "migration_path" } },
    });
    assert.equal(found.body.hits.hits.length, 3);
  });

  it("sends no write on a re-run, and one request to read the records", async () => {
    await using ws = await Workspace.create();
    for (let i = 0; i < 5; i++) {
      await ws.file(`f${i}-template.json`, { index_patterns: [`${ws.id}-${i}*`] });
    }
    await ws.ok();
    const again = await ws.ok("--json");
    assert.deepEqual(writes(again.sent), []);
    assert.equal(again.sent.length, 1);
    assert.equal(again.report!.connections[0].skipped, 5);
  });

  it("re-applies a changed template and the change is visible on the cluster", async () => {
    await using ws = await Workspace.create();
    await ws.file(`${ws.id}-template.json`, { index_patterns: [`${ws.id}-a*`], priority: 1 });
    await ws.ok();
    await ws.file(`${ws.id}-template.json`, { index_patterns: [`${ws.id}-a*`], priority: 2 });
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].files[0].action, "reapply");
    const t = (await os("GET", `/_index_template/${ws.id}`)).body.index_templates[0].index_template;
    assert.equal(t.priority, 2);
  });

  it("re-runs an index file after the records index was deleted: the index exists, so it is recorded", async () => {
    await using ws = await Workspace.create();
    await ws.file(`${ws.id}-index.json`, mappings({ a: { type: "keyword" } }));
    await ws.ok();
    assert.equal((await os("DELETE", `/${ws.recordsIndex}`)).status, 200);
    const run = await ws.ok("--json");
    assert.equal(run.report!.connections[0].files[0].result, "exists");
    assert.equal(
      writes(run.sent).filter((s) => s.path === `/${ws.id}`).length,
      0,
      "no PUT of the index",
    );
    assert.equal((await ws.ok("--json")).report!.connections[0].skipped, 1);
  });

  it("stops at a failing file: exit 1 with the details, no record for it, later files absent", async () => {
    await using ws = await Workspace.create();
    await ws.file("1-ok-template.json", { index_patterns: [`${ws.id}-ok*`] });
    await ws.file("2-bad.json", {
      method: "PUT",
      path: `/${ws.id}-bad`,
      body: { settings: { number_of_shards: "many" } },
    });
    await ws.file(`3-${ws.id}-later-index.json`, mappings({}));
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      new RegExp(
        `connection "${ws.id}", file 2-bad\\.json, PUT /${ws.id}-bad, HTTP 400: \\w+_exception: `,
      ),
    );
    assert.equal((await os("HEAD", `/3-${ws.id}-later`)).status, 404);
    const status = await ws.ok("status", "--json");
    assert.deepEqual(status.report!.connections[0].files.map((f) => f.action), [
      "skip",
      "apply",
      "apply",
    ]);
    // Fixed, the run resumes at the failed file.
    await ws.file("2-bad.json", {
      method: "PUT",
      path: `/${ws.id}-bad`,
      body: { settings: { number_of_shards: 1 } },
    });
    const resumed = await ws.ok("--json");
    assert.equal(resumed.report!.connections[0].applied, 2);
    assert.equal((await os("HEAD", `/3-${ws.id}-later`)).status, 200);
  });

  it("plans every file before sending anything: a malformed later file stops the run first", async () => {
    await using ws = await Workspace.create();
    await ws.file("1-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.file("2-broken.json", '{"settings": {}');
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(run.err, /2-broken\.json: is not valid JSON: line 1/);
    assert.deepEqual(run.sent, []);
  });

  it("prints the plan on --dry-run and the state on status, sending only reads", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}-a*`] });
    await ws.file("b-template.json", { index_patterns: [`${ws.id}-b*`] });
    await ws.ok("--connection", ws.id);
    await ws.file("b-template.json", { index_patterns: [`${ws.id}-bb*`] });
    await ws.file("c-template.json", { index_patterns: [`${ws.id}-c*`] });
    const dry = await ws.ok("--dry-run");
    assert.deepEqual(writes(dry.sent), []);
    assert.match(dry.out, /skip +a-template\.json/);
    assert.match(dry.out, /re-apply b-template\.json -> PUT \/_index_template\/b/);
    assert.match(dry.out, /apply +c-template\.json -> PUT \/_index_template\/c/);
    const status = await ws.ok("status");
    assert.deepEqual(writes(status.sent), []);
    // Each record with when, by whom (the identity names no user) and by which version.
    const run = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d UTC by unknown@test \(thaw [\d.]+\)`;
    assert.match(
      status.out,
      new RegExp(
        String.raw`applied +a-template\.json  ${run}\n +changed +b-template\.json  ${run}\n` +
          String.raw` +pending +c-template\.json\n`,
      ),
    );
    await os("DELETE", "/_index_template/a,b");
  });

  it("lets two runners started at once both finish, each file applied once", async () => {
    await using ws = await Workspace.create();
    for (let i = 0; i < 6; i++) await ws.file(`${i}-${ws.id}-${i}-index.json`, mappings({}));
    const [a, b] = await Promise.all([ws.run("--json"), ws.run("--json")]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const creates = [...a.sent, ...b.sent].filter((s) =>
      s.method === "PUT" && /^\/\d-t\w+-\d$/.test(s.path)
    );
    assert.equal(creates.length, 6, JSON.stringify(creates));
    assert.equal(a.report!.connections[0].applied + b.report!.connections[0].applied, 6);
    const lock = await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`);
    assert.equal(lock.status, 404, "the lock was released");
  });
});

describe("search runner lock", () => {
  it("exits 3 while another runner holds the lock; unlock refuses a live one unless --force", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.plantLiveLock();
    const locked = await ws.run("--lock-timeout", "0.3");
    assert.equal(locked.code, 3);
    assert.match(
      locked.err,
      /locked by elsewhere pid 42 .*If that runner is gone, run "unlock --force"/,
    );
    // Its runner renews the lease: removing it would let two runners drive the same files.
    const refused = await ws.run("unlock");
    assert.equal(refused.code, 3, refused.err);
    assert.match(
      refused.err,
      /the lock of elsewhere pid 42 \(owner other\), expiring \S+ is live .*"unlock --force"/,
    );
    assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 200);
    const unlock = await ws.ok("unlock", "--force");
    assert.match(unlock.out, /removed the lock of elsewhere pid 42/);
    await ws.ok();
  });

  it("unlock removes, without --force, a lock whose lease ran out or that has no expiry", async () => {
    for (const holder of [{ expires_at: "2020-01-01T00:02:00Z" }, { expires_at: "never" }]) {
      await using ws = await Workspace.create();
      await ws.plantLock({ host: "gone", pid: 1, ...holder });
      const unlock = await ws.ok("unlock");
      assert.match(unlock.out, /removed the lock of gone pid 1/);
      assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 404);
    }
  });

  it("takes over an expired lock", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.plantLock({ host: "gone", pid: 1, expires_at: "2020-01-01T00:02:00Z" });
    const run = await ws.ok("--json", "--lock-timeout", "0");
    assert.equal(run.report!.connections[0].applied, 1);
    assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 404);
  });
});

describe("search runner command line", () => {
  it("exits 2 on a config error before sending anything", async () => {
    await using ws = await Workspace.create();
    await rm(join(ws.configDir, "application.yml"));
    const run = await ws.run();
    assert.equal(run.code, 2);
    assert.deepEqual(run.sent, []);
    assert.equal((await ws.run("--bogus")).code, 2);
    assert.equal((await ws.run("--connection", "nope")).code, 2);
  });

  it("runs only enabled connections, and refuses --connection on a disabled one", async () => {
    await using ws = await Workspace.create();
    await ws.file("a-template.json", { index_patterns: [`${ws.id}*`] });
    await ws.disable();
    const all = await ws.ok("--json");
    assert.deepEqual(all.report!.connections.map((c) => [c.name, c.state]), [[ws.id, "disabled"]]);
    assert.deepEqual(all.sent, []);
    const one = await ws.run("--connection", ws.id);
    assert.equal(one.code, 2);
    assert.match(one.err, /set migrations\.enabled: true on it first/);
  });
});

describe("search runner records past one page", () => {
  it("reads 10,001 records in two requests, and skips every recorded file", async () => {
    await using ws = await Workspace.create();
    const connection = ws.connection();
    const sent: { method: string; path: string }[] = [];
    const client = new SearchClient(
      connection,
      await recording(sent, runtimeTransport)(connection),
    );
    const store = new RecordStore(client, ws.recordsIndex, ws.id);
    await store.ensureIndex();
    const lines: string[] = [];
    for (let i = 0; i < 10_001; i++) {
      const path = `p/${String(i).padStart(5, "0")}.json`;
      lines.push(JSON.stringify({ index: { _id: await recordId(ws.id, path) } }));
      lines.push(JSON.stringify({ migration_path: path, connection: ws.id, content_hash: "h" }));
    }
    const bulk = await fetch(`${OPENSEARCH}/${ws.recordsIndex}/_bulk?refresh=true`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: lines.join("\n") + "\n",
    });
    assert.equal((await bulk.json()).errors, false);
    sent.length = 0;
    const records = await store.readAll();
    assert.equal(records.size, 10_001);
    assert.equal(sent.length, 2);
    assert.equal(records.get("p/10000.json")?.content_hash, "h");
  });
});
