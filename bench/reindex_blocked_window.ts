/**
 * How long a reindex blocks writes through the alias, against the index's size, on the three-node
 * test cluster (tools/opensearch_cluster.sh: 3 shards, 1 replica), while a writer indexes, updates
 * and deletes through the alias the whole time, as an application would (retrying a refused write
 * after 20 ms).
 *
 *   deno run -A bench/reindex_blocked_window.ts [sizes, default 50000,200000,500000]
 *
 * Per size it prints the window the writer saw (its first refused write to the first write
 * accepted after the last refusal), the runner's own `writeBlockedMs`, the copy's time, and the
 * window against the window at the smallest size: a window that grows with the index is a copy
 * made under the block. Then it checks every write the cluster acknowledged through the alias:
 * each created or updated document is in the new index as written, each deleted one is not, and
 * the new index holds nothing else; it stops at the first one wrong.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runCli } from "../src/migrate/cli/cli_main.ts";
import { startAliasWriter } from "../tests/migrate/search/alias_writer.ts";
import { node, NODES, seedIndex, waitForNodes } from "../tests/migrate/search/three_nodes.ts";

const sizes = (process.argv[2] ?? "50000,200000,500000").split(",").map(Number);
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("reindex_blocked_window.ts: sizes are positive whole numbers, comma-separated");
  process.exit(2);
}

async function measure(size: number) {
  const id = `blk${crypto.randomUUID().slice(0, 6)}`;
  const [alias, v1, v2] = [`${id}-p`, `${id}-p-v1`, `${id}-p-v2`];
  const base = await mkdtemp(join(tmpdir(), "thaw-blocked-"));
  const config = join(base, "config"), root = join(base, "migrations");
  await mkdir(config, { recursive: true });
  await mkdir(join(root, id), { recursive: true });
  await writeFile(
    join(config, "application.yml"),
    `search:\n  - name: ${id}\n    hosts: [${NODES.map((u) => `"${u}"`).join(", ")}]\n` +
      `    migrations: {enabled: true, index: fm_${id}}\n`,
  );
  await writeFile(
    join(root, id, "1-reindex.json"),
    JSON.stringify({ alias, index: v2, settings: { number_of_shards: 3, number_of_replicas: 1 } }),
  );
  try {
    await seedIndex(v1, alias, size);
    const writer = startAliasWriter(
      (method, path, body) => node(NODES[0], method, path, body),
      alias,
      size,
      "d",
    );
    let out = "";
    const code = await runCli(["-m", "search", "-c", config, "--migrations", root, "--json"], {
      out: (text) => out += text,
      err: () => {},
      env: (name) => process.env[name],
      identity: { host: "bench", pid: process.pid },
    });
    await writer.stop();
    assert.equal(code, 0, out);
    assert.equal(writer.failed, 0, "a write failed other than by the block");
    const reindex = JSON.parse(out).connections[0].files[0].reindex;
    // Every acknowledged write, checked in the new index: throws on the first one wrong.
    await writer.checkMoved(v2);
    return {
      size,
      windowMs: writer.windowMs,
      refused: writer.refused,
      writes: writer.writes,
      blockedMs: reindex.writeBlockedMs as number,
      copyMs: reindex.copyMs as number,
    };
  } finally {
    await node(NODES[0], "DELETE", `/${id}-*,fm_${id}`);
    await rm(base, { recursive: true, force: true });
  }
}

await waitForNodes(3, true);
console.log(
  `Reindex on the three-node cluster (${NODES[0]}..): the write block against the index's size`,
);
const results = [];
for (const size of sizes) {
  const r = await measure(size);
  results.push(r);
  const ratio = r.windowMs / results[0].windowMs;
  console.log(
    `${String(size).padStart(8)} docs: writes blocked ${(r.windowMs / 1000).toFixed(2)} s as the ` +
      `writer saw it (${r.refused} refusals; ${ratio.toFixed(2)}x the ${sizes[0]}-document ` +
      `window), runner says ${(r.blockedMs / 1000).toFixed(2)} s; copy ${
        (r.copyMs / 1000).toFixed(2)
      } s; ${r.writes} writes acknowledged, each found as written after the swap`,
  );
}
