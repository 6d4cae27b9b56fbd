import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { propertyOptions } from "../../property.ts";
import { os, type Run, Workspace } from "./cluster.ts";

// A placeholder's value may be a secret: every printed request (the --json report, the dry-run
// plan, the progress lines) and every message shows its `${name}` instead, as error messages did.

const created: Workspace[] = [];
after(async () => {
  for (const ws of created) await os("DELETE", `/${ws.recordsIndex}`);
});

/** `text` as a YAML double-quoted scalar, every character outside printable ASCII escaped. */
function yamlString(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0)!;
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (code >= 0x20 && code <= 0x7e) out += c;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `"${out}"`;
}

/**
 * A workspace whose connection has the placeholders `api_key` (= `value`) and `api_key_full`
 * (a longer value holding it), and one request file quoting both, and the value written out.
 */
async function workspaceFor(value: string): Promise<Workspace> {
  const ws = await Workspace.create({
    migrations: `      placeholders:\n        api_key: ${yamlString(value)}\n` +
      `        api_key_full: ${yamlString(`pre-${value}-post`)}\n`,
  });
  created.push(ws);
  await ws.file("V1__check.json", {
    method: "GET",
    path: `/_cluster/health?filter_path=\${api_key},\${api_key_full},status,${value}`,
  });
  return ws;
}

/**
 * Every way the CLI prints a run's requests: the dry-run plan and its --json report, a migrate's
 * progress lines, status --json, and a migrate --json that applies a second file.
 */
async function everyOutput(ws: Workspace): Promise<Run[]> {
  const runs = [
    await ws.run("--dry-run"),
    await ws.run("--dry-run", "--json"),
    await ws.run(),
    await ws.run("status", "--json"),
  ];
  await ws.file("V2__again.json", {
    method: "GET",
    path: "/_cluster/health?filter_path=${api_key}",
  });
  runs.push(await ws.run("--json"));
  return runs;
}

/** Each way `value` could be written: as it is, URL-encoded, JSON-escaped, control-escaped. */
function forms(value: string): string[] {
  const escaped = value.replace(
    // deno-lint-ignore no-control-regex -- the human output's escaping
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [
    ...new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), escaped]),
  ];
}

function printed(runs: readonly Run[]): string {
  return runs.map((r) => `${r.out}\n${r.err}`).join("\n");
}

function assertMasked(runs: readonly Run[], value: string): void {
  const text = printed(runs);
  for (const form of forms(value)) {
    assert.ok(!text.includes(form), `${JSON.stringify(form)} printed:\n${text}`);
  }
  assert.ok(text.includes("${api_key}"), `\${api_key} not printed:\n${text}`);
}

// Characters a value may mix: regular-expression and JSON specials, controls, spaces, and
// characters outside ASCII, astral ones included.
const SPECIAL = [
  ..."$&.*+?^()[]{}|\\/\"'`%#,:;=@!~<>-_ ",
  "\n",
  "\t",
  "\u0000",
  "\u001b",
  "\u0085",
];
const UNICODE = ["é", "ß", "Ω", "€", "中", "😀", "\u2028", "\u202e", "\u00a0", "ﬀ"];
const CHARACTER = fc.oneof(
  fc.constantFrom(...SPECIAL),
  fc.constantFrom(...UNICODE),
  fc.constantFrom(..."aZ09"),
  fc.integer({ min: 0xa1, max: 0x10ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c)),
);
// A value holding a character beyond ASCII (no message of the runner or the node has one), so
// that finding it in the output is a leak and never a word that happens to match. `${` would be
// a reference to an environment variable in the configuration.
const VALUE = fc.string({ unit: CHARACTER, minLength: 3, maxLength: 12 })
  .filter((v) => /[\u00a1-\u{10ffff}]/u.test(v) && !v.includes("${"));

describe("a placeholder's value is never printed", () => {
  it("the request in --json, the dry-run plan and the progress lines show ${name}", async () => {
    await using ws = await workspaceFor("TopS3cretValue");
    const runs = await everyOutput(ws);
    assert.deepEqual(runs.map((r) => r.code), [0, 0, 0, 0, 0], printed(runs));
    const request = "GET /_cluster/health?filter_path=${api_key},${api_key_full},status,${api_key}";
    assert.ok(runs[0].out.includes(`apply    V1__check.json -> ${request}`), runs[0].out);
    assert.equal(runs[1].report!.connections[0].files[0].request, request);
    assert.match(
      runs[2].err,
      /\[1\/1\] apply V1__check\.json -> GET \/_cluster\/health\?filter_path=\$\{api_key\},/,
    );
    assert.equal(runs[3].report!.connections[0].files[0].request, request);
    assert.deepEqual(
      runs[4].report!.connections[0].files.map((f) => [f.request, f.result]),
      [[request, undefined], ["GET /_cluster/health?filter_path=${api_key}", "sent"]],
    );
    assertMasked(runs, "TopS3cretValue");
  });

  it("whatever the value: special characters, unicode, a value inside another", async () => {
    await fc.assert(
      fc.asyncProperty(VALUE, async (value) => {
        await using ws = await workspaceFor(value);
        assertMasked(await everyOutput(ws), value);
      }),
      propertyOptions(12),
    );
  });

  it("a value the planner refuses in a path is not quoted by the refusal", async () => {
    await using ws = await workspaceFor("sécret with spaces");
    const runs = [await ws.run(), await ws.run("--json")];
    assert.deepEqual(runs.map((r) => r.code), [1, 1]);
    assert.match(runs[1].report!.error!.message, /must not hold backslashes, spaces/);
    assertMasked(runs, "sécret with spaces");
  });

  it("a value of one or two characters is shown: masking it would garble every message", async () => {
    await using ws = await workspaceFor("é");
    const run = await ws.run("--dry-run", "--json");
    assert.equal(
      run.report!.connections[0].files[0].request,
      "GET /_cluster/health?filter_path=é,${api_key_full},status,é",
    );
  });
});

