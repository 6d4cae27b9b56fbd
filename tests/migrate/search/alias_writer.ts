import assert from "node:assert/strict";
import type { Fault, Received } from "./fault_server.ts";

type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: { [key: string]: unknown } | undefined }>;

/**
 * One of several writers sharing the seeded documents: writer `at` of `of` touches only those
 * whose number is `at` modulo `of`, and names the documents it creates apart from the others'.
 */
export interface Lane {
  readonly at: number;
  readonly of: number;
}

/** What `index` lacks of the acknowledged writes: ids created or updated, and ids deleted. */
export interface WrongWrites {
  /** Created or updated, and not in the index as the last acknowledged write left them. */
  readonly lost: readonly string[];
  /** Deleted, and in the index. */
  readonly back: readonly string[];
}

/**
 * An application writing through `alias` while a reindex moves it: one request at a time, in
 * turn it creates a document, overwrites one of the seeded documents (`<prefix>0` to
 * `<prefix><seeded-1>`, those of its `lane` only) and deletes another, each retried after 20 ms
 * while the cluster refuses it. Keeps what every acknowledged write leaves: `checkMoved` then finds
 * exactly that in the new index. `windowMs` is how long writes were refused, as the writer saw it:
 * from its first refusal to the first write accepted after the last one.
 */
export function startAliasWriter(
  call: Call,
  alias: string,
  seeded: number,
  prefix = "s",
  lane: Lane = { at: 0, of: 1 },
) {
  // Each document's `seq` as the last acknowledged write left it; null: deleted.
  const expected = new Map<string, number | null>();
  const mine = Math.floor((seeded - 1 - lane.at) / lane.of) + 1;
  let refused = 0, failed = 0, stopped = false, writes = 0;
  let firstRefusal: number | undefined, lastRefusal: number | undefined;
  let acceptedAfter: number | undefined;
  const counts = { created: 0, updated: 0, deleted: 0 };
  const done = (async () => {
    for (let n = 0; !stopped; n++) {
      const kind = n % 3;
      // Seeded documents in an order that touches some of them twice or more.
      const seededId = `${prefix}${((n * 7_919) % mine) * lane.of + lane.at}`;
      // Created ones are `w<n>` (`w<lane>-<n>` for a lane): a prefix of its own keeps them apart
      // from the seeded ones.
      const id = kind !== 0 ? seededId : lane.of === 1 ? `w${n}` : `w${lane.at}-${n}`;
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
    /** How many documents the acknowledged writes added: created ones less seeded ones deleted. */
    get added(): number {
      let added = 0;
      for (const [id, seq] of expected) {
        const seededOne = id.startsWith(prefix);
        if (seededOne && seq === null) added--;
        if (!seededOne) added++;
      }
      return added;
    },
    /** The documents `index` does not hold as the last acknowledged write left them. */
    async wrongIn(index: string): Promise<WrongWrites> {
      const lost: string[] = [], back: string[] = [];
      const ids = [...expected.keys()];
      for (let i = 0; i < ids.length; i += 1_000) {
        const batch = ids.slice(i, i + 1_000);
        const got = await call("POST", `/${index}/_mget`, { ids: batch });
        const docs = (got.body?.docs ?? []) as {
          _id: string;
          found: boolean;
          _source?: { seq: number };
        }[];
        assert.equal(docs.length, batch.length, JSON.stringify(got.body).slice(0, 300));
        for (const doc of docs) {
          const want = expected.get(doc._id);
          if (want === null && doc.found) back.push(doc._id);
          if (want !== null && doc._source?.seq !== want) lost.push(doc._id);
        }
      }
      return { lost, back };
    },
    /**
     * Checks `index` holds every seeded document the writer left alone, and each document it
     * wrote as its last acknowledged write left it: none deleted back, no update lost.
     */
    async checkMoved(index: string) {
      await checkAllMoved(call, index, seeded, [this]);
    },
  };
}

/**
 * Checks `index` holds the `seeded` documents as the `writers` (one lane each) left them: each
 * document as its last acknowledged write left it, none deleted back, nothing else. Says how many
 * are lost and back.
 */
export async function checkAllMoved(
  call: Call,
  index: string,
  seeded: number,
  writers: readonly {
    readonly added: number;
    wrongIn(index: string): Promise<WrongWrites>;
  }[],
): Promise<void> {
  await call("POST", `/${index}/_refresh`);
  const wrong = await Promise.all(writers.map((w) => w.wrongIn(index)));
  const lost = wrong.flatMap((w) => w.lost), back = wrong.flatMap((w) => w.back);
  assert.deepEqual(
    { lost: lost.length, back: back.length },
    { lost: 0, back: 0 },
    `${lost.length} acknowledged write(s) lost (${lost.slice(0, 5).join(", ")}), ` +
      `${back.length} deleted document(s) back (${back.slice(0, 5).join(", ")})`,
  );
  const alive = writers.reduce((sum, w) => sum + w.added, seeded);
  const total = await call("GET", `/${index}/_count`);
  assert.equal(total.body?.count, alive, "documents lost, or deleted ones back");
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
 * Waits until each of `writers` made `more` acknowledged writes after those it had made when
 * called; fails naming `what` if one has not after two minutes (a node that never answers again).
 */
export async function writtenMore(
  writers: readonly { readonly writes: number }[],
  more: number,
  what: string,
): Promise<void> {
  const targets = writers.map((w) => w.writes + more);
  const until = Date.now() + 120_000;
  while (writers.some((w, i) => w.writes < targets[i])) {
    if (Date.now() > until) {
      assert.fail(`${what}: writes ${writers.map((w) => w.writes)}, awaited ${targets}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
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
