// A migrations folder made of symbolic links, as Kubernetes mounts a ConfigMap, run end to end
// by the CLI on the real OpenSearch node.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { recordId } from "../../../src/migrate/search/history/migration_record.ts";
import { os, Workspace } from "./cluster.ts";

/** Writes `files` into a new timestamped folder of `mount`, as kubelet does before switching. */
async function stampFolder(mount: string, stamp: string, files: Record<string, unknown>) {
  await mkdir(join(mount, stamp), { recursive: true });
  for (const [key, content] of Object.entries(files)) {
    await writeFile(join(mount, stamp, key), JSON.stringify(content, null, 2));
  }
}

describe("search runner over a ConfigMap-shaped folder (real node)", () => {
  const made: string[] = [];
  after(async () => {
    for (const path of made.splice(0)) await os("DELETE", path);
  });

  it("records the key names, and re-applies only the file a ConfigMap update changed", async () => {
    await using ws = await Workspace.create();
    const mount = join(ws.root, ws.id);
    const a = `${ws.id}-a-template.json`, b = `${ws.id}-b-template.json`;
    made.push(`/_index_template/${ws.id}-a`, `/_index_template/${ws.id}-b`, `/${ws.recordsIndex}`);
    const first = "..2026_11_22_10_00_00.123456789";
    await stampFolder(mount, first, {
      [a]: { index_patterns: [`${ws.id}-a*`], priority: 1 },
      [b]: { index_patterns: [`${ws.id}-b*`], priority: 1 },
    });
    await symlink(first, join(mount, "..data"));
    for (const key of [a, b]) await symlink(`..data/${key}`, join(mount, key));

    const run = await ws.ok("--json");
    const files = run.report!.connections[0].files;
    assert.deepEqual(files.map((f) => [f.path, f.action]), [[a, "apply"], [b, "apply"]]);
    assert.equal((await os("GET", `/_index_template/${ws.id}-a`)).status, 200);
    assert.equal((await os("GET", `/_index_template/${ws.id}-b`)).status, 200);
    const records = await os("POST", `/${ws.recordsIndex}/_search`, {
      query: { exists: { field: "migration_path" } },
    });
    assert.deepEqual(
      records.body.hits.hits.map((h: { _source: { migration_path: string } }) =>
        h._source.migration_path
      ).sort(),
      [a, b],
      "one record per key, named by the key, none under ..data or the timestamped folder",
    );
    const record = await os("GET", `/${ws.recordsIndex}/_doc/${await recordId(ws.id, a)}`);
    assert.equal(record.status, 200);

    // The update as kubelet makes it: a new timestamped folder, a new link renamed over `..data`
    // in one step, then the old folder removed. The per-key links never change.
    const second = "..2026_11_22_10_05_00.987654321";
    await stampFolder(mount, second, {
      [a]: { index_patterns: [`${ws.id}-a*`], priority: 1 },
      [b]: { index_patterns: [`${ws.id}-b*`], priority: 2 },
    });
    await symlink(second, join(mount, "..data_tmp"));
    await rename(join(mount, "..data_tmp"), join(mount, "..data"));
    await rm(join(mount, first), { recursive: true });

    const again = await ws.ok("--json");
    const report = again.report!.connections[0];
    assert.deepEqual(report.files.map((f) => [f.path, f.action]), [[a, "skip"], [b, "reapply"]]);
    assert.equal(report.applied, 1);
    const template = (await os("GET", `/_index_template/${ws.id}-b`)).body.index_templates[0];
    assert.equal(template.index_template.priority, 2);
    assert.equal((await ws.ok("--json")).report!.connections[0].skipped, 2);
  });
});
