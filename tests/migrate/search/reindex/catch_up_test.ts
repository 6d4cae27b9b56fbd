import assert from "node:assert/strict";
import process from "node:process";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  checkpointOf,
  prune,
  rebase,
  refresh,
  shardSeqNos,
} from "../../../../src/migrate/search/reindex/catch_up.ts";
import type { Send } from "../../../../src/migrate/search/reindex/reindex_step.ts";
import { propertyOptions } from "../../../property.ts";
import { os } from "../cluster.ts";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests change freely
type Json = any;

// catch_up.ts against the real node: a source written, updated and deleted in every order between
// the copies, and a new index that must end holding exactly the source's documents, each as the
// source holds it, whatever their routing.

const send: Send = async (method, path, body, options) => {
  const response = await os(method, path, body);
  if (
    (response.status < 200 || response.status >= 300) &&
    !(options?.ok ?? []).includes(response.status)
  ) {
    throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response;
};

/** One write to the source: a document (id 0-39, routed one of two ways) written or deleted. */
const write = fc.record({
  id: fc.nat(39),
  delete: fc.boolean(),
  // A custom routing puts the document on another shard than its id would.
  routed: fc.boolean(),
});

/** Every document of `index`, id -> its `v`, read whole. */
async function contents(index: string): Promise<Map<string, unknown>> {
  await os("POST", `/${index}/_refresh`);
  const found = await os("POST", `/${index}/_search`, { size: 1_000, query: { match_all: {} } });
  return new Map(
    found.body.hits.hits.map((h: { _id: string; _source: { v: unknown } }) => [h._id, h._source.v]),
  );
}

let made = 0;

describe("prune and rebase on the real node", () => {
  it("leave the new index holding exactly the source, through writes, updates and deletes between copies", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { maxLength: 30 }),
        fc.array(fc.array(write, { maxLength: 15 }), { minLength: 1, maxLength: 3 }),
        fc.array(write, { maxLength: 10 }),
        async (seed, rounds, lastOnes) => {
          const source = `catchup-${process.pid}-${made}`;
          const index = `catchup-${process.pid}-${made++}-new`;
          for (const name of [source, index]) {
            const created = await os("PUT", `/${name}`, {
              settings: { number_of_shards: 3, number_of_replicas: 0 },
            });
            assert.equal(created.status, 200, JSON.stringify(created.body));
          }
          let version = 0;
          // Custom routing makes one id live on one shard only as long as it keeps its routing:
          // each id is routed one way for good, as an application does.
          const routing = new Map<number, boolean>();
          const apply = async (
            writes: readonly { id: number; delete: boolean; routed: boolean }[],
          ) => {
            for (const w of writes) {
              const routed = routing.get(w.id) ?? w.routed;
              routing.set(w.id, routed);
              const query = routed ? `?routing=r${w.id % 3}` : "";
              if (w.delete) await os("DELETE", `/${source}/_doc/d${w.id}${query}`);
              else await os("PUT", `/${source}/_doc/d${w.id}${query}`, { v: ++version });
            }
          };
          // What a catch-up does: the checkpoint, a refresh, the copy of everything after `after`.
          const catchUp = async (after: number | undefined) => {
            const checkpoint = checkpointOf((await shardSeqNos(send, source)).shards);
            await os("POST", `/${source}/_refresh`);
            const copied = await os("POST", "/_reindex?refresh=true", {
              source: {
                index: source,
                ...(after === undefined ? {} : { query: { range: { _seq_no: { gt: after } } } }),
              },
              dest: { index },
            });
            assert.equal(copied.status, 200, JSON.stringify(copied.body));
            return checkpoint;
          };
          try {
            await apply(seed);
            let since = await catchUp(undefined);
            const { baseline } = await prune(send, source, index, since);
            for (const round of rounds) {
              await apply(round);
              const next = await catchUp(since);
              await rebase(send, source, index, baseline, next);
              since = next;
            }
            // The block: no write after the last ones, which the last catch-up copies.
            await apply(lastOnes);
            await os("POST", `/${source}/_refresh`);
            await catchUp(since);
            await rebase(send, source, index, baseline, Infinity);
            assert.deepEqual(await contents(index), await contents(source));
          } finally {
            await os("DELETE", `/${source},${index}`);
          }
        },
      ),
      propertyOptions(15),
    );
  });

  it("count the documents written again since their copy apart from those the source deleted", async () => {
    const source = `catchup-${process.pid}-counts`;
    const index = `${source}-new`;
    // One shard: the checkpoint of several would leave documents of the shard ahead above it.
    for (const name of [source, index]) {
      await os("PUT", `/${name}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
    }
    const copy = async (after?: number) => {
      const checkpoint = checkpointOf((await shardSeqNos(send, source)).shards);
      await os("POST", `/${source}/_refresh`);
      await os("POST", "/_reindex?refresh=true", {
        source: {
          index: source,
          ...(after === undefined ? {} : { query: { range: { _seq_no: { gt: after } } } }),
        },
        dest: { index },
      });
      return checkpoint;
    };
    try {
      for (const id of ["a", "b", "c", "d"]) {
        await os("PUT", `/${source}/_doc/${id}?refresh=true`, { v: 1 });
      }
      const since = await copy();
      // After the checkpoint the prune reads up to: one written again, one deleted.
      await os("PUT", `/${source}/_doc/a?refresh=true`, { v: 2 });
      await os("DELETE", `/${source}/_doc/b?refresh=true`);
      const pruned = await prune(send, source, index, since);
      assert.deepEqual([pruned.deleted, pruned.recopied], [1, 1], "the prune");
      const next = await copy(since);
      await os("PUT", `/${source}/_doc/c?refresh=true`, { v: 2 });
      await os("DELETE", `/${source}/_doc/d?refresh=true`);
      const rebased = await rebase(send, source, index, pruned.baseline, next);
      assert.deepEqual([rebased.deleted, rebased.recopied], [1, 1], "the rebase");
      await copy(next);
      const last = await rebase(send, source, index, pruned.baseline, Infinity);
      assert.deepEqual([last.deleted, last.recopied], [0, 0], "the rebase under the block");
      assert.deepEqual(await contents(index), await contents(source));
    } finally {
      await os("DELETE", `/${source},${index}`);
    }
  });

  it("looks nothing up on the source to count re-copies where no shard wrote past the number", async () => {
    const source = `catchup-${process.pid}-blocked`;
    const index = `${source}-new`;
    for (const name of [source, index]) {
      await os("PUT", `/${name}`, { settings: { number_of_shards: 2, number_of_replicas: 0 } });
    }
    try {
      for (const id of ["a", "b", "c"]) await os("PUT", `/${source}/_doc/${id}?refresh=true`, {});
      await os("POST", "/_reindex?refresh=true", { source: { index: source }, dest: { index } });
      await os("DELETE", `/${source}/_doc/b?refresh=true`);
      // As under the write block: every write of the source is at or below the number.
      const lookups: string[] = [];
      const watched: Send = (method, path, body, options) => {
        const text = JSON.stringify(body ?? null);
        if (path.startsWith(`/${source}/`) && text.includes('"ids"')) lookups.push(path);
        return send(method, path, body, options);
      };
      const pruned = await prune(watched, source, index, Number.MAX_SAFE_INTEGER);
      assert.deepEqual([pruned.deleted, pruned.recopied], [1, 0]);
      assert.deepEqual(lookups, []);
      assert.deepEqual(await contents(index), await contents(source));
    } finally {
      await os("DELETE", `/${source},${index}`);
    }
  });

  it("fails on stats or a refresh that left a shard out, and on pages that never end", async () => {
    const source = `catchup-${process.pid}-stats`;
    await os("PUT", `/${source}`, { settings: { number_of_shards: 2, number_of_replicas: 0 } });
    await os("PUT", `/${source}/_doc/a?refresh=true`, { v: 1 });
    // Each answer the real node gives, changed as a sick cluster would change it.
    const changing = (path: string, change: (body: Json) => Json): Send => async (m, p, b, o) => {
      const answer = await send(m, p, b, o);
      return p.includes(path)
        ? { status: 200, body: change(structuredClone(answer.body)) }
        : answer;
    };
    try {
      const oneShardMissing = changing("/_stats", (body) => {
        delete body.indices[source].shards["1"];
        return body;
      });
      await assert.rejects(
        shardSeqNos(oneShardMissing, source),
        /list 1 primary shard\(s\) of 2/,
      );
      const failedCopy = changing("/_stats", (body) => ({ ...body, _shards: { failed: 1 } }));
      await assert.rejects(shardSeqNos(failedCopy, source), /failed on 1 shard copies/);
      const noUuid = changing("/_stats", (body) => {
        delete body.indices[source].uuid;
        return body;
      });
      await assert.rejects(shardSeqNos(noUuid, source), /give no uuid/);
      const refreshFailed = changing("/_refresh", () => ({ _shards: { total: 2, failed: 1 } }));
      await assert.rejects(refresh(refreshFailed, source), /refresh of \S+ failed on 1 shard/);
      // A page of 5,000 hits all numbered alike, again and again.
      const endless = changing("/_search", () => ({
        _shards: { total: 1, successful: 1, failed: 0 },
        hits: { hits: Array.from({ length: 5_000 }, (_, i) => ({ _id: `x${i}`, sort: [7] })) },
      }));
      await assert.rejects(prune(endless, source, source, 10), /came back out of order \(7\)/);
    } finally {
      await os("DELETE", `/${source}`);
    }
  });

  it("fails, deleting nothing, on a search answer that did not read every document", async () => {
    const source = `catchup-${process.pid}-partial`;
    const index = `${source}-new`;
    for (const name of [source, index]) {
      await os("PUT", `/${name}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
    }
    await os("PUT", `/${source}/_doc/a?refresh=true`, { v: 1 });
    await os("PUT", `/${index}/_doc/a?refresh=true`, { v: 1 });
    const partial: [string, unknown, RegExp][] = [
      [
        "a failed shard",
        { _shards: { total: 1, successful: 0, failed: 1 }, hits: { hits: [] } },
        /failed on 1 of 1 shard\(s\)/,
      ],
      [
        "a timed-out search",
        { _shards: { total: 1, successful: 1, failed: 0 }, timed_out: true, hits: { hits: [] } },
        /timed out/,
      ],
      ["a login page", "<html>sign in</html>", /answered without its shards and hits/],
      ["an empty object", {}, /answered without its shards and hits/],
    ];
    try {
      for (const [what, body, message] of partial) {
        const answering: Send = async (method, path, sent, options) => {
          const answer = await send(method, path, sent, options);
          return path.includes(`/${source}/_search`) ? { status: 200, body } : answer;
        };
        await assert.rejects(
          prune(answering, source, index, 10),
          new RegExp(`a search of ${source} ${message.source}`),
          what,
        );
        await os("POST", `/${index}/_refresh`);
        const kept = await os("GET", `/${index}/_count`);
        assert.equal(kept.body.count, 1, `${what}: the new index lost a document`);
      }
    } finally {
      await os("DELETE", `/${source},${index}`);
    }
  });
});
