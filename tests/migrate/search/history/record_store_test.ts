import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { rawContentHash } from "../../../../src/migrate/files/content_hash.ts";
import { MigrationFailure } from "../../../../src/migrate/migration_error.ts";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import type { MigrationRecord } from "../../../../src/migrate/search/history/migration_record.ts";
import { RecordStore } from "../../../../src/migrate/search/history/record_store.ts";
import { SearchClient } from "../../../../src/migrate/search/http/search_client.ts";
import { SearchTarget } from "../../../../src/migrate/search/search_target.ts";
import { planRequest } from "../../../../src/migrate/search/plan/plan_request.ts";
import { VERSION } from "../../../../src/version.ts";
import { propertyOptions } from "../../../property.ts";
import {
  runtimeTransport,
  type TransportFactory,
} from "../../../../src/migrate/search/http/transport.ts";
import { runCaptured } from "../../run_cli.ts";
import { type FaultServer, SHARDS_NOT_STARTED, startFaultServer } from "../fault_server.ts";
import {
  EARLIER_RECORDS_MAPPINGS,
  OPENSEARCH_URL,
  os,
  recording,
  type Run,
  type Sent,
  Workspace,
  writes,
} from "../cluster.ts";

const utf8 = (s: string) => new TextEncoder().encode(s).length;
// What versions before the hashed ids used: the url-encoded `connection/path`.
const legacyId = (connection: string, path: string) => encodeURIComponent(`${connection}/${path}`);
// Connection names as the config allows them (connection_settings.ts): no `/`.
const connectionArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,20}$/);
// Long ones too: a path of 200 graphemes url-encodes to well over 512 bytes.
const pathArb = fc.string({ unit: "grapheme", minLength: 1, maxLength: 300, size: "max" });

// Every records index the tests make, deleted at the end: the node is shared and has a shard limit.
const made: string[] = [];
async function workspace(options?: Parameters<typeof Workspace.create>[0]): Promise<Workspace> {
  const ws = await Workspace.create(options);
  made.push(ws.recordsIndex);
  return ws;
}
after(async () => {
  for (const index of made.splice(0)) await os("DELETE", `/${index}`);
});

/** Every record document of the workspace's connection, with its id (real-time, by search). */
async function records(ws: Workspace): Promise<{ _id: string; _source: Record<string, string> }[]> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { exists: { field: "migration_path" } },
  });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body.hits.hits;
}

/** The `--json` report's error, which must exist: the run failed and said why. */
function failure(run: Run): { message: string; reason?: string } {
  assert.equal(run.code, 1, `exit ${run.code}\n${run.out}\n${run.err}`);
  const error = run.report!.error as { message: string; reason?: string } | undefined;
  assert.ok(error, run.out);
  return error;
}

describe("recordId (property)", () => {
  it("is at most 512 bytes, deterministic, and distinct for distinct paths", async () => {
    await fc.assert(
      fc.asyncProperty(connectionArb, pathArb, pathArb, async (connection, a, b) => {
        const id = await recordId(connection, a);
        assert.ok(utf8(id) <= 512, `${utf8(id)} bytes`);
        assert.equal(await recordId(connection, a), id);
        assert.ok(!id.startsWith("lock-"), "never the id of a lock document");
        if (a !== b) assert.notEqual(await recordId(connection, b), id);
      }),
      propertyOptions(),
    );
  });

  it("differs between connections for the same path", async () => {
    await fc.assert(
      fc.asyncProperty(connectionArb, connectionArb, pathArb, async (c1, c2, path) => {
        fc.pre(c1 !== c2);
        assert.notEqual(await recordId(c1, path), await recordId(c2, path));
      }),
      propertyOptions(),
    );
  });
});

