// `--drift` end to end on the real node (tools/opensearch.sh start): hand edits to a template and
// an index are found, fail `validate`, and `migrate --drift` applies the files again. Policies go
// through an in-process stand-in of the ISM API (the Maven Central node has no ISM plugin).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { checkReport } from "../../report_shape.ts";
import type { ConnectionDrift } from "../../../../src/migrate/run_report.ts";
import { runCaptured } from "../../run_cli.ts";
import {
  runtimeTransport,
  type TransportFactory,
} from "../../../../src/migrate/search/http/transport.ts";
import {
  distribution,
  OPENSEARCH_URL,
  os,
  recording,
  type Sent,
  Workspace,
  writes,
} from "../cluster.ts";
import { type Fault, startFaultServer } from "../fault_server.ts";

type Json = Record<string, unknown>;

/**
 * The ISM policy API as the plugin answers it: a PUT without sequence numbers only creates, with
 * them it updates when they match; a GET answers the policy with what ISM adds (policy_id,
 * last_updated_time, schema_version, error_notification, each action's retry, ism_template as a
 * list). Everything else goes to the real node.
 */
function withIsm(
  policies: Map<string, Json>,
  inner: TransportFactory = runtimeTransport,
): TransportFactory {
  let seq = 0;
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
  return async (options) => {
    const transport = await inner(options);
    return {
      close: () => transport.close(),
      fetch: async (url, init) => {
        if (!url.pathname.startsWith("/_plugins/_ism/policies/")) return transport.fetch(url, init);
        const id = decodeURIComponent(url.pathname.slice("/_plugins/_ism/policies/".length));
        const current = policies.get(id);
        if (init.method === "GET") {
          return current
            ? json(200, {
              _id: id,
              _version: 1,
              _seq_no: current._seq_no,
              _primary_term: 1,
              policy: current.policy,
            })
            : json(404, { error: { type: "status_exception", reason: "Policy not found" } });
        }
        const text = await new Response(init.body as BodyInit).text();
        const body = JSON.parse(text) as { policy: Json };
        const ifSeq = url.searchParams.get("if_seq_no");
        if (current && (ifSeq === null || Number(ifSeq) !== current._seq_no)) {
          return json(409, {
            error: { type: "version_conflict_engine_exception", reason: "conflict" },
          });
        }
        policies.set(id, { _seq_no: seq++, policy: stored(id, body.policy) });
        return json(current ? 200 : 201, { _id: id });
      },
    };
  };
}

/**
 * Elasticsearch's ILM policy API (not in the OSS build the tests run): a PUT replaces the policy,
 * a GET answers it keyed by its id, each phase given the `min_age` of "0ms" ILM fills in.
 * Everything else goes to the real node.
 */
function withIlm(policies: Map<string, Json>): TransportFactory {
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
  return async (options) => {
    const transport = await runtimeTransport(options);
    return {
      close: () => transport.close(),
      fetch: async (url, init) => {
        if (!url.pathname.startsWith("/_ilm/policy/")) return transport.fetch(url, init);
        const id = decodeURIComponent(url.pathname.slice("/_ilm/policy/".length));
        if (init.method === "GET") {
          const current = policies.get(id);
          return current
            ? json(200, { [id]: { version: 1, modified_date: "2026-11-25", policy: current } })
            : json(404, { error: { type: "resource_not_found_exception", reason: id } });
        }
        const text = await new Response(init.body as BodyInit).text();
        const policy = (JSON.parse(text) as { policy: Json }).policy;
        const phases = Object.fromEntries(
          Object.entries(policy.phases as Json).map(([name, phase]) => [
            name,
            { min_age: "0ms", ...(phase as Json) },
          ]),
        );
        policies.set(id, { ...policy, phases });
        return json(200, { acknowledged: true });
      },
    };
  };
}