describe("--drift names a resource with a placeholder's value as ${name}", () => {
  it("in the report, the human lines and the notices of migrate --drift", async () => {
    // Not the workspace's id: the connection's own name is printed, and holds no placeholder.
    const tenant = `zq${crypto.randomUUID().slice(0, 6)}`;
    await using ws = await Workspace.create({
      migrations: `      placeholders:\n        tenant: ${tenant}\n`,
    });
    created.push(ws);
    const v1 = `${ws.id}_v1`;
    const alias = `${ws.id}_${tenant}`, v2 = `${ws.id}_${tenant}_v2`;
    try {
      await driftedByHand(ws, tenant, v1, v2, alias);
    } finally {
      for (const index of [v1, v2]) await os("DELETE", `/${index}`);
    }
  });
});

/** Applies an index file and a reindex file of `tenant`'s alias, then edits both resources. */
async function driftedByHand(
  ws: Workspace,
  tenant: string,
  v1: string,
  v2: string,
  alias: string,
): Promise<void> {
  await ws.file(`1.0/${v1}-index.json`, {
    settings: { number_of_replicas: 0 },
    aliases: { [`${ws.id}_\${tenant}`]: {} },
  });
  await ws.file("2.0/orders-reindex.json", {
    alias: `${ws.id}_\${tenant}`,
    index: `${ws.id}_\${tenant}_v2`,
    settings: { number_of_replicas: 0 },
    mappings: { properties: { a: { type: "keyword" } } },
  });
  const first = await ws.run();
  assert.equal(first.code, 0, `${first.out}\n${first.err}`);
  // By hand: writes go back to the old index, and a field is added to the new one.
  await os("POST", "/_aliases", {
    actions: [
      { add: { index: v1, alias, is_write_index: true } },
      { add: { index: v2, alias, is_write_index: false } },
    ],
  });
  await os("PUT", `/${v2}/_mapping`, { properties: { c: { type: "keyword" } } });
  const runs = [
    await ws.run("status", "--drift"),
    await ws.run("status", "--drift", "--json"),
    await ws.run("validate", "--drift", "--json"),
    await ws.run("migrate", "--drift"),
    await ws.run("migrate", "--drift", "--json"),
  ];
  assert.deepEqual(runs.map((r) => r.code), [0, 0, 1, 0, 0], printed(runs));
  const drift = runs[1].report!.connections[0].drift!;
  assert.deepEqual(
    drift.resources.map((r) => r.resource),
    [`index ${ws.id}_\${tenant}_v2`, `alias ${ws.id}_\${tenant}`],
  );
  assert.match(runs[0].out, new RegExp(`alias ${ws.id}_\\$\\{tenant\\}`));
  const text = printed(runs);
  assert.ok(!text.includes(tenant), `${tenant} printed:\n${text}`);
}

describe("migrate --drift applies again a resource whose name shows as ${name}", () => {
  it("finds the file of the masked name, and rewrites its record", async () => {
    const tenant = `zq${crypto.randomUUID().slice(0, 6)}`;
    await using ws = await Workspace.create({
      migrations: `      placeholders:\n        tenant: ${tenant}\n`,
    });
    created.push(ws);
    // A template's name comes from its file's: the value is written there as it is.
    const name = `${ws.id}_${tenant}`;
    try {
      await ws.file(`${name}-template.json`, { index_patterns: [`${name}*`], priority: 3 });
      assert.equal((await ws.run()).code, 0);
      await os("PUT", `/_index_template/${name}`, { index_patterns: [`${name}*`], priority: 4 });
      const migrate = await ws.run("migrate", "--drift", "--json");
      assert.equal(migrate.code, 0, migrate.out + migrate.err);
      const [report] = migrate.report!.connections[0].drift!.resources;
      assert.equal(report.resource, `template ${ws.id}_\${tenant}`);
      assert.equal(report.result, "reapplied");
      assert.deepEqual(report.remaining, []);
    } finally {
      await os("DELETE", `/_index_template/${name}`);
    }
  });
});
