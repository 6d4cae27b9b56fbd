// What the reindex tests on the real node share: an alias seeded on its first index, a reindex
// file moving it, the check of what a finished move guarantees, and the faults they inject.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import process from "node:process";
import { processGone } from "../../../../src/migrate/local_process.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import type { Fault, Received } from "../fault_server.ts";
import type { startAliasWriter } from "../alias_writer.ts";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests read freely
export type Json = any;

/** Creates `index` with `count` documents whose `price` is a string, and `alias` on it. */
export async function seed(index: string, alias: string, count: number): Promise<void> {
  const created = await os("PUT", `/${index}`, {
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "1s" },
    mappings: { properties: { seq: { type: "long" }, price: { type: "keyword" } } },
    aliases: { [alias]: { is_write_index: true } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  for (let start = 0; start < count; start += 10_000) {
    const lines: string[] = [];
    for (let seq = start; seq < Math.min(count, start + 10_000); seq++) {
      lines.push(JSON.stringify({ create: { _id: `s${seq}` } }));
      lines.push(JSON.stringify({ seq, price: `${seq % 1000}.5` }));
    }
    const response = await fetch(
      `${OPENSEARCH_URL}/${index}/_bulk`,
      {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: lines.join("\n") + "\n",
      },
    );
    const body = await response.json();
    assert.equal(body.errors, false, JSON.stringify(body.items?.find((i: Json) => i.create.error)));
  }
  await os("POST", `/${index}/_refresh`);
}

/**
 * Checks the guarantees: the alias on `index` only, as its write index; every document once; the
 * source write-blocked once the alias left it (a node that has not seen the move yet writes
 * there), else taking writes.
 */
export async function assertMoved(
  alias: string,
  source: string,
  index: string,
  seeded: number,
  writer?: ReturnType<typeof startAliasWriter>,
): Promise<void> {
  const members = await os("GET", `/_alias/${alias}`);
  assert.deepEqual(members.body, { [index]: { aliases: { [alias]: { is_write_index: true } } } });
  await os("POST", `/${index}/_refresh`);
  if (writer === undefined) {
    const total = await os("GET", `/${index}/_count`);
    assert.equal(total.body.count, seeded, "a document lost, or copied twice");
  } else await writer.checkMoved(index);
  const dup = await os("POST", `/${index}/_search`, {
    size: 0,
    aggs: { dup: { terms: { field: "seq", min_doc_count: 2, size: 1 } } },
  });
  assert.deepEqual(dup.body.aggregations.dup.buckets, [], "a document twice");
  const blocks = await os("GET", `/${source}/_settings/index.blocks.*`);
  if (blocks.status === 200) {
    const write = blocks.body[source]?.settings?.index?.blocks?.write;
    if (source === index) assert.equal(write, undefined, "still blocked");
    else assert.equal(write, "true", "the source takes writes after the swap");
  }
}

export const file = (
  ws: Workspace,
  alias: string,
  index: string,
  extra: Record<string, unknown> = {},
) =>
  ws.file("2-products-reindex.json", {
    alias,
    index,
    mappings: { properties: { seq: { type: "long" }, price: { type: "double" } } },
    // The field changes its type across the copy: keyword text becomes a number.
    script: { source: "ctx._source.price = Double.parseDouble(ctx._source.price)" },
    ...extra,
  });

/**
 * A workspace whose alias `<id>-p` is on `<id>-p-v1`, seeded with `count` documents, and a reindex
 * file moving it to `<id>-p-v2`.
 */
export async function moving(count: number, options: Parameters<typeof Workspace.create>[0] = {}) {
  const ws = await Workspace.create(options);
  const [alias, v1, v2] = [`${ws.id}-p`, `${ws.id}-p-v1`, `${ws.id}-p-v2`];
  await seed(v1, alias, count);
  await file(ws, alias, v2);
  return { ws, alias, v1, v2, [Symbol.asyncDispose]: () => ws[Symbol.asyncDispose]() };
}

/** A 4xx refusal of a request, as a fault server answers it. */
export const REFUSED: Fault = {
  status: 400,
  body: { error: { type: "illegal_argument", reason: "not now" } },
};

/**
 * The client's timeout in the tests whose only host swallows a request (forwards it, never
 * answers): it is waited out once there, and the node must beat it on every other request, an
 * index created on a loaded machine included.
 */
export const SWALLOWED_TIMEOUT = "    timeout: 5\n";

/** The swap: `POST /_aliases?cluster_manager_timeout=...`. */
export const isSwap = (r: Received) => r.method === "POST" && r.path.startsWith("/_aliases?");

export const takeOver = { identity: { host: hostname(), pid: process.pid, processGone } };