// What ISM keeps of a policy it was sent.
function stored(id: string, policy: Json): Json {
  const states = (policy.states as Json[] ?? []).map((s) => ({
    ...s,
    actions: (s.actions as Json[] ?? []).map((a) => ({
      retry: { count: 3, backoff: "exponential", delay: "1m" },
      ...a,
    })),
    transitions: s.transitions ?? [],
  }));
  return {
    policy_id: id,
    description: policy.description,
    last_updated_time: Date.now(),
    schema_version: 21,
    error_notification: null,
    default_state: policy.default_state,
    states,
    ism_template: null,
  };
}

/** Runs the CLI like `Workspace.run`, with its own transport. */
async function run(ws: Workspace, transport: TransportFactory, ...args: string[]) {
  const sent: Sent[] = [];
  const captured = await runCaptured(
    ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, ...args],
    { transport: recording(sent, transport) },
  );
  const report = args.includes("--json") ? checkReport(JSON.parse(captured.out)) : undefined;
  return { ...captured, sent, report };
}

const driftOf = (
  report: { readonly connections: readonly { readonly drift?: unknown }[] } | undefined,
) => report!.connections[0].drift as ConnectionDrift;

async function records(ws: Workspace): Promise<Map<string, Json>> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { exists: { field: "migration_path" } },
  });
  const hits = found.body.hits.hits as { _source: Json }[];
  return new Map(hits.map((h) => [h._source.migration_path as string, h._source]));
}

