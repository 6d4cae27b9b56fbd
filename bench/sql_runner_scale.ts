/**
 * How the SQL runner scales with the number of files, on SQLite (the runtime's own, no server):
 * 1,000 files applied, then the same 1,000 files re-run unchanged. Prints each run's wall time and
 * what it applied and skipped; the re-run reads the history table once and runs no file.
 *
 *   deno run -A bench/sql_runner_scale.ts [files]
 *
 * Each file creates a small table and inserts a row, so the figures measure the runner (read,
 * hash, plan, one transaction and one history row per file) rather than the database's work.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runCli } from "../src/migrate/cli/cli_main.ts";
import type { RunReport } from "../src/migrate/run_report.ts";

const count = Number(process.argv[2] ?? 1000);
if (!Number.isInteger(count) || count < 1) {
  console.error(`sql_runner_scale.ts: the file count must be a positive whole number`);
  process.exit(2);
}
const base = await mkdtemp(join(tmpdir(), "thaw-sql-scale-"));
const config = join(base, "config"), root = join(base, "migrations");
await mkdir(config, { recursive: true });
await mkdir(join(root, "main"), { recursive: true });
await writeFile(
  join(config, "application.yml"),
  `datasource:\n  - name: main\n    url: sqlite:${join(base, "bench.db")}\n` +
    `    migrations: {enabled: true}\n`,
);
for (let i = 0; i < count; i++) {
  const n = String(i).padStart(5, "0");
  await writeFile(
    join(root, "main", `V${n}__table_${n}.sql`),
    `CREATE TABLE t_${n} (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n` +
      `INSERT INTO t_${n} (name) VALUES ('row ${n}');\n`,
  );
}

async function run(label: string): Promise<number> {
  let out = "";
  const started = performance.now();
  const code = await runCli(["-c", config, "--migrations", root, "--json"], {
    out: (text) => out += text,
    err: () => {},
    env: (name) => process.env[name],
    identity: { host: "bench", pid: process.pid },
  });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${label}: exit ${code}\n${out}`);
  const report = JSON.parse(out) as RunReport;
  const { applied, skipped } = report.connections[0];
  console.log(
    `${label.padEnd(22)} ${String(applied).padStart(5)} applied ${
      String(skipped).padStart(5)
    } skipped  ${(ms / 1000).toFixed(2)} s`,
  );
  return ms;
}

console.log(`SQL runner on SQLite: ${count} files`);
const first = await run("first run (apply all)");
const second = await run("second run (unchanged)");
console.log(`second/first: ${(second / first).toFixed(4)} of the time`);
await rm(base, { recursive: true, force: true });