describe("records of long paths", () => {
  it("applies and records a file whose url-encoded path exceeds 512 bytes, once", async () => {
    await using ws = await workspace();
    // Each folder stays under the 255 bytes a file system allows for one name.
    const dirs = ["ü".repeat(100), "données-".repeat(20), "日本語".repeat(20)];
    const path = `${dirs.join("/")}/${ws.id}-${"é".repeat(60)}-template.json`;
    assert.ok(utf8(legacyId(ws.id, path)) > 512);
    await ws.file(path, { index_patterns: [`${ws.id}-long*`] });
    const first = await ws.ok("--json");
    assert.equal(first.report!.connections[0].applied, 1);
    const stored = await records(ws);
    assert.equal(stored.length, 1);
    assert.equal(stored[0]._source.migration_path, path);
    assert.equal(stored[0]._id, await recordId(ws.id, path));
    const second = await ws.ok("--json");
    assert.equal(second.report!.connections[0].skipped, 1);
    assert.deepEqual(writes(second.sent), []);
    await os("DELETE", `/_index_template/${encodeURIComponent(`${ws.id}-${"é".repeat(60)}`)}`);
  });
});

describe("records written by earlier versions (url-encoded ids)", () => {
  /**
   * A workspace whose file `<id>-old-template.json` (holding `content`) is recorded the way earlier
   * versions did: under the url-encoded id, with the hash of `recorded`.
   */
  async function withLegacyRecord(
    content: (id: string) => unknown,
    recorded: (id: string) => unknown,
  ): Promise<{ ws: Workspace; path: string } & AsyncDisposable> {
    const ws = await workspace();
    const path = `${ws.id}-old-template.json`;
    await ws.file(path, content(ws.id));
    // The first run creates the records index; its record is then replaced by a legacy one.
    await ws.ok();
    for (const hit of await records(ws)) {
      const id = encodeURIComponent(hit._id);
      assert.equal((await os("DELETE", `/${ws.recordsIndex}/_doc/${id}`)).status, 200);
    }
    const bytes = new TextEncoder().encode(JSON.stringify(recorded(ws.id), null, 2));
    const id = encodeURIComponent(legacyId(ws.id, path));
    const put = await os("PUT", `/${ws.recordsIndex}/_doc/${id}?refresh=true`, {
      migration_path: path,
      connection: ws.id,
      content_hash: await rawContentHash(bytes),
      executed_at: "2024-01-01T00:00:00.000Z",
      execution_ms: 1,
      request: { method: "PUT", path: `/_index_template/${ws.id}-old` },
      runner_version: "0.0.1",
    });
    assert.equal(put.status, 201);
    return { ws, path, [Symbol.asyncDispose]: () => ws[Symbol.asyncDispose]() };
  }

  it("skips an unchanged file recorded under its old id", async () => {
    const content = (id: string) => ({ index_patterns: [`${id}-old*`] });
    await using legacy = await withLegacyRecord(content, content);
    const { ws } = legacy;
    const run = await ws.ok("--json");
    assert.deepEqual(run.report!.connections[0].files.map((f) => f.action), ["skip"]);
    assert.deepEqual(writes(run.sent), []);
    await os("DELETE", `/_index_template/${ws.id}-old`);
  });

  it("updates the old record in place when the file changed: one record per path", async () => {
    await using legacy = await withLegacyRecord(
      (id) => ({ index_patterns: [`${id}-new*`], priority: 3 }),
      (id) => ({ index_patterns: [`${id}-old*`] }),
    );
    const { ws, path } = legacy;
    const run = await ws.ok("--json");
    assert.deepEqual(run.report!.connections[0].files.map((f) => f.action), ["reapply"]);
    const stored = await records(ws);
    assert.equal(stored.length, 1, JSON.stringify(stored));
    assert.equal(stored[0]._id, legacyId(ws.id, path));
    assert.notEqual(stored[0]._source.executed_at, "2024-01-01T00:00:00.000Z");
    assert.equal((await ws.ok("--json")).report!.connections[0].skipped, 1);
    await os("DELETE", `/_index_template/${ws.id}-old`);
  });
});

