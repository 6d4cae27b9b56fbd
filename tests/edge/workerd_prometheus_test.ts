// /actuator/prometheus on real workerd: a worker that hands OpenTelemetry's modules to actuator()
// (tests/fixtures/prometheus_worker.ts), bundled as tools/bundle_worker.ts bundles the sample app,
// answers the scrape with its request metrics and the app's own meter, in a text promtool accepts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";
import { WORKER_BUILD } from "../../tools/bundle_worker.ts";
import { freePort } from "../migrate/search/servers.ts";
import { until, WORKERD } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/prometheus_worker.ts", import.meta.url));

// Without nodejs_compat: the worker needs nothing of Node's.
const CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "prometheus", worker = .prometheus)],
  sockets = [(name = "prometheus", address = "127.0.0.1:0", http = (), service = "prometheus")],
);

const prometheus :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "prometheus_worker.js")],
  compatibilityDate = "2026-10-23",
);
`;

describe("/actuator/prometheus on workerd, with OpenTelemetry's modules passed to actuator()", () => {
  let dir: string;
  let origin: string;
  let child: ChildProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "thaw-workerd-prometheus-"));
    await build({
      ...WORKER_BUILD,
      entryPoints: [{ in: FIXTURE, out: "prometheus_worker" }],
      outdir: dir,
      minify: true,
      logLevel: "warning",
    });
    await stop();
    await writeFile(join(dir, "config.capnp"), CONFIG);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    child = spawn(WORKERD, [
      "serve",
      join(dir, "config.capnp"),
      "--socket-addr",
      `prometheus=127.0.0.1:${port}`,
    ], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (chunk) => output += chunk);
    child.stderr!.on("data", (chunk) => output += chunk);
    await until(`${origin}/actuator/health`, child, () => output);
  });

  after(async () => {
    child?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers the scrape: the request histogram by route and the app's counter", async () => {
    for (const id of [1, 2, 3]) {
      const item = await fetch(`${origin}/items/${id}`);
      assert.deepEqual([item.status, await item.json()], [200, { id }]);
    }
    const scrape = await fetch(`${origin}/actuator/prometheus`);
    assert.equal(scrape.status, 200);
    assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await scrape.text();
    assert.match(
      text,
      /^http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/items\/\{id\}",http_response_status_code="200",[^}]*\} 3$/m,
    );
    assert.match(text, /^orders_created_total\{[^}]*otel_scope_name="shop"[^}]*\} 3$/m);
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.error, undefined, "promtool must be installed (npm test installs it)");
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  });
});