describe("--drift against a real OpenSearch node", () => {
  it("finds hand edits, fails validate, and migrate --drift applies the files again", async () => {
    await using ws = await Workspace.create();
    const logs = `${ws.id}_logs`;
    const orders = `${ws.id}_orders`;
    await ws.file(`1.0/${logs}-template.json`, {
      settings: { number_of_shards: 1 },
      mappings: { properties: { message: { type: "text" } } },
    });
    await ws.file(`1.0/${orders}-index.json`, {
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: { properties: { note: { type: "keyword", ignore_above: 10 } } },
    });
    // The documented way to add a field: it is part of what the index should be.
    await ws.file(`1.1/orders-created-at.json`, {
      method: "PUT",
      path: `/${orders}/_mapping`,
      body: { properties: { created_at: { type: "date" } } },
    });
    await ws.ok();

    const clean = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(clean.report), { checked: 2, resources: [] });
    assert.deepEqual(writes(clean.sent), [], "status --drift sends only reads");
    const cleanText = await ws.ok("validate", "--drift");
    assert.match(cleanText.out, /: no drift: the 2 resource\(s\) of the applied files match them/);

    // By hand: other shards in the template, a changed ignore_above, a field added.
    const live = (await os("GET", `/_index_template/${logs}`)).body.index_templates[0];
    live.index_template.template.settings.index.number_of_shards = "2";
    assert.equal((await os("PUT", `/_index_template/${logs}`, live.index_template)).status, 200);
    const edited = await os("PUT", `/${orders}/_mapping`, {
      properties: { note: { type: "keyword", ignore_above: 20 }, extra: { type: "integer" } },
    });
    assert.equal(edited.status, 200);

    const status = await ws.ok("status", "--drift");
    const lines = status.out.split("\n");
    const at = lines.findIndex((l) => l.includes("drift: 2 of 2 resource(s) differ"));
    assert.ok(at > 0, status.out);
    assert.deepEqual(lines.slice(at + 1, at + 4), [
      `  template ${logs}: template.settings.index.number_of_shards: file "1", cluster "2"`,
      `  index ${orders}: mappings.properties.note.ignore_above: file 10, cluster 20`,
      `  index ${orders}: mappings.properties.extra: in the cluster, not in the file (needs a ` +
      `reindex migration: a field cannot be removed from a live index)`,
    ]);
    if (process.env.DRIFT_SAMPLE) console.log(status.out);

    const json = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(json.report), {
      checked: 2,
      resources: [
        {
          resource: `template ${logs}`,
          file: `1.0/${logs}-template.json`,
          differences: [`template.settings.index.number_of_shards: file "1", cluster "2"`],
          reapply: true,
        },
        {
          resource: `index ${orders}`,
          file: `1.0/${orders}-index.json`,
          differences: [
            "mappings.properties.note.ignore_above: file 10, cluster 20",
            "mappings.properties.extra: in the cluster, not in the file (needs a reindex " +
            "migration: a field cannot be removed from a live index)",
          ],
          reapply: true,
        },
      ],
    });

    const validate = await ws.run("validate", "--drift", "--json");
    assert.equal(validate.code, 1);
    const error = validate.report!.error!;
    assert.equal(error.kind, "invalid");
    assert.equal(error.file, `1.0/${logs}-template.json`);
    assert.match(error.message, new RegExp(`${ws.id}: template ${logs} \\(template\\.settings`));
    assert.match(error.message, new RegExp(`${ws.id}: index ${orders} \\(mappings.*and 1 more\\)`));
    assert.match(error.message, /"migrate --drift"/);
    // Without --drift, validate looks at the files only.
    await ws.ok("validate");

    const before = await records(ws);
    const migrate = await ws.ok("migrate", "--drift", "--json");
    const fixed = driftOf(migrate.report);
    assert.deepEqual(fixed.resources.map((r) => [r.resource, r.result, r.remaining]), [
      [`template ${logs}`, "reapplied", []],
      [`index ${orders}`, "reapplied", [
        "mappings.properties.extra: in the cluster, not in the file (needs a reindex " +
        "migration: a field cannot be removed from a live index)",
      ]],
    ]);
    assert.equal(migrate.report!.connections[0].applied, 0, "no file counts as newly applied");
    const resourceWrites = writes(migrate.sent).filter((s) =>
      !s.path.startsWith(`/${ws.recordsIndex}`)
    );
    assert.deepEqual(resourceWrites.map((s) => `${s.method} ${s.path}`), [
      `PUT /_index_template/${logs}`,
      `PUT /${orders}/_mapping`,
    ]);
    const template = (await os("GET", `/_index_template/${logs}`)).body.index_templates[0];
    assert.equal(template.index_template.template.settings.index.number_of_shards, "1");
    const mapping = (await os("GET", `/${orders}/_mapping`)).body[orders].mappings;
    assert.equal(mapping.properties.note.ignore_above, 10);
    // Same checksum, written again; the lock is gone.
    const after = await records(ws);
    for (const path of [`1.0/${logs}-template.json`, `1.0/${orders}-index.json`]) {
      assert.equal(after.get(path)!.content_hash, before.get(path)!.content_hash);
      assert.notEqual(after.get(path)!.executed_at, before.get(path)!.executed_at, path);
    }
    assert.equal(
      after.get("1.1/orders-created-at.json")!.executed_at,
      before.get("1.1/orders-created-at.json")!.executed_at,
    );
    assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 404);

    const human = await ws.ok("status", "--drift");
    assert.match(human.out, /drift: 1 of 2 resource\(s\) differ/);
    assert.match(
      human.out,
      /mappings\.properties\.extra: in the cluster, not in the file \(needs a reindex migration/,
    );
    const remaining = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(remaining.report).resources.map((r) => [r.resource, r.reapply]), [
      [`index ${orders}`, false],
    ]);
    // Nothing a re-apply can change: migrate --drift takes no lock and writes nothing.
    const again = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(writes(again.sent), []);
    assert.match(driftOf(again.report).resources[0].note!, /cannot change this/);
  });

  it("a clean cluster: no drift, validate exits 0, migrate --drift writes nothing", async () => {
    await using ws = await Workspace.create();
    await ws.file(`${ws.id}_a-template.json`, { index_patterns: [`${ws.id}_a*`], priority: "3" });
    await ws.file(`${ws.id}_b-index.json`, {
      settings: { index: { number_of_replicas: 0, refresh_interval: "5s" }, "index.hidden": false },
      mappings: { dynamic: "strict", properties: { k: { type: "keyword", index: "false" } } },
      aliases: { [`${ws.id}_people`]: { routing: "1" } },
    });
    await ws.ok();
    const validate = await ws.ok("validate", "--drift", "--json");
    assert.deepEqual(driftOf(validate.report), { checked: 2, resources: [] });
    const migrate = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(writes(migrate.sent), []);
    assert.deepEqual(driftOf(migrate.report), { checked: 2, resources: [] });
    // Without --drift, nothing is read beyond the records.
    const plain = await ws.ok("status", "--json");
    assert.equal(plain.report!.connections[0].drift, undefined);
    assert.ok(plain.sent.every((s) => s.path.startsWith(`/${ws.recordsIndex}`)), "records only");
  });

  it("settings: a dynamic one is set again, a static one stays with its reason; a gone index is named, not made again empty", async () => {
    await using ws = await Workspace.create();
    const name = `${ws.id}_s`;
    await ws.file(`${name}-index.json`, {
      settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "5s" },
      mappings: { properties: { a: { type: "keyword" } } },
    });
    await ws.ok();
    // Made again by hand, with two shards and another refresh interval.
    await os("DELETE", `/${name}`);
    await os("PUT", `/${name}`, {
      settings: { number_of_shards: 2, number_of_replicas: 0, refresh_interval: "1s" },
      mappings: { properties: { a: { type: "keyword" } } },
    });
    const status = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(status.report).resources[0].differences, [
      `settings.index.number_of_shards: file "1", cluster "2" (a static setting: it cannot ` +
      `change on a live index; needs a reindex migration)`,
      `settings.index.refresh_interval: file "5s", cluster "1s"`,
    ]);
    const migrate = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(driftOf(migrate.report).resources[0].remaining, [
      `settings.index.number_of_shards: file "1", cluster "2" (a static setting: it cannot ` +
      `change on a live index; needs a reindex migration)`,
    ]);
    const settings = (await os("GET", `/${name}/_settings`)).body[name].settings.index;
    assert.equal(settings.refresh_interval, "5s");

    // A deleted index is not made again, empty, as if nothing had been lost: it is said.
    await os("DELETE", `/${name}`);
    const gone = await ws.ok("status", "--drift", "--json");
    const absent = driftOf(gone.report).resources[0];
    assert.equal(absent.reapply, false);
    assert.match(
      absent.differences[0],
      /^absent from the cluster \(its file would create it again empty/,
    );
    const validate = await ws.run("validate", "--drift");
    assert.equal(validate.code, 1);
    assert.match(
      validate.err,
      /in what is not applied again .*; each says why/,
    );
    assert.ok(!validate.err.includes('"migrate --drift"'), validate.err);
    await ws.ok("migrate", "--drift", "--json");
    assert.equal((await os("HEAD", `/${name}`)).status, 404);
  });

  it("an index whose name became an alias or a data stream is named as such, not repaired", async () => {
    await using ws = await Workspace.create();
    const name = `${ws.id}_n`;
    await ws.file(`${name}-index.json`, { settings: { number_of_replicas: 0 } });
    await ws.ok();
    await os("DELETE", `/${name}`);
    await os("PUT", `/${name}_v2`, {
      aliases: { [name]: {} },
      settings: { number_of_replicas: 0 },
    });
    const alias = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(alias.report).resources[0], {
      resource: `index ${name}`,
      file: `${name}-index.json`,
      differences: [`is no longer an index: the name is an alias of "${name}_v2"`],
      reapply: false,
      note: "applying the file again cannot change this",
    });
    const migrate = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(writes(migrate.sent), []);

    await os("DELETE", `/${name}_v2`);
    // Data streams are X-Pack's in Elasticsearch 7.10: its OSS build answers 405 to them.
    if ((await distribution()).name === "elasticsearch") return;
    await os("PUT", `/_index_template/${name}_ds`, {
      index_patterns: [name],
      data_stream: {},
      priority: 500,
    });
    assert.equal((await os("PUT", `/_data_stream/${name}`)).status, 200);
    const stream = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(stream.report).resources[0].differences, [
      "is no longer an index: the name is a data stream",
    ]);
    await os("DELETE", `/_data_stream/${name}`);
    await os("DELETE", `/_index_template/${name}_ds`);
  });

  // After a rollover (or a move by hand) the alias lives on a newer index: adding it back to the
  // file's index would make it span two, and every write through it fail ("no write index").
  it("never puts back on the file's index an alias that moved to another index", async () => {
    await using ws = await Workspace.create();
    const [name, alias] = [`${ws.id}_logs-000001`, `${ws.id}_logs`];
    await ws.file(`${name}-index.json`, {
      settings: { number_of_replicas: 0 },
      aliases: { [alias]: {} },
    });
    await ws.ok();
    const next = `${ws.id}_logs-000002`;
    // An alias on one index without is_write_index: the rollover moves it to the new index.
    const rolled = await os("POST", `/${alias}/_rollover/${next}`, {
      settings: { number_of_replicas: 0 },
    });
    assert.equal(rolled.status, 200, JSON.stringify(rolled.body));
    assert.deepEqual(Object.keys((await os("GET", `/_alias/${alias}`)).body), [next]);
    await ws.ok("migrate", "--drift", "--json");
    const members = (await os("GET", `/_alias/${alias}`)).body;
    assert.deepEqual(Object.keys(members), [next], JSON.stringify(members));
    assert.equal((await os("PUT", `/${alias}/_doc/1`, { a: 1 })).status, 201, "writes go through");
    const status = await ws.ok("status", "--drift", "--json");
    const drift = driftOf(status.report).resources[0];
    assert.equal(drift.reapply, false);
    assert.match(
      drift.differences.join("\n"),
      new RegExp(`now on "${next}" \\(moved by a rollover`),
    );
  });

  it("never applies a file again over what a later code file changed; it reports it", async () => {
    await using ws = await Workspace.create();
    const logs = `${ws.id}_logs`;
    await ws.file(`1.0/${logs}-template.json`, {
      settings: { number_of_shards: 1 },
      mappings: { properties: { message: { type: "text" } } },
    });
    // The code changes the template on purpose, as the JSON file alone could not.
    await ws.file(
      "2.0/V2__shards.js",
      `export default async (ctx) => {\n` +
        `  const { index_templates: [t] } = await ctx.request("GET", "/_index_template/${logs}");\n` +
        `  t.index_template.template.settings.index.number_of_shards = "2";\n` +
        `  await ctx.request("PUT", "/_index_template/${logs}", t.index_template);\n};\n`,
    );
    await ws.ok();
    const shards = async () =>
      (await os("GET", `/_index_template/${logs}`)).body.index_templates[0].index_template
        .template.settings.index.number_of_shards;
    assert.equal(await shards(), "2");

    const migrate = await ws.ok("migrate", "--drift", "--json");
    assert.deepEqual(driftOf(migrate.report), {
      checked: 1,
      resources: [{
        resource: `template ${logs}`,
        file: `1.0/${logs}-template.json`,
        differences: [`template.settings.index.number_of_shards: file "1", cluster "2"`],
        reapply: false,
        note: `2.0/V2__shards.js ran after 1.0/${logs}-template.json, and may have changed this ` +
          `on purpose (put a change in a new file)`,
      }],
    });
    assert.deepEqual(writes(migrate.sent), [], "no lock, no write");
    assert.equal(await shards(), "2", "what the code did stays");
    const validate = await ws.run("validate", "--drift");
    assert.equal(validate.code, 1);
    assert.match(
      validate.err,
      /is not applied again \(.*template .*number_of_shards.*; 2\.0\/V2__shards\.js ran after/,
    );
  });

  // One index among many losing a shared read alias (no write index anywhere): adding it back
  // makes no alias ambiguous, and is what the file asks.
  it("puts back a read alias that other indices share, none of them its write index", async () => {
    await using ws = await Workspace.create();
    const [name, alias] = [`${ws.id}_day1`, `${ws.id}_all`];
    const others = [`${ws.id}_day2`, `${ws.id}_day3`];
    await ws.file(`${name}-index.json`, {
      settings: { number_of_replicas: 0 },
      aliases: { [alias]: {} },
    });
    await ws.ok();
    // Two others: an alias on one index alone is that index's write path, and is not shared.
    for (const other of others) {
      await os("PUT", `/${other}`, {
        settings: { number_of_replicas: 0 },
        aliases: { [alias]: {} },
      });
    }
    await os("POST", "/_aliases", { actions: [{ remove: { index: name, alias } }] });
    const status = await ws.ok("status", "--drift", "--json");
    assert.equal(driftOf(status.report).resources[0].reapply, true);
    await ws.ok("migrate", "--drift", "--json");
    const members = (await os("GET", `/_alias/${alias}`)).body;
    assert.deepEqual(Object.keys(members).sort(), [name, ...others].sort());
  });

  // Where the alias lives cannot be read: nothing can be said, so nothing is written.
  it("stops, writing nothing, when the read of where an alias lives is refused", async () => {
    const fault = await startFaultServer(
      OPENSEARCH_URL,
      (r): Fault =>
        r.method === "GET" && r.path.startsWith("/_alias/")
          ? { status: 403, body: { error: { type: "security_exception", reason: "no" } } }
          : "forward",
    );
    try {
      await using ws = await Workspace.create({ hosts: [fault.url] });
      const [name, alias] = [`${ws.id}_r1`, `${ws.id}_r`];
      await ws.file(`${name}-index.json`, {
        settings: { number_of_replicas: 0 },
        aliases: { [alias]: {} },
      });
      await ws.ok();
      await os("POST", "/_aliases", { actions: [{ remove: { index: name, alias } }] });
      const run = await ws.run("migrate", "--drift", "--json");
      assert.equal(run.code, 1, run.out);
      assert.match(run.report!.error!.message, /GET \/_alias\/.*HTTP 403|403.*_alias/s);
      assert.deepEqual((await os("GET", `/_alias/${alias}`)).status, 404);
    } finally {
      await fault.close();
    }
  });

  it("a reindex file: its new index and the alias's write index are checked, never re-applied", async () => {
    await using ws = await Workspace.create();
    const v1 = `${ws.id}_orders_v1`, v2 = `${ws.id}_orders_v2`, alias = `${ws.id}_orders`;
    // The index file names the alias the reindex moves: it is left out (its index may be gone).
    await ws.file(`1.0/${v1}-index.json`, {
      settings: { number_of_replicas: 0 },
      aliases: { [alias]: {} },
      mappings: { properties: { a: { type: "keyword" } } },
    });
    await ws.file(`2.0/orders-reindex.json`, {
      alias,
      index: v2,
      settings: { number_of_replicas: 0 },
      mappings: { properties: { a: { type: "keyword" }, b: { type: "long" } } },
    });
    await ws.ok();
    const clean = await ws.ok("status", "--drift", "--json");
    assert.deepEqual(driftOf(clean.report), { checked: 2, resources: [] });
    // By hand: writes go back to the old index, and a field is added to the new one.
    await os("POST", "/_aliases", {
      actions: [
        { add: { index: v1, alias, is_write_index: true } },
        { add: { index: v2, alias, is_write_index: false } },
      ],
    });
    await os("PUT", `/${v2}/_mapping`, { properties: { c: { type: "keyword" } } });
    const status = await ws.ok("status", "--drift", "--json");
    const note = "2.0/orders-reindex.json runs once (put the change in a new file)";
    assert.deepEqual(driftOf(status.report).resources, [
      {
        resource: `index ${v2}`,
        file: "2.0/orders-reindex.json",
        differences: [
          "mappings.properties.c: in the cluster, not in the file (needs a reindex migration: a " +
          "field cannot be removed from a live index)",
        ],
        reapply: false,
        note,
      },
      {
        resource: `alias ${alias}`,
        file: "2.0/orders-reindex.json",
        differences: [`writes to "${v1}", not to "${v2}" (the file's new index)`],
        reapply: false,
        note,
      },
    ]);
    const migrate = await ws.ok("migrate", "--drift");
    assert.match(
      migrate.out,
      new RegExp(`alias ${alias}: not applied again: ${note.replace(/[()]/g, "\\$&")}`),
    );
    assert.deepEqual(writes(migrate.sent), []);
    assert.equal((await ws.run("validate", "--drift")).code, 1);
  });

  it("prints no placeholder value and no password it quotes", async () => {
    await using ws = await Workspace.create({
      migrations: "      placeholders:\n        token: s3cr3t-t0ken\n",
    });
    const name = `${ws.id}_m`;
    await ws.file(`${name}-template.json`, {
      index_patterns: [`${name}*`],
      // A password longer than a line shows: cut, it would lose the "@" that marks it.
      _meta: {
        token: "${token}",
        hook: `https://bot:hunter2${"x".repeat(100)}@h.example/?api_key=k3y`,
      },
    });
    await ws.ok();
    await os("PUT", `/_index_template/${name}`, {
      index_patterns: [`${name}*`],
      _meta: { token: "other-s3cr3t-t0ken", hook: "https://bot:hunter3@hooks.example/x" },
    });
    for (const args of [["status", "--drift"], ["status", "--drift", "--json"]]) {
      const run = await ws.ok(...args);
      const all = run.out + run.err;
      for (const secret of ["s3cr3t-t0ken", "hunter2", "hunter3", "k3y"]) {
        assert.ok(!all.includes(secret), `${args.join(" ")} prints ${secret}:\n${all}`);
      }
      const expected = `_meta.token: file "\${token}", cluster "other-\${token}"`;
      if (run.report) {
        assert.ok(driftOf(run.report).resources[0].differences.includes(expected));
      } else assert.ok(all.includes(expected), all);
    }
  });

  // A success is returned as the host sent it: a host (or a proxy) that echoes the request's token
  // into a 200 must not have it printed by the drift lines that quote the cluster's values.
  it("prints no credential of the connection that a cluster's value holds", async () => {
    const token = "Tok3n-Echoed-0123456789";
    await using ws = await Workspace.create({ settings: `    bearer_token: ${token}\n` });
    const name = `${ws.id}_e`;
    await ws.file(`${name}-template.json`, { index_patterns: [`${name}*`], _meta: { note: "a" } });
    await ws.ok();
    await os("PUT", `/_index_template/${name}`, {
      index_patterns: [`${name}*`],
      _meta: { note: `Bearer ${token}` },
    });
    for (const args of [["status", "--drift"], ["status", "--drift", "--json"]]) {
      const run = await ws.ok(...args);
      const all = run.out + run.err;
      assert.ok(!all.includes(token), `${args.join(" ")} prints the token:\n${all}`);
      assert.ok(
        all.includes(`_meta.note: file \\"a\\", cluster \\"Bearer ***\\"`) ||
          all.includes(`_meta.note: file "a", cluster "Bearer ***"`),
        all,
      );
    }
  });

  it("a read the cluster refuses stops the run, naming the resource; nothing is written", async () => {
    await using ws = await Workspace.create();
    await ws.file(`${ws.id}_r-template.json`, { index_patterns: [`${ws.id}_r*`] });
    await ws.ok();
    for (const status of [403, 503]) {
      const refusing: TransportFactory = async (options) => {
        const transport = await runtimeTransport(options);
        return {
          close: () => transport.close(),
          fetch: (url, init) =>
            url.pathname.startsWith("/_index_template/")
              ? Promise.resolve(
                new Response(
                  JSON.stringify({ error: { type: "security_exception", reason: "no" } }),
                  { status },
                ),
              )
              : transport.fetch(url, init),
        };
      };
      const result = await run(ws, refusing, "migrate", "--drift", "--json");
      assert.equal(result.code, 1);
      assert.equal(result.report!.error!.kind, "failure");
      assert.match(
        result.report!.error!.message,
        new RegExp(
          `GET /_index_template/${ws.id}_r, HTTP ${status}: the drift check cannot read ` +
            `template ${ws.id}_r: security_exception: no`,
        ),
      );
      assert.deepEqual(writes(result.sent), []);
    }
  });

  it("policies: ISM's own keys and defaults are no drift; a hand edit is, and is applied again", async () => {
    await using ws = await Workspace.create();
    const ism = new Map<string, Json>();
    const transport = withIsm(ism);
    const policy = {
      policy: {
        description: "hot then delete",
        default_state: "hot",
        states: [
          {
            name: "hot",
            actions: [{ rollover: { min_doc_count: 5 } }],
            transitions: [{ state_name: "delete", conditions: { min_index_age: "30d" } }],
          },
          { name: "delete", actions: [{ delete: {} }] },
        ],
      },
    };
    await ws.file("hot-policy.json", policy);
    assert.equal((await run(ws, transport)).code, 0);
    const clean = await run(ws, transport, "status", "--drift", "--json");
    assert.deepEqual(driftOf(clean.report), { checked: 1, resources: [] });

    // By hand: the transition now waits 7 days.
    const live = ism.get("hot")!;
    const states = (live.policy as Json).states as Json[];
    ((states[0].transitions as Json[])[0].conditions as Json).min_index_age = "7d";
    const status = await run(ws, transport, "status", "--drift", "--json");
    assert.deepEqual(driftOf(status.report).resources, [{
      resource: "policy hot",
      file: "hot-policy.json",
      differences: [
        `policy.states[0].transitions[0].conditions.min_index_age: file "30d", cluster "7d"`,
      ],
      reapply: true,
    }]);
    const validate = await run(ws, transport, "validate", "--drift");
    assert.equal(validate.code, 1);
    assert.match(
      validate.err,
      /invalid: the cluster differs from the applied files \(.*policy hot/,
    );

    const migrate = await run(ws, transport, "migrate", "--drift", "--json");
    assert.equal(migrate.code, 0, migrate.out);
    assert.deepEqual(driftOf(migrate.report).resources[0].remaining, []);
    assert.ok(
      writes(migrate.sent).some((s) => s.path.startsWith("/_plugins/_ism/policies/hot?if_seq_no=")),
    );
    const after = (ism.get("hot")!.policy as Json).states as Json[];
    assert.equal(((after[0].transitions as Json[])[0].conditions as Json).min_index_age, "30d");
    assert.deepEqual(
      driftOf((await run(ws, transport, "status", "--drift", "--json")).report).resources,
      [],
    );
  });

  it("ILM policies (Elasticsearch): ILM's defaults are no drift; a hand edit is, and is applied again", async () => {
    await using ws = await Workspace.create();
    const ilm = new Map<string, Json>();
    const transport = withIlm(ilm);
    await ws.file("logs-policy.json", {
      phases: {
        hot: { actions: { rollover: { max_age: "1d" } } },
        delete: { min_age: "30d", actions: { delete: {} } },
      },
    });
    assert.equal((await run(ws, transport)).code, 0);
    const clean = await run(ws, transport, "status", "--drift", "--json");
    assert.deepEqual(driftOf(clean.report), { checked: 1, resources: [] });

    ((ilm.get("logs")!.phases as Json).delete as Json).min_age = "7d";
    const status = await run(ws, transport, "status", "--drift", "--json");
    assert.deepEqual(driftOf(status.report).resources, [{
      resource: "policy logs",
      file: "logs-policy.json",
      differences: [`policy.phases.delete.min_age: file "30d", cluster "7d"`],
      reapply: true,
    }]);
    const migrate = await run(ws, transport, "migrate", "--drift", "--json");
    assert.equal(migrate.code, 0, migrate.out);
    assert.deepEqual(driftOf(migrate.report).resources[0].remaining, []);
    assert.ok(
      writes(migrate.sent).some((s) => s.method === "PUT" && s.path === "/_ilm/policy/logs"),
    );
    assert.equal(((ilm.get("logs")!.phases as Json).delete as Json).min_age, "30d");
  });
});
