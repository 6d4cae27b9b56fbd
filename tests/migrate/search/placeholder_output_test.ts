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
    const ws = await workspaceFor("TopS3cretValue");
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
        assertMasked(await everyOutput(await workspaceFor(value)), value);
      }),
      propertyOptions(12),
    );
  });

  it("a value the planner refuses in a path is not quoted by the refusal", async () => {
    const ws = await workspaceFor("sécret with spaces");
    const runs = [await ws.run(), await ws.run("--json")];
    assert.deepEqual(runs.map((r) => r.code), [1, 1]);
    assert.match(runs[1].report!.error!.message, /must not hold backslashes, spaces/);
    assertMasked(runs, "sécret with spaces");
  });

  it("a value of one or two characters is shown: masking it would garble every message", async () => {
    const ws = await workspaceFor("é");
    const run = await ws.run("--dry-run", "--json");
    assert.equal(
      run.report!.connections[0].files[0].request,
      "GET /_cluster/health?filter_path=é,${api_key_full},status,é",
    );
  });
});