describe("records and records index of the version before writers were recorded", () => {
  const earlierIndex = {
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: EARLIER_RECORDS_MAPPINGS,
  };

  async function store(ws: Workspace): Promise<RecordStore> {
    const connection = ws.connection();
    const client = new SearchClient(connection, await runtimeTransport(connection));
    return new RecordStore(client, ws.recordsIndex, ws.id);
  }

  it("reads what a record holds of its run, and nothing it lacks", async () => {
    await using ws = await workspace();
    assert.equal((await os("PUT", `/${ws.recordsIndex}`, earlierIndex)).status, 200);
    const earlier = {
      connection: ws.id,
      content_hash: "a".repeat(64),
      execution_ms: 1,
      request: { method: "PUT", path: "/_index_template/x" },
    };
    const put = (id: string, doc: Record<string, unknown>) =>
      os("PUT", `/${ws.recordsIndex}/_doc/${id}?refresh=true`, { ...earlier, ...doc });
    assert.equal(
      (await put("1", {
        migration_path: "1-earlier.json",
        executed_at: "2024-01-01T00:00:00.000Z",
        runner_version: "0.0.1",
      })).status,
      201,
    );
    // Made by hand: a time in another form, a writer that is not text, no version.
    assert.equal(
      (await put("2", {
        migration_path: "2-by-hand.json",
        executed_at: "2024-01-02T03:04:05+02:00",
        executed_by: 42,
      })).status,
      201,
    );
    assert.equal((await put("3", { migration_path: "3-bare.json" })).status, 201);
    assert.deepEqual(
      await (await store(ws)).readFileRecords(),
      new Map([
        ["1-earlier.json", {
          hash: earlier.content_hash,
          executedAt: "2024-01-01T00:00:00.000Z",
          runnerVersion: "0.0.1",
        }],
        ["2-by-hand.json", { hash: earlier.content_hash, executedAt: "2024-01-02T01:04:05.000Z" }],
        ["3-bare.json", { hash: earlier.content_hash }],
      ]),
    );
  });

  it("maps executed_by on that version's index before writing a record that names its writer", async () => {
    await using ws = await workspace();
    assert.equal((await os("PUT", `/${ws.recordsIndex}`, earlierIndex)).status, 200);
    const records = await store(ws);
    await records.ensureIndex();
    const mapping = await os("GET", `/${ws.recordsIndex}/_mapping`);
    assert.deepEqual(mapping.body[ws.recordsIndex].mappings.properties.executed_by, {
      type: "keyword",
    });
    await records.write({
      migration_path: "1-now.json",
      connection: ws.id,
      content_hash: "b".repeat(64),
      executed_at: "2026-11-25T06:16:07.123Z",
      execution_ms: 2,
      request: { method: "PUT", path: "/_index_template/now" },
      runner_version: VERSION,
      executed_by: "ci@build-7",
    });
    await records.publish();
    // Mapped, so searchable: what a query on the writer would find.
    const found = await os("POST", `/${ws.recordsIndex}/_search`, {
      query: { term: { executed_by: "ci@build-7" } },
    });
    assert.equal(found.body.hits.hits.length, 1, JSON.stringify(found.body));
    assert.deepEqual((await records.readFileRecords()).get("1-now.json"), {
      hash: "b".repeat(64),
      executedAt: "2026-11-25T06:16:07.123Z",
      executedBy: "ci@build-7",
      runnerVersion: VERSION,
    });
  });
});

