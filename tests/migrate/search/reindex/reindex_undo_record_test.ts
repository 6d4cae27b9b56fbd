// A reindex undo goes back only into the index the reindex moved the alias off, as the reindex's
// record names it (its name and index.uuid): an undo file naming another index that exists would
// have it overwritten and pruned. Through the command line, against the real node.
import assert from "node:assert/strict";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { os, type Sent, Workspace, writes } from "../cluster.ts";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests read freely
type Json = any;

/** Creates `index` (one shard, no replica) holding `count` documents, `alias` on it if given. */
async function seed(index: string, count: number, alias?: string): Promise<void> {
  const created = await os("PUT", `/${index}`, {
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    ...(alias === undefined ? {} : { aliases: { [alias]: { is_write_index: true } } }),
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    lines.push(JSON.stringify({ create: { _id: `${index}-${n}` } }), JSON.stringify({ n }));
  }
  const bulk = await os("POST", `/${index}/_bulk?refresh=true`, lines.join("\n") + "\n");
  assert.equal(bulk.body.errors, false);
}

async function count(index: string): Promise<number> {
  await os("POST", `/${index}/_refresh`);
  const counted = await os("GET", `/${index}/_count`);
  assert.equal(counted.status, 200, JSON.stringify(counted.body));
  return counted.body.count;
}

async function aliasIndices(alias: string): Promise<string[]> {
  return Object.keys((await os("GET", `/_alias/${alias}`)).body ?? {}).sort();
}

async function uuidOf(index: string): Promise<string> {
  const settings = await os("GET", `/${index}/_settings/index.uuid`);
  return settings.body[index].settings.index.uuid;
}

// The writes a run sent outside the records index: what it did to the cluster.
function changes(ws: Workspace, sent: readonly Sent[]): string[] {
  return writes(sent).filter((s) => !s.path.startsWith(`/${ws.recordsIndex}`)).map((s) =>
    `${s.method} ${s.path}`
  );
}

/** The record of `path`, as the records index holds it. */
async function recordOf(ws: Workspace, path: string): Promise<Json> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    query: { term: { migration_path: path } },
  });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body.hits.hits[0]?._source;
}

/**
 * `<id>-hr` on `<id>-hr-v1` (50 documents), moved to `<id>-hr-v2` by `V1__x-reindex.json` in its
 * usual form (no `source`); `<id>-precious`, an unrelated index of 300 documents.
 */
async function reindexed() {
  const ws = await Workspace.create();
  const [alias, v1, v2, precious] = [
    `${ws.id}-hr`,
    `${ws.id}-hr-v1`,
    `${ws.id}-hr-v2`,
    `${ws.id}-precious`,
  ];
  await seed(v1, 50, alias);
  await seed(precious, 300);
  await ws.file("V1__x-reindex.json", {
    alias,
    index: v2,
    settings: { number_of_shards: 1, number_of_replicas: 0 },
  });
  await ws.ok();
  assert.deepEqual(await aliasIndices(alias), [v2]);
  const cleanup = async () => {
    for (const index of [ws.recordsIndex, v1, v2, precious]) await os("DELETE", `/${index}`);
  };
  return {
    ws,
    alias,
    v1,
    v2,
    precious,
    cleanup,
    [Symbol.asyncDispose]: () => ws[Symbol.asyncDispose](),
  };
}

/** Nothing changed: precious keeps its 300 documents, outside the alias, which is still on v2. */
async function assertUntouched(
  r: Awaited<ReturnType<typeof reindexed>>,
  run: { code: number; out: string; err: string; sent: Sent[] },
): Promise<void> {
  assert.deepEqual(changes(r.ws, run.sent), [], "nothing written to the cluster");
  assert.equal(await count(r.precious), 300);
  assert.deepEqual(await aliasIndices(r.alias), [r.v2]);
  assert.equal(await count(r.v2), 50);
  assert.equal(await count(r.v1), 50);
}

