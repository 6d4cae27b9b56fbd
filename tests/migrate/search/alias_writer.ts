import assert from "node:assert/strict";
import type { Fault, Received } from "./fault_server.ts";

type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: { [key: string]: unknown } | undefined }>;

/**
 * An application writing through `alias` while a reindex moves it: one request at a time, in
 * turn it creates a document, overwrites one of the seeded documents (`<prefix>0` to
 * `<prefix><seeded-1>`) and deletes another, each retried while the block refuses it, after 20 ms.
 * Keeps what every acknowledged write leaves: `checkMoved` then finds exactly that in the new
 * index. `windowMs` is how long writes were refused, as the writer saw it: from its first refusal
 * to the first write accepted after the last one.
 */
export function startAliasWriter(call: Call, alias: string, seeded: number, prefix = "s") {
  // Each document's `seq` as the last acknowledged write left it; null: deleted.
  const expected = new Map<string, number | null>();
  let refused = 0, failed = 0, stopped = false, writes = 0;
  let firstRefusal: number | undefined, lastRefusal: number | undefined;
  let acceptedAfter: number | undefined;
  const counts = { created: 0, updated: 0, deleted: 0 };
  const done = (async () => {
    for (let n = 0; !stopped; n++) {
      const kind = n % 3;
      // Seeded documents in an order that touches some of them twice or more.
      const seededId = `${prefix}${(n * 7_919) % seeded}`;
      // Created ones are `w<n>`: a prefix of its own keeps them apart from the seeded ones.
      const id = kind === 0 ? `w${n}` : seededId;
      const seq = 2_000_000 + n;
      for (;;) {
        const r = kind === 2
          ? await call("DELETE", `/${alias}/_doc/${id}`)
          : await call("PUT", `/${alias}/_doc/${id}`, { seq, price: "2.5" });
        // A delete of a document deleted already is done all the same.
        if (r.status === 200 || r.status === 201 || (kind === 2 && r.status === 404)) {
          expected.set(id, kind === 2 ? null : seq);
          writes++;
          if (lastRefusal !== undefined && acceptedAfter === undefined) {
            acceptedAfter = performance.now();
          }
          counts[kind === 0 ? "created" : kind === 1 ? "updated" : "deleted"]++;
          break;
        }
        if (r.status === 403 && JSON.stringify(r.body).includes("cluster_block_exception")) {
          refused++;
          firstRefusal ??= performance.now();
          lastRefusal = performance.now();
          acceptedAfter = undefined;
        } else failed++;
        if (stopped) return;
        // A client's back-off before it tries again; nothing in the test waits on it.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  })();
  return {
    counts,
    get writes() {
      return writes;
    },
    get refused() {
      return refused;
    },
    get failed() {
      return failed;
    },
    get windowMs() {
      return firstRefusal === undefined || acceptedAfter === undefined
        ? 0
        : acceptedAfter - firstRefusal;
    },
    async stop() {
      stopped = true;
      await done;
    },
    /**
     * Checks `index` holds every seeded document the writer left alone, and each document it
     * wrote as its last acknowledged write left it: none deleted back, no update lost.
     */
    async checkMoved(index: string) {
      await call("POST", `/${index}/_refresh`);
      // The seeded documents, less those deleted, and those created (never deleted).
      let alive = seeded;
      for (const [id, seq] of expected) {
        const seededOne = id.startsWith(prefix);
        if (seededOne && seq === null) alive--;
        if (!seededOne) alive++;
      }
      const total = await call("GET", `/${index}/_count`);
      assert.equal(total.body?.count, alive, "documents lost, or deleted ones back");
      const ids = [...expected.keys()];
      for (let i = 0; i < ids.length; i += 1_000) {
        const batch = ids.slice(i, i + 1_000);
        const got = await call("POST", `/${index}/_mget`, { ids: batch });
        const docs = (got.body?.docs ?? []) as {
          _id: string;
          found: boolean;
          _source?: { seq: number };
        }[];
        assert.equal(docs.length, batch.length);
        for (const doc of docs) {
          const want = expected.get(doc._id);
          if (want === null) assert.equal(doc.found, false, `${doc._id} was deleted, and is back`);
          else assert.equal(doc._source?.seq, want, `${doc._id} lacks its last update`);
        }
      }
    },
  };
}

/** Runs `run` while `writer` writes: from its 30th write on, until it made 30 more after. */
export async function whileWriting<T>(
  writer: { readonly writes: number; stop(): Promise<void> },
  run: () => Promise<T>,
): Promise<T> {
  while (writer.writes < 30) await new Promise((r) => setTimeout(r, 10));
  const result = await run();
  const moved = writer.writes;
  while (writer.writes < moved + 30) await new Promise((r) => setTimeout(r, 10));
  await writer.stop();
  return result;
}

/**
 * Notes, for a fault server in front of the runner (`see`, which forwards everything), how many
 * writes the application had made when the copy started and when the block came; `assertOrder`
 * then checks that writes went through between the two.
 */
export function copyThenBlock(writes: () => number) {
  let atCopy: number | undefined, atBlock: number | undefined;
  return {
    see(r: Received): Fault {
      if (r.method === "POST" && r.path.startsWith("/_reindex")) atCopy ??= writes();
      if (r.method === "PUT" && r.path.endsWith("/_block/write")) atBlock ??= writes();
      return "forward";
    },
    /** How many writes went through while the copy ran, asserted to be some. */
    assertOrder(): number {
      assert.ok(
        atCopy !== undefined && atBlock !== undefined && atBlock > atCopy,
        `writes went through while the copy ran (${atCopy} then ${atBlock})`,
      );
      return atBlock - atCopy;
    },
  };
}
