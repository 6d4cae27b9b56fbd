/**
 * What a `SearchClient` bean of `search()` costs per request over the bare official client, in
 * the same run, on the runtime that runs this file (`npm run bench:search` runs it on Deno, Bun
 * and Node 26 against the node of `tools/opensearch.sh start`):
 *
 *   deno run -A bench/search_bean.ts [--batches 20] [--batch 300] [--built]
 *
 * Two contestants make the same calls on one small index: the bean (the official client over the
 * runner's transport and authentication) and `new Client({ node })` as the client's own
 * documentation writes it (its node:http connection). Two calls: a `get` of one document by id,
 * and a `search` matching a term. Each round makes `batch` calls with each contestant, in slices of
 * 25 that take turns (the first swapped every round); CPU time of this process
 * (`process.cpuUsage()`, the node's is not counted) and wall time per call. Reported per call: the
 * medians of µs per call of each, and the median of the ratio bean / bare of the same round.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { Client } from "@opensearch-project/opensearch";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "20" },
    batch: { type: "string", default: "300" },
    built: { type: "boolean", default: false },
  },
});
// `--built`: Thaw as the npm package has it (`npm run pack` builds it into dist/npm), the
// JavaScript Node users run, in place of the TypeScript sources through the runtime's loader (on
// Node, tsx wraps every function made inside another with a call that names it).
const from = values.built ? "../dist/npm/" : "../";
const ext = values.built ? ".js" : ".ts";
const { bootstrap } = await import(`${from}mod${ext}`) as typeof import("../mod.ts");
const { search, SearchClient } = await import(
  `${from}search${ext}`
) as typeof import("../search.ts");
const batches = Number(values.batches);
const batch = Number(values.batch);
if (!Number.isInteger(batches) || batches < 2 || !Number.isInteger(batch) || batch < 2) {
  console.error("search_bean.ts: --batches and --batch must be whole numbers of at least 2");
  process.exit(2);
}

const NODE = process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9200";
const INDEX = `bench-bean-${crypto.randomUUID().slice(0, 8)}`;
const DOCS = 50;
// Calls of one contestant before the other takes its turn.
const SLICE = 25;

type Call = (client: Client, i: number) => Promise<unknown>;
const CALLS: Record<string, Call> = {
  get: (client, i) => client.get({ index: INDEX, id: String(i % DOCS) }),
  search: (client, i) =>
    client.search({ index: INDEX, body: { query: { match: { title: `word${i % 7}` } } } }),
};

const runtimes = globalThis as unknown as {
  Bun?: { version: string };
  Deno?: { version: { deno: string } };
};
const runtime = runtimes.Bun !== undefined
  ? `Bun ${runtimes.Bun.version}`
  : runtimes.Deno !== undefined
  ? `Deno ${runtimes.Deno.version.deno}`
  : `Node ${process.versions.node}`;

const app = await bootstrap({
  config: { search: [{ name: "main", hosts: NODE }] },
  search: search(),
});
const bean = app.getBean(SearchClient) as unknown as Client;
const bare = new Client({ node: NODE });
try {
  await bare.indices.create({
    index: INDEX,
    body: { settings: { number_of_shards: 1, number_of_replicas: 0 } },
  });
  await bare.bulk({
    refresh: true,
    body: Array.from({ length: DOCS }, (_, i) => [
      { index: { _index: INDEX, _id: String(i) } },
      { title: `word${i % 7} word${i % 3}`, n: i },
    ]).flat(),
  });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  type Who = "bean" | "bare";
  const clients: Record<Who, Client> = { bean, bare };
  // One round: `batch` calls of each, in slices of SLICE that take turns, so that a pause of the
  // machine or of the node (a merge, a collection) falls on both alike; CPU and wall time summed
  // per contestant.
  const round = async (call: Call, first: Who) => {
    const cpu = { bean: 0, bare: 0 };
    const wall = { bean: 0, bare: 0 };
    const order: Who[] = first === "bean" ? ["bean", "bare"] : ["bare", "bean"];
    for (let done = 0; done < batch; done += SLICE) {
      const calls = Math.min(SLICE, batch - done);
      for (const who of order) {
        const used = process.cpuUsage();
        const since = performance.now();
        for (let i = done; i < done + calls; i++) await call(clients[who], i);
        const spent = process.cpuUsage(used);
        cpu[who] += spent.user + spent.system;
        wall[who] += (performance.now() - since) * 1000;
      }
      order.reverse();
    }
    return { cpu, wall };
  };
  console.log(
    `${runtime}${
      values.built ? " (built package)" : ""
    }: ${batches} rounds of ${batch} calls each against ${NODE}`,
  );
  for (const [name, call] of Object.entries(CALLS)) {
    // Warm both, so that neither pays for the first connections and the JIT alone.
    await round(call, "bean");
    const rows = { bean: [] as number[], bare: [] as number[], ratio: [] as number[] };
    const walls = { bean: [] as number[], bare: [] as number[] };
    for (let r = 0; r < batches; r++) {
      const { cpu, wall } = await round(call, r % 2 === 0 ? "bean" : "bare");
      rows.bean.push(cpu.bean / batch);
      rows.bare.push(cpu.bare / batch);
      rows.ratio.push(cpu.bean / cpu.bare);
      walls.bean.push(wall.bean / batch);
      walls.bare.push(wall.bare / batch);
    }
    console.log(
      `  ${name.padEnd(6)} CPU µs/call: bean ${median(rows.bean).toFixed(0)}, bare ${
        median(rows.bare).toFixed(0)
      }, ratio ${median(rows.ratio).toFixed(2)}; wall µs/call: bean ${
        median(walls.bean).toFixed(0)
      }, bare ${median(walls.bare).toFixed(0)}`,
    );
  }
} finally {
  await bare.indices.delete({ index: INDEX }, { ignore: [404] });
  await bare.close();
  await app.close();
}
