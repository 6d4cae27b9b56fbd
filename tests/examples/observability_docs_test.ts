// integration test: promtool, from Debian's prometheus package
// The blocks of the observability pages that are not TypeScript, checked by what reads them: the
// PromQL by promtool as rules, the scrape job by promtool as a configuration, the management
// keys by bootstrap, the access-log line against what the log writes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { loadConfig } from "../../config.ts";
import { accessLogLine } from "../../src/observe/access_log.ts";
import { ecsFields } from "../../src/logging/access_log_feature.ts";
import { tempDir } from "../temp_dir.ts";
import { fencedBlocks } from "./doc_blocks.ts";

function promtool(args: string[]): void {
  const run = spawnSync("promtool", args, { encoding: "utf8" });
  assert.equal(run.error, undefined, "promtool must be installed (npm test installs it)");
  assert.equal(run.status, 0, `promtool ${args.join(" ")}: ${run.stdout}${run.stderr}`);
}

describe("the observability docs' other blocks", () => {
  it("give PromQL and a scrape job that promtool accepts", async () => {
    await using dir = await tempDir("thaw-promql-");
    const queries = fencedBlocks("docs/observability.md", "promql")
      .flatMap((block) => block.split(/\n\s*\n/)).map((q) => q.trim()).filter((q) => q !== "");
    assert.ok(queries.length >= 3, `found ${queries.length} queries`);
    const rules = [
      "groups:",
      "  - name: docs",
      "    rules:",
      ...queries.flatMap((query, i) => [
        `      - record: docs:query_${i}`,
        `        expr: ${JSON.stringify(query.replace(/\s+/g, " "))}`,
      ]),
      "",
    ].join("\n");
    await writeFile(join(dir.path, "rules.yml"), rules);
    promtool(["check", "rules", join(dir.path, "rules.yml")]);
    const [scrape] = fencedBlocks("docs/observability.md", "yaml");
    assert.match(scrape, /metrics_path: \/actuator\/prometheus/);
    await writeFile(join(dir.path, "prometheus.yml"), scrape);
    promtool(["check", "config", join(dir.path, "prometheus.yml")]);
  });

  it("give management keys that bootstrap takes", async () => {
    const [keys] = fencedBlocks("docs/operations.md", "yaml").filter((b) => b.includes("server:"));
    await using dir = await tempDir("thaw-management-");
    await writeFile(join(dir.path, "application.yml"), keys);
    const config = await loadConfig(join(dir.path, "application.yml"));
    await bootstrap({ config, actuator: actuator() });
  });

  it("give a forward-headers strategy that bootstrap takes", async () => {
    const [keys] = fencedBlocks("docs/observability.md", "yaml").filter((b) =>
      b.includes("forward-headers-strategy")
    );
    await using dir = await tempDir("thaw-forward-");
    await writeFile(join(dir.path, "application.yml"), keys);
    const config = await loadConfig(join(dir.path, "application.yml"));
    const app = await bootstrap({ config });
    assert.deepEqual(app.config, { server: { "forward-headers-strategy": "framework" } });
  });

  it("show an access-log line as the log writes it", () => {
    const [block] = fencedBlocks("docs/observability.md", "json");
    const shown = JSON.parse(block);
    // Every field the log writes, in its order (bytes and trace_id where known).
    assert.deepEqual(Object.keys(shown), [
      "time",
      "method",
      "route",
      "path",
      "status",
      "duration_ms",
      "bytes",
      "trace_id",
      "client_address",
      "user_agent",
    ]);
    assert.deepEqual(JSON.parse(accessLogLine(shown)), shown);
  });

  it("show the access log's ECS line with the fields the log names", () => {
    const [block] = fencedBlocks("docs/observability.md", "json").filter((b) =>
      b.includes('"event.duration"')
    );
    const shown = JSON.parse(block);
    const entry = {
      time: shown["event.start"],
      method: shown["http.request.method"],
      route: shown["http.route"],
      path: shown["url.path"],
      status: shown["http.response.status_code"],
      duration_ms: shown["event.duration"] / 1e6,
      bytes: shown["http.response.body.bytes"],
      user_agent: shown["user_agent.original"],
    };
    const fixed = [
      "@timestamp",
      "log.level",
      "process.pid",
      "log.logger",
      "message",
      "ecs.version",
    ];
    assert.deepEqual(
      Object.fromEntries(Object.entries(shown).filter(([key]) => !fixed.includes(key))),
      ecsFields(entry),
    );
    assert.equal(shown.message, `${entry.method} ${entry.path} ${entry.status}`);
  });
});