describe("concurrent first runs on a fresh records index", () => {
  /**
   * Runs 5 runners on a fresh records index, each next one started at a moment of its creation:
   * the second when the first asks the node to create it, each later one when the one before saw
   * that the index exists (its creation refused, a search answered 503, its mapping read), so
   * that its first read reaches the node while the index's shard may still be starting.
   */
  async function runners(ws: Workspace): Promise<Run[]> {
    const args = ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json"];
    const index = `/${ws.recordsIndex}`;
    const runs: Promise<Run>[] = [];
    const start = (n: number): void => {
      if (n >= 5 || runs.length > n) return;
      const sent: Sent[] = [];
      const transport: TransportFactory = recording(sent, async (options) => {
        const inner = await runtimeTransport(options);
        return {
          fetch: async (url, init) => {
            const [method, path] = [init.method, url.pathname];
            if (n === 0 && method === "PUT" && path === index) start(1);
            const response = await inner.fetch(url, init);
            const status = response.status;
            if (
              (method === "PUT" && path === index && status === 400) ||
              (path === `${index}/_search` && status === 503) ||
              (path === `${index}/_mapping` && status === 200)
            ) start(n + 1);
            return response;
          },
          close: () => inner.close(),
        };
      });
      runs.push(
        runCaptured(args, { transport }).then((c) => {
          start(n + 1); // it ended without seeing the index made: the next one starts now
          return { ...c, sent, report: JSON.parse(c.out) };
        }),
      );
    };
    start(0);
    // Each run starts the next at the latest when it ends.
    for (let i = 0; i < 5; i++) await runs[i];
    return await Promise.all(runs);
  }

  it("lets 5 runners all finish, each file applied exactly once", async () => {
    for (let round = 0; round < 8; round++) {
      await using ws = await workspace();
      const files = 3;
      for (let i = 0; i < files; i++) {
        await ws.file(`${i}-${ws.id}-${i}-index.json`, { settings: { number_of_replicas: 0 } });
      }
      const runs = await runners(ws);
      for (const run of runs) assert.equal(run.code, 0, `round ${round}: ${run.out}\n${run.err}`);
      const creates = runs.flatMap((r) => r.sent).filter((s) =>
        s.method === "PUT" && /^\/\d-t\w+-\d$/.test(s.path)
      );
      assert.equal(creates.length, files, JSON.stringify(creates));
      const applied = runs.reduce((n, r) => n + r.report!.connections[0].applied, 0);
      assert.equal(applied, files);
      assert.equal((await records(ws)).length, files);
      for (let i = 0; i < files; i++) await os("DELETE", `/${i}-${ws.id}-${i}`);
    }
  });
});

describe("records index not ready (a stand-in node answers 503 to searches)", () => {
  // The fault server passes every request on to the real node, except the next `failNext`
  // searches of the watched records index.
  const node = { failNext: 0, failed: 0, index: "" };
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer(OPENSEARCH_URL, (r) => {
      if (!r.path.startsWith(`/${node.index}/_search`) || node.failNext <= 0) return "forward";
      node.failNext--;
      node.failed++;
      return { status: 503, body: SHARDS_NOT_STARTED };
    });
  });
  after(() => server?.close());

  async function behindStandIn(): Promise<Workspace> {
    const ws = await workspace({ hosts: [server.url] });
    node.index = ws.recordsIndex;
    node.failNext = 0;
    await ws.file(`${ws.id}-a-template.json`, { index_patterns: [`${ws.id}-a*`] });
    await ws.ok();
    await ws.file(`${ws.id}-b-template.json`, { index_patterns: [`${ws.id}-b*`] });
    return ws;
  }

  it("waits for the index to be usable and reads again", async () => {
    await using ws = await behindStandIn();
    node.failNext = 2;
    node.failed = 0;
    const run = await ws.ok("--json");
    assert.equal(node.failed, 2);
    assert.deepEqual(run.report!.connections[0].files.map((f) => f.action), ["skip", "apply"]);
    assert.ok(
      run.sent.some((s) => s.path.startsWith(`/_cluster/health/${ws.recordsIndex}?`)),
      "asked the cluster for the index's health",
    );
  });

  it("gives up with the cluster's answer when the searches keep failing", async () => {
    await using ws = await behindStandIn();
    node.failNext = 1_000;
    const run = await ws.run("--json");
    node.failNext = 0;
    const error = failure(run);
    assert.match(error.message, new RegExp(`POST /${ws.recordsIndex}/_search, HTTP 503`));
    assert.match(error.message, /all shards failed/);
    assert.match(error.message, /no shard/);
    assert.ok(run.sent.length < 20, `a bounded number of tries: ${run.sent.length}`);
  });
});