describe("a reindex undo naming another index than the one the reindex moved off", () => {
  it("records the index the reindex moved the alias off, by name and index.uuid", async () => {
    await using r = await reindexed();
    try {
      const record = await recordOf(r.ws, "V1__x-reindex.json");
      assert.deepEqual(record.previous_index, { name: r.v1, uuid: await uuidOf(r.v1) });
    } finally {
      await r.cleanup();
    }
  });

  it("is refused before anything is written, naming the undo file and both indices", async () => {
    await using r = await reindexed();
    try {
      await r.ws.file("U1__x-reindex.json", { alias: r.alias, index: r.precious });
      // The dry run refuses it as the run does.
      const dry = await r.ws.run("undo", "--dry-run");
      assert.equal(dry.code, 1, dry.out + dry.err);
      assert.match(dry.err, new RegExp(`names "${r.precious}"`));
      const run = await r.ws.run("undo");
      assert.equal(run.code, 1, run.out + run.err);
      assert.match(run.err, /U1__x-reindex\.json/);
      assert.match(run.err, new RegExp(`names "${r.precious}"`));
      assert.match(run.err, new RegExp(`moved the alias "${r.alias}" off "${r.v1}"`));
      await assertUntouched(r, run);
      // The undo file fixed, the undo goes back into the previous index.
      await r.ws.file("U1__x-reindex.json", { alias: r.alias, index: r.v1 });
      // The dry run says which index the undo would overwrite and prune.
      const fixed = await r.ws.ok("undo", "--dry-run");
      assert.match(fixed.out, new RegExp(`${r.v1} \\(overwritten and pruned\\)`));
      // In the report, the request is the request, and the index overwritten is named beside it.
      const json = await r.ws.ok("undo", "--dry-run", "--json");
      const row = json.report!.connections[0].files.find((f) => f.action === "undo");
      assert.equal(row?.request, "POST /_reindex");
      assert.equal(row?.overwrites, r.v1);
      await r.ws.ok("undo");
      assert.deepEqual(await aliasIndices(r.alias), [r.v1]);
      assert.equal(await count(r.precious), 300);
    } finally {
      await r.cleanup();
    }
  });

  it("is refused before a newer version is undone (undo --target)", async () => {
    await using r = await reindexed();
    const later = `${r.ws.id}-later`;
    try {
      await r.ws.file("V2__later.json", {
        method: "PUT",
        path: `/${later}`,
        body: { settings: { number_of_shards: 1, number_of_replicas: 0 } },
      });
      await r.ws.file("U2__later.json", { method: "DELETE", path: `/${later}` });
      await r.ws.ok();
      await r.ws.file("U1__x-reindex.json", { alias: r.alias, index: r.precious });
      // The dry run refuses it too, naming the undo file.
      const dry = await r.ws.run("undo", "--target", "0", "--dry-run");
      assert.equal(dry.code, 1, dry.out + dry.err);
      assert.match(dry.err, /U1__x-reindex\.json/);
      const run = await r.ws.run("undo", "--target", "0");
      assert.equal(run.code, 1, run.out + run.err);
      assert.match(run.err, /U1__x-reindex\.json/);
      assert.match(run.err, new RegExp(`names "${r.precious}"`));
      // V2 is not undone: the plan is refused whole.
      assert.equal((await os("HEAD", `/${later}`)).status, 200);
      await assertUntouched(r, run);
    } finally {
      await os("DELETE", `/${later}`);
      await r.cleanup();
    }
  });

  it("keeps the previous index in the record when the file moves folder or is repaired", async () => {
    await using r = await reindexed();
    try {
      const expected = { name: r.v1, uuid: await uuidOf(r.v1) };
      // Moved to another folder: its record is moved with it.
      const folder = join(r.ws.root, r.ws.id);
      await mkdir(join(folder, "1.0"));
      await rename(join(folder, "V1__x-reindex.json"), join(folder, "1.0", "V1__x-reindex.json"));
      await r.ws.ok();
      const moved = "1.0/V1__x-reindex.json";
      assert.deepEqual((await recordOf(r.ws, moved)).previous_index, expected);
      // Edited, then repaired: the record is written at the new checksum, nothing ran.
      await r.ws.file(moved, {
        alias: r.alias,
        index: r.v2,
        settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "2s" },
      });
      await r.ws.ok("repair");
      assert.deepEqual((await recordOf(r.ws, moved)).previous_index, expected);
      // The undo goes back into the previous index, which the record still names.
      await r.ws.file("1.0/U1__x-reindex.json", { alias: r.alias, index: r.v1 });
      await r.ws.ok("undo");
      assert.deepEqual(await aliasIndices(r.alias), [r.v1]);
    } finally {
      await r.cleanup();
    }
  });

  it("refuses the previous index's name on another index (deleted and made again)", async () => {
    await using r = await reindexed();
    try {
      const before = await uuidOf(r.v1);
      assert.equal((await os("DELETE", `/${r.v1}`)).status, 200);
      await seed(r.v1, 10);
      await r.ws.file("U1__x-reindex.json", { alias: r.alias, index: r.v1 });
      const run = await r.ws.run("undo");
      assert.equal(run.code, 1, run.out + run.err);
      assert.match(run.err, /U1__x-reindex\.json/);
      assert.match(run.err, new RegExp(`index\\.uuid ${await uuidOf(r.v1)}`));
      assert.match(run.err, new RegExp(before));
      assert.deepEqual(changes(r.ws, run.sent), []);
      assert.equal(await count(r.v1), 10);
      assert.deepEqual(await aliasIndices(r.alias), [r.v2]);
    } finally {
      await r.cleanup();
    }
  });

  it("without the previous index in the record (an earlier version's), refuses until index_uuid confirms it", async () => {
    await using r = await reindexed();
    try {
      // The record as Thaw versions before this one wrote it.
      await os("POST", `/${r.ws.recordsIndex}/_refresh`);
      const found = await os("POST", `/${r.ws.recordsIndex}/_search`, {
        query: { term: { migration_path: "V1__x-reindex.json" } },
      });
      const hit = found.body.hits.hits[0];
      const { previous_index: _, ...earlier } = hit._source;
      const put = await os(
        "PUT",
        `/${r.ws.recordsIndex}/_doc/${encodeURIComponent(hit._id)}?refresh=true`,
        earlier,
      );
      assert.equal(put.status, 200, JSON.stringify(put.body));
      await r.ws.file("U1__x-reindex.json", { alias: r.alias, index: r.precious });
      const run = await r.ws.run("undo");
      assert.equal(run.code, 1, run.out + run.err);
      assert.match(run.err, /U1__x-reindex\.json/);
      assert.match(run.err, /does not say which index/);
      assert.match(run.err, /"index_uuid"/);
      await assertUntouched(r, run);
      // A uuid that is not the named index's is refused too.
      await r.ws.file("U1__x-reindex.json", {
        alias: r.alias,
        index: r.v1,
        index_uuid: await uuidOf(r.precious),
      });
      const wrong = await r.ws.run("undo");
      assert.equal(wrong.code, 1, wrong.out + wrong.err);
      assert.match(wrong.err, /"index_uuid"/);
      await assertUntouched(r, wrong);
      // Confirmed with the index's own uuid, the undo runs.
      await r.ws.file("U1__x-reindex.json", {
        alias: r.alias,
        index: r.v1,
        index_uuid: await uuidOf(r.v1),
      });
      await r.ws.ok("undo");
      assert.deepEqual(await aliasIndices(r.alias), [r.v1]);
      assert.equal(await count(r.v1), 50);
      assert.equal(await count(r.precious), 300);
    } finally {
      await r.cleanup();
    }
  });
});
