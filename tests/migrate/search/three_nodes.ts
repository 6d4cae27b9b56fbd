import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callNode } from "./cluster.ts";
import process from "node:process";

/**
 * The three-node cluster `tools/opensearch_cluster.sh start` runs (the README's test command starts
 * it), one JVM per node so that a test can hang one: `NODES[0]` is node-1.
 */
export const NODES: readonly string[] = [1, 2, 3].map((n) => `http://127.0.0.1:${9210 + n}`);

const PIDS = fileURLToPath(new URL("../../../.ci/opensearch/target/cluster", import.meta.url));

/** Calls one node of the cluster directly; `signal` gives up on the call. */
export function node(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): ReturnType<typeof callNode> {
  return callNode(url, method, path, body, "tools/opensearch_cluster.sh start", signal);
}

/** The pid of node `n` (1 to 3), as the start script wrote it. */
function pid(n: number): number {
  return Number(readFileSync(join(PIDS, `node-${n}.pid`), "utf8").trim());
}

/** Hangs node `n` as a stalled machine would: its JVM stops, its sockets stay open. */
export function hang(n: number): void {
  process.kill(pid(n), "SIGSTOP");
}

/** Resumes node `n`. */
export function resume(n: number): void {
  process.kill(pid(n), "SIGCONT");
}

/**
 * Waits until the cluster, asked through `via` (node-1 by default), has `count` nodes, and is
 * green if `green`.
 */
export async function waitForNodes(count: number, green = false, via = NODES[0]): Promise<void> {
  const status = green ? "&wait_for_status=green" : "";
  let last: unknown;
  for (let tries = 0; tries < 60; tries++) {
    const health = await node(
      via,
      "GET",
      `/_cluster/health?wait_for_nodes=${count}${status}&timeout=2s`,
    );
    if (health.status === 200 && health.body.number_of_nodes === count) return;
    last = health.body;
  }
  // Why a shard stays unassigned (a disk past its watermark, a node away) says what went wrong.
  const why = await node(via, "GET", "/_cluster/allocation/explain").catch((error) => error);
  assert.fail(
    `the cluster did not reach ${count} node(s)${green ? ", green" : ""}: ${
      JSON.stringify(last)
    }; ${JSON.stringify(why?.body ?? String(why)).slice(0, 2000)}`,
  );
}

/** Creates `index` (3 shards, 1 replica) holding documents `d0`..`d<count-1>`, with `alias` on it. */
export async function seedIndex(index: string, alias: string, count: number): Promise<void> {
  const created = await node(NODES[0], "PUT", `/${index}`, {
    settings: { number_of_shards: 3, number_of_replicas: 1 },
    mappings: { properties: { seq: { type: "long" } } },
    aliases: { [alias]: { is_write_index: true } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  for (let start = 0; start < count; start += 10_000) {
    const lines: string[] = [];
    for (let seq = start; seq < Math.min(count, start + 10_000); seq++) {
      lines.push(JSON.stringify({ create: { _id: `d${seq}` } }), JSON.stringify({ seq }));
    }
    const bulk = await node(NODES[0], "POST", `/${index}/_bulk`, lines.join("\n") + "\n");
    assert.equal(bulk.body.errors, false);
  }
  await node(NODES[0], "POST", `/${index}/_refresh`);
  await waitForNodes(3, true);
}

/**
 * Creates the records index as the runner would (one shard, a replica where a node has room) and
 * waits until the cluster is green: a node hung while the runner's own first write made it could
 * hold its only copy, and every run would then wait on it.
 */
export async function recordsReady(index: string): Promise<void> {
  const created = await node(NODES[0], "PUT", `/${index}`, {
    settings: { number_of_shards: 1, auto_expand_replicas: "0-1" },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  await waitForNodes(3, true);
}