describe("records index made by hand", () => {
  async function handMade(body: unknown): Promise<Workspace> {
    const ws = await workspace();
    const created = await os("PUT", `/${ws.recordsIndex}`, body);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await ws.file(`${ws.id}-a-template.json`, { index_patterns: [`${ws.id}-a*`] });
    return ws;
  }
  const settings = { number_of_shards: 1, number_of_replicas: 0 };
  const keywords = {
    migration_path: { type: "keyword" },
    connection: { type: "keyword" },
  };

  it("refuses an index that stores no _source before applying anything", async () => {
    await using ws = await handMade({
      settings,
      mappings: { _source: { enabled: false }, properties: keywords },
    });
    const error = failure(await ws.run("--json"));
    assert.match(error.message, new RegExp(`"${ws.recordsIndex}"`));
    assert.match(error.message, /_source/);
    assert.equal((await os("GET", `/_index_template/${ws.id}-a`)).status, 404, "nothing applied");
  });

  it("reports a record without _source as an error, with --json as JSON", async () => {
    await using ws = await handMade({
      settings,
      mappings: { _source: { enabled: false }, properties: keywords },
    });
    const put = await os("PUT", `/${ws.recordsIndex}/_doc/x?refresh=true`, {
      migration_path: "a-template.json",
      connection: ws.id,
      content_hash: "h",
    });
    assert.equal(put.status, 201);
    const error = failure(await ws.run("--json"));
    assert.match(error.message, new RegExp(`"${ws.recordsIndex}"`));
    assert.match(error.message, /_source/);
    const human = await ws.run();
    assert.equal(human.code, 1);
    assert.doesNotMatch(human.err, /TypeError|\n {4}at /);
  });

  it("gives the cluster's root cause when migration_path is mapped as text", async () => {
    await using ws = await handMade({
      settings,
      mappings: { properties: { migration_path: { type: "text" } } },
    });
    const error = failure(await ws.run("--json"));
    assert.match(error.message, /all shards failed/);
    assert.match(error.message, /Text fields are not optimised/);
    assert.match(error.message, new RegExp(`POST /${ws.recordsIndex}/_search`));
  });

  it("refuses an index that maps connection as text, naming the field", async () => {
    await using ws = await handMade({
      settings,
      mappings: { properties: { connection: { type: "text" } } },
    });
    const error = failure(await ws.run("--json"));
    assert.match(error.message, new RegExp(`"${ws.recordsIndex}"`));
    assert.match(error.message, /connection.*text.*keyword/);
    assert.equal((await os("GET", `/_index_template/${ws.id}-a`)).status, 404, "nothing applied");
  });

  it("adds the mapping to an index made without one, so the next run reads its records", async () => {
    await using ws = await handMade({ settings });
    await ws.ok();
    const mapping = await os("GET", `/${ws.recordsIndex}/_mapping`);
    const properties = mapping.body[ws.recordsIndex].mappings.properties;
    assert.equal(properties.migration_path.type, "keyword");
    const again = await ws.ok("--json");
    assert.equal(again.report!.connections[0].skipped, 1);
  });
});

