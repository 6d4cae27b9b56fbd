/**
 * How the search runner scales with the number of files: 1,000 files applied, then the same
 * 1,000 files re-run unchanged, against the OpenSearch node of the tests (tools/opensearch.sh).
 * Prints the requests each run sent, its wall time, and the runner's own time: wall time less the
 * time spent waiting for the cluster's answers (the requests are sent one after the other). The
 * unchanged run is the one to watch: it must read the records in O(1) requests, not one per file.
 *
 *   deno run -A bench/search_runner_scale.ts [files]
 *
 * Each file is an envelope indexing one small document, so the figures measure the runner (plan,
 * records, lock, one request per file) rather than cluster-state updates of templates.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runCli } from "../src/migrate/cli/cli_main.ts";
import type { TransportFactory } from "../src/migrate/search/http/transport.ts";
import { searchDriver } from "../src/migrate/search/search_driver.ts";
import { recording, type Sent, writes } from "../tests/migrate/search/cluster.ts";

/** Adds the time from each request's start to its answer's headers to `waited.ms`. */
function timing(waited: { ms: number }, inner: TransportFactory): TransportFactory {
  return async (options) => {
    const transport = await inner(options);
    return {
      fetch: async (url, init, via) => {
        const started = performance.now();
        try {
          return await transport.fetch(url, init, via);
        } finally {
          waited.ms += performance.now() - started;
        }
      },
      close: () => transport.close(),
    };
  };
}

const count = Number(process.argv[2] ?? 1000);
if (!Number.isInteger(count) || count < 1) {
  console.error(`search_runner_scale.ts: the file count must be a positive whole number`);
  process.exit(2);
}
const url = process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9200";
const id = `scale${crypto.randomUUID().slice(0, 6)}`;
const base = await mkdtemp(join(tmpdir(), "thaw-scale-"));
const config = join(base, "config"), root = join(base, "migrations");
await mkdir(config, { recursive: true });
await mkdir(join(root, id, "docs"), { recursive: true });
await writeFile(
  join(config, "application.yml"),
  `search:\n  - name: ${id}\n    hosts: ["${url}"]\n    migrations: {enabled: true, index: fm_${id}}\n`,
);
for (let i = 0; i < count; i++) {
  const body = { method: "PUT", path: `/${id}/_doc/${i}`, body: { n: i } };
  await writeFile(
    join(root, id, "docs", `${String(i).padStart(5, "0")}.json`),
    JSON.stringify(body),
  );
}

async function run(label: string) {
  const sent: Sent[] = [];
  const waited = { ms: 0 };
  const started = performance.now();
  const code = await runCli(["-m", "search", "-c", config, "--migrations", root], {
    out: () => {},
    err: () => {},
    env: (name) => process.env[name],
    identity: { host: "bench", pid: process.pid },
    drivers: { search: searchDriver({ transport: timing(waited, recording(sent)) }) },
  });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${label}: exit ${code}`);
  console.log(
    `${label.padEnd(22)} ${String(sent.length).padStart(6)} requests (${
      writes(sent).length
    } writes)  ${(ms / 1000).toFixed(2)} s wall, ${((ms - waited.ms) / 1000).toFixed(2)} s ` +
      `runner (the rest waiting for the cluster)`,
  );
  return { requests: sent.length, ms };
}

console.log(`Search runner against ${url}: ${count} files, connection ${id}`);
const first = await run("first run (apply all)");
const second = await run("second run (unchanged)");
console.log(
  `second/first: ${(second.requests / first.requests).toFixed(4)} of the requests, ${
    (second.ms / first.ms).toFixed(4)
  } of the time`,
);
await fetch(`${url}/${id},fm_${id}`, { method: "DELETE" }).then((r) => r.body?.cancel());
await rm(base, { recursive: true, force: true });