describe("RecordStore.remove", () => {
  const transports: { close(): void }[] = [];
  after(() => {
    for (const t of transports.splice(0)) t.close();
  });

  /** A store of the workspace's connection, reached through `host` (the test node by default). */
  async function storeOf(ws: Workspace, host = OPENSEARCH_URL): Promise<RecordStore> {
    const connection = ws.connection(host);
    const transport = await runtimeTransport(connection);
    transports.push(transport);
    return new RecordStore(new SearchClient(connection, transport), ws.recordsIndex, ws.id);
  }

  const record = (ws: Workspace, path: string, executedAt: string): MigrationRecord => ({
    migration_path: path,
    connection: ws.id,
    content_hash: `hash of ${path}`,
    executed_at: executedAt,
    execution_ms: 1,
    request: { method: "PUT", path: "/_index_template/x" },
    runner_version: "0.0.1",
  });

  /** The paths the next runner reads: a new store, as another process would have. */
  async function nextReader(ws: Workspace): Promise<string[]> {
    return [...(await (await storeOf(ws)).readAll()).keys()];
  }

  // One copy of the history is lost with its node's disk, and a red index stops every runner:
  // a replica wherever the cluster has a second node for one.
  it("creates the records index with a replica where the cluster has a node for it", async () => {
    await using ws = await workspace();
    await (await storeOf(ws)).ensureIndex();
    const settings = await os("GET", `/${ws.recordsIndex}/_settings`);
    const index = settings.body[ws.recordsIndex].settings.index;
    assert.equal(index.auto_expand_replicas, "0-1");
    assert.equal(index.number_of_shards, "1");
  });

  it("deletes a record: gone for the next reader once published", async () => {
    await using ws = await workspace();
    const store = await storeOf(ws);
    await store.ensureIndex();
    await store.write(record(ws, "a.json", "2024-01-01T00:00:00.000Z"));
    await store.write(record(ws, "b.json", "2024-01-01T00:00:00.000Z"));
    await store.publish();
    assert.deepEqual(await nextReader(ws), ["a.json", "b.json"]);
    await store.remove("a.json");
    await store.publish();
    assert.deepEqual(await nextReader(ws), ["b.json"]);
    assert.deepEqual([...(await store.readAll()).keys()], ["b.json"]);
    // Written again after its removal: one record, under the new id.
    await store.write(record(ws, "a.json", "2024-02-01T00:00:00.000Z"));
    await store.publish();
    assert.deepEqual(await nextReader(ws), ["a.json", "b.json"]);
    assert.deepEqual(
      (await records(ws)).map((r) => r._id).sort(),
      [await recordId(ws.id, "a.json"), await recordId(ws.id, "b.json")].sort(),
    );
  });

  it("deletes a record it wrote in this run, before any read or refresh", async () => {
    await using ws = await workspace();
    const store = await storeOf(ws);
    await store.ensureIndex();
    await store.write(record(ws, "a.json", "2024-01-01T00:00:00.000Z"));
    await store.remove("a.json");
    await store.publish();
    assert.deepEqual(await nextReader(ws), []);
    assert.deepEqual(await records(ws), []);
  });

  for (const newer of ["the old id", "recordId"]) {
    it(`deletes both documents of a path (old id and recordId; ${newer} newer)`, async () => {
      await using ws = await workspace();
      const store = await storeOf(ws);
      await store.ensureIndex();
      const path = "données/it's 100%_done.json";
      const [early, late] = ["2024-01-01T00:00:00.000Z", "2024-06-01T00:00:00.000Z"];
      const ids = [legacyId(ws.id, path), await recordId(ws.id, path)];
      const dates = newer === "recordId" ? [early, late] : [late, early];
      for (const [i, id] of ids.entries()) {
        const put = await os(
          "PUT",
          `/${ws.recordsIndex}/_doc/${encodeURIComponent(id)}?refresh=true`,
          record(ws, path, dates[i]),
        );
        assert.equal(put.status, 201, JSON.stringify(put.body));
      }
      await store.write(record(ws, "other.json", early));
      await store.publish();
      assert.equal((await records(ws)).length, 3);
      const read = await store.readAll();
      assert.equal(read.get(path)?.executed_at, late);
      await store.remove(path);
      await store.publish();
      assert.deepEqual(await nextReader(ws), ["other.json"]);
      assert.deepEqual((await records(ws)).map((r) => r._source.migration_path), ["other.json"]);
      // Written again: under recordId only, not under the old id it no longer has.
      await store.write(record(ws, path, late));
      await store.publish();
      const stored = (await records(ws)).filter((r) => r._source.migration_path === path);
      assert.deepEqual(stored.map((r) => r._id), [ids[1]]);
    });
  }

  it("is fine with a path that has no record, and with no records index at all", async () => {
    await using ws = await workspace();
    const store = await storeOf(ws);
    await store.remove("never-recorded.json");
    assert.equal((await os("HEAD", `/${ws.recordsIndex}`)).status, 404, "no index made");
    await store.ensureIndex();
    await store.write(record(ws, "a.json", "2024-01-01T00:00:00.000Z"));
    await store.readAll();
    await store.remove("never-recorded.json");
    await store.publish();
    assert.deepEqual(await nextReader(ws), ["a.json"]);
  });

  describe("a node that refuses deletes (403)", () => {
    let server: FaultServer;
    before(async () => {
      server = await startFaultServer(OPENSEARCH_URL, (r) =>
        r.method === "DELETE"
          ? {
            status: 403,
            body: {
              error: {
                type: "security_exception",
                reason: "no permissions for [indices:data/write/delete]",
              },
              status: 403,
            },
          }
          : "forward");
    });
    after(() => server?.close());

    it("fails with a MigrationFailure naming the connection, the path and the status", async () => {
      await using ws = await workspace();
      const store = await storeOf(ws, server.url);
      await store.ensureIndex();
      await store.write(record(ws, "a.json", "2024-01-01T00:00:00.000Z"));
      await store.publish();
      await store.readAll();
      const refreshes = () =>
        server.received.filter((r) => r.path.startsWith(`/${ws.recordsIndex}/_refresh`)).length;
      const published = refreshes();
      await assert.rejects(store.remove("a.json"), (error: unknown) => {
        assert.ok(error instanceof MigrationFailure, String(error));
        assert.equal(error.detail.connection, ws.id);
        assert.equal(error.detail.status, 403);
        assert.match(error.message, /a\.json/);
        assert.match(error.message, /security_exception/);
        assert.match(error.message, new RegExp(`DELETE /${ws.recordsIndex}/_doc/`));
        return true;
      });
      // Whatever the delete did, the next reader must see it.
      await store.publish();
      assert.equal(refreshes(), published + 1);
      assert.deepEqual(await nextReader(ws), ["a.json"]);
    });
  });
});

describe("SearchTarget.record and dropRecord", () => {
  it("records a file without sending its request, and drops a record, under the lock", async () => {
    await using ws = await workspace();
    const connection = ws.connection();
    const target = async () =>
      new SearchTarget(connection, await runtimeTransport(connection), { host: "test", pid: 1 });
    const path = `${ws.id}-baseline-template.json`;
    const bytes = new TextEncoder().encode(JSON.stringify({ index_patterns: [`${ws.id}-b*`] }));
    const searchRequest = planRequest(path, bytes);
    const file = {
      path,
      hash: await rawContentHash(bytes),
      runOnce: false,
      request: `${searchRequest.method} ${searchRequest.path}`,
      searchRequest,
    };
    const first = await target();
    try {
      await first.lock(5_000, () => {});
      await first.record(file, new Date("2024-03-04T05:06:07.089Z"));
      await first.record({ ...file, path: "gone.json" }, new Date());
      await first.dropRecord("gone.json");
      await first.dropRecord("never-recorded.json");
      await first.release();
    } finally {
      await first.close();
    }
    const second = await target();
    try {
      const records = [...await second.readRecords()].map(([p, r]) => [p, r.hash]);
      assert.deepEqual(records, [[path, file.hash]]);
    } finally {
      await second.close();
    }
    const [stored] = await records(ws);
    assert.deepEqual(stored._source, {
      migration_path: path,
      connection: ws.id,
      content_hash: file.hash,
      executed_at: "2024-03-04T05:06:07.089Z",
      execution_ms: 0,
      request: { method: searchRequest.method, path: searchRequest.path },
      runner_version: VERSION,
      // The identity names no user.
      executed_by: "unknown@test",
    });
    const template = await os("GET", `/_index_template/${ws.id}-baseline`);
    assert.equal(template.status, 404, "the file's request was not sent");
  });
});
